import Testing
@testable import StepKit

/// The FHIR importer's own guarantees: bounded walks, every problem at once, FHIR's `!=`, the
/// export's typed answers.
@Suite struct FHIRTests {
    private func importTask(_ text: String) throws -> Task {
        try FHIRImporter.compile(try json(text), options: FHIRImportOptions()).task
    }

    @Test func deepNestingIsRefusedNotRecursedInto() throws {
        var item = #"{"linkId": "leaf", "type": "string"}"#
        for i in 0..<40 { item = #"{"linkId": "g\#(i)", "type": "group", "item": [\#(item)]}"# }
        let q = try json(#"{"resourceType": "Questionnaire", "item": [\#(item)]}"#)
        do {
            _ = try FHIRImporter.translate(q)
            Issue.record("a 41-level Questionnaire was accepted")
        } catch {
            #expect(error.status == .definition)
            #expect(error.problems.contains { $0.code == "tooDeep" })
        }
    }

    @Test func notEqualsHoldsWhileUnanswered() throws {
        let task = try importTask("""
        {"resourceType": "Questionnaire", "item": [{"linkId": "g", "type": "group", "item": [
          {"linkId": "q", "type": "integer"},
          {"linkId": "n", "type": "string", "enableWhen": [{"question": "q", "operator": "!=", "answerInteger": 3}]}]}]}
        """)
        var s = Session(task: task, options: SessionOptions())
        #expect(s.isVisible("n", step: 0))
        try s.setAnswer(try json(#"{"q": 3}"#))
        #expect(!s.isVisible("n", step: 0))
        try s.setAnswer(try json(#"{"q": 4}"#))
        #expect(s.isVisible("n", step: 0))
    }

    @Test func exportTypesAnswersAndLeavesDisabledItemsOut() throws {
        let task = try importTask("""
        {"resourceType": "Questionnaire", "id": "t", "item": [
          {"linkId": "t", "type": "time"},
          {"linkId": "d", "type": "dateTime", "enableWhen": [{"question": "t", "operator": "exists", "answerBoolean": true}]},
          {"linkId": "x", "type": "string", "enableWhen": [{"question": "t", "operator": "exists", "answerBoolean": false}]}]}
        """)
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(.string("08:30"))
        try s.goForward()
        try s.setAnswer(.string("2026-01-02T10:30Z"))
        try s.goForward()
        guard let layout = task.fhir, case .object(let r) = s.fhirResponse(layout) else {
            Issue.record("no response")
            return
        }
        #expect(r["status"] == .string("completed"))
        #expect(r["questionnaire"] == .string("Questionnaire/t"))
        let items = r["item"]?.arrayValue ?? []
        #expect(items.count == 2)
        #expect(items.first?.objectValue?["answer"] == .array([.object(["valueTime": .string("08:30:00")])]))
        #expect(items.last?.objectValue?["answer"] == .array([.object(["valueDateTime": .string("2026-01-02T10:30:00Z")])]))
    }
}
