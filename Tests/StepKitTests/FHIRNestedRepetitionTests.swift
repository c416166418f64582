import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A repeating group inside a repeating group in a FHIR Questionnaire (issue 31): medications,
/// and for each its doses. Our own fixture, written from R4's rules (Questionnaire.item.repeats,
/// the questionnaire-minOccurs / maxOccurs extensions) and what R4 says a QuestionnaireResponse
/// is: a repeating group answered as one response item per repetition, its children's items
/// inside each repetition, at every level; a repeating question's answers repeated on its one
/// item.
@Suite struct FHIRNestedRepetitionTests {
    static let occurs = "http://hl7.org/fhir/StructureDefinition/questionnaire-"
    static let medications = """
    {"resourceType": "Questionnaire", "status": "active", "url": "http://example.org/q/meds", "item": [
      {"linkId": "med", "text": "Medication", "type": "group", "repeats": true, "extension": [
        {"url": "\(occurs)minOccurs", "valueInteger": 1}, {"url": "\(occurs)maxOccurs", "valueInteger": 3}], "item": [
        {"linkId": "name", "text": "Name", "type": "string", "required": true},
        {"linkId": "dose", "text": "Dose", "type": "group", "repeats": true, "extension": [
          {"url": "\(occurs)minOccurs", "valueInteger": 1}, {"url": "\(occurs)maxOccurs", "valueInteger": 2}], "item": [
          {"linkId": "amount", "text": "Amount (mg)", "type": "decimal", "required": true},
          {"linkId": "note", "text": "Note", "type": "string", "repeats": true}]}]}]}
    """

    static func items(_ container: JSONObject?, _ linkId: String) -> [JSONObject] {
        (container?["item"]?.arrayValue ?? []).compactMap(\.objectValue).filter { $0["linkId"] == .string(linkId) }
    }

    func divergences(_ submission: JSON, _ task: Task) throws -> [String] {
        let report = try Verification.verify(submission, task: task, options: VerifyOptions())
        return report.objectValue?["divergences"]?.arrayValue?.compactMap { $0.objectValue?["code"]?.stringValue } ?? []
    }

    @Test func nestedRepetitionsWalkAndTheResponseNestsAsR4Says() throws {
        let (task, report, _) = try FHIRImporter.compile(try json(Self.medications), options: FHIRImportOptions())
        // Nothing asked once: no repeatingGroup entry, and no nestedRepeatingGroup any more.
        #expect(report.entries.map { $0.linkId + " " + $0.code } == [])
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        // minOccurs at each level: one medication, one dose in it, before anything is added.
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["med.dose"]?.objectValue?["count"] == .int(1))
        try s.addInstance("med.dose")
        // maxOccurs of the doses (2), in this medication.
        #expect(throws: StepKitError.self) { try s.addInstance("med.dose") }
        try s.addInstance("med")
        try s.setAnswer(try json(#"{"med": [{"name": "Aspirin", "dose": [{"amount": 100, "note": ["with food", "mornings"]}, {"amount": 50}]}, {"name": "Iron", "dose": [{}]}]}"#))
        // R4: a required item is answered in each repetition: Iron's dose has no amount.
        #expect(throws: StepKitError.self) { try s.goForward() }
        try s.setAnswer(try json(#"{"med": [{}, {"dose": [{"amount": 65}]}]}"#))
        try s.goForward()
        #expect(s.finishReason == .completed)

        let response = s.fhirResponse(try #require(task.fhir))
        let root = response.objectValue
        #expect(root?["status"] == .string("completed"))
        // One item per medication, in order; in each, one item per dose, in order.
        let meds = Self.items(root, "med")
        #expect(meds.count == 2)
        #expect(meds.map { Self.items($0, "name").first?["answer"] } == [try json(#"[{"valueString": "Aspirin"}]"#), try json(#"[{"valueString": "Iron"}]"#)])
        let aspirin = Self.items(meds[0], "dose"), iron = Self.items(meds[1], "dose")
        #expect(aspirin.count == 2 && iron.count == 1)
        #expect(aspirin.map { Self.items($0, "amount").first?["answer"] } == [try json(#"[{"valueDecimal": 100}]"#), try json(#"[{"valueDecimal": 50}]"#)])
        #expect(Self.items(iron[0], "amount").first?["answer"] == (try json(#"[{"valueDecimal": 65}]"#)))
        // The repeating question: its answers repeated on its one item, in its dose.
        #expect(Self.items(aspirin[0], "note").count == 1)
        #expect(Self.items(aspirin[0], "note").first?["answer"] == (try json(#"[{"valueString": "with food"}, {"valueString": "mornings"}]"#)))
        #expect(Self.items(aspirin[1], "note").isEmpty)
        // No repetition carries an answer of its own (groups have items, not answers).
        #expect((meds + aspirin + iron).allSatisfy { $0["answer"] == nil })

        // Verify replays the response it produced, and the result: nothing diverges.
        #expect(try divergences(response, task) == [])
        #expect(try divergences(s.resultJSON(), task) == [])
        // A forged response: a third dose where maxOccurs is 2 is refused.
        let third = try json(#"{"linkId": "dose", "text": "Dose", "item": [{"linkId": "amount", "text": "Amount (mg)", "answer": [{"valueDecimal": 1}]}]}"#)
        var forged = try #require(root)
        var medList = try #require(forged["item"]?.arrayValue)
        var first = try #require(medList[0].objectValue)
        first["item"] = .array((first["item"]?.arrayValue ?? []) + [third])
        medList[0] = .object(first)
        forged["item"] = .array(medList)
        #expect(try divergences(.object(forged), task).contains("answerRefused"))
        // A dose's amount moved up into its medication: not an item of the medication.
        let moved = try json(JSONWriter.string(response).replacing(#"{"linkId":"name","text":"Name","answer":[{"valueString":"Iron"}]}"#,
                                                                   with: #"{"linkId":"name","text":"Name","answer":[{"valueString":"Iron"}]},{"linkId":"amount","answer":[{"valueDecimal":65}]}"#))
        #expect(moved != response)
        #expect(try divergences(moved, task).contains("unknownIdentifier"))
    }

    @Test func aNestedGroupWhoseItemsAConditionReadsIsAskedOnceAndReported() throws {
        // An enableWhen outside reads a dose's amount: expressions do not read inside an inner
        // group, so the doses are asked once per medication, reported by name.
        let q = Self.medications.replacing(#"{"linkId": "note", "text": "Note", "type": "string", "repeats": true}]}]}]}"#,
                                           with: #"{"linkId": "note", "text": "Note", "type": "string", "repeats": true}]}]}, {"linkId": "why", "type": "string", "enableWhen": [{"question": "amount", "operator": "exists", "answerBoolean": true}]}]}"#)
        #expect(q != Self.medications)
        let (_, report, _) = try FHIRImporter.compile(try json(q), options: FHIRImportOptions())
        #expect(report.entries.map { $0.linkId + " " + $0.code }.contains("dose repeatingGroup"))
        #expect(!report.entries.contains { $0.code == "nestedRepeatingGroup" })
    }
}
