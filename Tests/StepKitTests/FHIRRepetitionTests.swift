import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// FHIR repeating groups with calculations, repeating questions and nested groups (issue 31).
/// Every expectation is worked out from the specifications, never read off the engine:
/// - SDC (`calculatedExpression`, `variable`): an expression is evaluated with its item as the
///   context, so inside a repeating group in the item's own repetition, and a variable on the
///   group reads `item` as that repetition's children; `%resource` is the whole response, so
///   `%resource.item.where(linkId='G')` is every repetition of G;
/// - R4 `Questionnaire.item.repeats`: a repeating group is several response items with the same
///   linkId, one per repetition, in order; a repeating question has several `answer`s;
/// - R4 `enableWhen.question`: inside a repetition, a sibling's answer is that repetition's
///   (the ancestor axis); a disabled item has no answer ("SHALL NOT have answers");
/// - `questionnaire-minOccurs` / `maxOccurs`: how many repetitions (or answers) there must and
///   may be; `required` on a repeating group means at least one repetition.
@Suite struct FHIRRepetitionTests {
    /// The loop scenario written from the specifications (`Tests/fixtures/fhir-loop.json`): a
    /// repeated group with nested questions, an enableWhen inside, a value calculated per
    /// repetition from the group's variables, a repeating question, and a count and a sum over
    /// the repetitions through `%resource`.
    static let loop = readFile(repositoryRoot + "Tests/fixtures/fhir-loop.json") ?? ""

    static func items(_ response: JSON, _ linkId: String) -> [JSONObject] {
        (response.objectValue?["item"]?.arrayValue ?? []).compactMap(\.objectValue).filter { $0["linkId"] == .string(linkId) }
    }

    static func answers(_ item: JSONObject, _ linkId: String) -> JSON? {
        item["item"]?.arrayValue?.compactMap(\.objectValue).first { $0["linkId"] == .string(linkId) }?["answer"]
    }

    @Test func theLoopScenarioComputesPerRepetitionAndCountsRepetitions() throws {
        let (task, report, _) = try FHIRImporter.compile(try json(Self.loop), options: FHIRImportOptions())
        // Nothing asked once or lost: no repeatingGroup / repeatingAnswer entry; "mg a day" is
        // read-only, so it is computed, not shown (one value per repetition).
        #expect(report.entries.map { $0.linkId + " " + $0.code } == ["perDay valueNotShown"])
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        // required: at least one repetition from the start.
        let block = try #require(s.stateJSON().objectValue?["instances"]?.objectValue?["meds"]?.objectValue)
        #expect(block["count"] == .int(1) && block["maxCount"] == .int(4))
        try s.addInstance("meds")
        try s.addInstance("meds")
        try s.setAnswer(try json(#"""
        {"meds": [{"name": "Aspirin", "dose": 100, "daily": true, "times": 2, "notes": ["with food", "mornings"]},
                  {"name": "Ibuprofen", "dose": 200, "daily": false, "times": 3},
                  {"name": "Vitamin D", "daily": true, "times": 1, "notes": ["winter"]}]}
        """#))
        // times is disabled in the second repetition only (daily is false there).
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["meds"]?.objectValue?["hidden"] == (try json(#"[[], ["times"], []]"#)))
        // maxOccurs 4: a fourth repetition may be added, a fifth not.
        try s.addInstance("meds")
        #expect(throws: StepKitError.self) { try s.addInstance("meds") }
        try s.removeInstance("meds", at: 3)
        // maxOccurs 3 on the repeating question, in each repetition.
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"meds": [{"notes": ["a", "b", "c", "d"]}]}"#)) }
        try s.goForward()
        try s.setAnswer(try json(#"{"complete": true}"#))
        try s.goForward()
        #expect(s.finishReason == .completed)

        let response = s.fhirResponse(try #require(task.fhir))
        #expect(response.objectValue?["status"] == .string("completed"))
        let reps = Self.items(response, "meds")
        // One response item per repetition, in order.
        #expect(reps.count == 3)
        #expect(reps.map { Self.answers($0, "name") } == [try json(#"[{"valueString": "Aspirin"}]"#), try json(#"[{"valueString": "Ibuprofen"}]"#),
                                                          try json(#"[{"valueString": "Vitamin D"}]"#)])
        // perDay = dose × times in each repetition where it is enabled: 100 × 2; disabled in the
        // second (no answer, no item); the third has no dose, so FHIRPath's empty: no answer.
        #expect(Self.answers(reps[0], "perDay") == (try json(#"[{"valueDecimal": 200}]"#)))
        #expect(reps[1]["item"]?.arrayValue?.compactMap { $0.objectValue?["linkId"]?.stringValue } == ["name", "dose", "daily"])
        #expect(Self.answers(reps[2], "perDay") == nil)
        // The repeating question: its answers repeated on the one item, in order.
        #expect(Self.answers(reps[0], "notes") == (try json(#"[{"valueString": "with food"}, {"valueString": "mornings"}]"#)))
        #expect(Self.answers(reps[2], "notes") == (try json(#"[{"valueString": "winter"}]"#)))
        // The count over repetitions (3) and the sum of every repetition's dose (100 + 200).
        let summary = try #require(Self.items(response, "summary").first)
        #expect(Self.answers(summary, "total") == (try json(#"[{"valueInteger": 3}]"#)))
        #expect(Self.answers(summary, "totalDose") == (try json(#"[{"valueDecimal": 300}]"#)))

        // Verify replays both the response and the result through the task: nothing diverges,
        // and a forged per-repetition value is found.
        func divergences(_ submission: JSON) throws -> [String] {
            let report = try Verification.verify(submission, task: task, options: VerifyOptions())
            return report.objectValue?["divergences"]?.arrayValue?.compactMap { $0.objectValue?["code"]?.stringValue } ?? []
        }
        #expect(try divergences(response) == [])
        #expect(try divergences(s.resultJSON()) == [])
        let forged = try json(JSONWriter.string(response).replacing(#""mg a day","answer":[{"valueDecimal":200}]"#, with: #""mg a day","answer":[{"valueDecimal":201}]"#))
        #expect(forged != response)
        #expect(try divergences(forged) == ["calculationMismatch"])
    }

    @Test func aMissingRequiredAnswerInOneRepetitionHoldsCompletion() throws {
        let (task, _, _) = try FHIRImporter.compile(try json(Self.loop), options: FHIRImportOptions())
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("meds")
        try s.setAnswer(try json(#"{"meds": [{"name": "Aspirin"}, {"dose": 5}]}"#))
        try s.goForward()
        // R4: a required item must be answered in a completed response, in every repetition.
        let missing = s.stateJSON().objectValue?["missingAnswers"]?.arrayValue?.compactMap { $0.objectValue?["path"]?.stringValue } ?? []
        #expect(missing == ["meds.meds[1].name"])
        #expect(throws: StepKitError.self) { try s.goForward() }
        #expect(s.finishReason == nil)
    }

    @Test func aRepeatingQuestionInARepeatingGroupKeepsItsOccurs() throws {
        // minOccurs 2 on a required repeating string inside a repeating group: each repetition
        // needs two answers to complete; maxOccurs 3: a fourth is refused.
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "child", "type": "group", "repeats": true, "item": [
            {"linkId": "name", "type": "string"},
            {"linkId": "nick", "type": "string", "repeats": true, "required": true, "extension": [
              {"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-minOccurs", "valueInteger": 2},
              {"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-maxOccurs", "valueInteger": 3}]}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(report.entries.isEmpty)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("child")
        try s.addInstance("child")
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"child": [{"nick": ["a", "b", "c", "d"]}]}"#)) }
        try s.setAnswer(try json(#"{"child": [{"name": "Ada", "nick": ["A", "Addy"]}, {"name": "Bo", "nick": ["B"]}]}"#))
        let missing = s.stateJSON().objectValue?["missingAnswers"]?.arrayValue?.compactMap { $0.objectValue?["path"]?.stringValue } ?? []
        #expect(missing == ["child.child[1].nick"])
        #expect(throws: StepKitError.self) { try s.goForward() }
        try s.setAnswer(try json(#"{"child": [{}, {"nick": ["B", "Bobo"]}]}"#))
        try s.goForward()
        #expect(s.finishReason == .completed)
        let reps = Self.items(s.fhirResponse(try #require(task.fhir)), "child")
        #expect(reps.count == 2)
        #expect(Self.answers(reps[0], "nick") == (try json(#"[{"valueString": "A"}, {"valueString": "Addy"}]"#)))
        #expect(Self.answers(reps[1], "nick") == (try json(#"[{"valueString": "B"}, {"valueString": "Bobo"}]"#)))
    }

    @Test func aRepeatingGroupInsideARepeatingGroupNests() throws {
        // Medications → doses: the inner group's repetitions are instances inside each
        // medication's (FHIRNestedRepetitionTests walks them); nothing is reported.
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "med", "type": "group", "repeats": true, "item": [
            {"linkId": "name", "type": "string"},
            {"linkId": "doses", "type": "group", "repeats": true, "item": [
              {"linkId": "amount", "type": "decimal"}]}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(report.entries.isEmpty)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        // No minOccurs: the medications and their doses start with none.
        try s.addInstance("med")
        try s.addInstance("med")
        try s.addInstance("med.doses")
        try s.addInstance("med.doses")
        try s.setAnswer(try json(#"{"med": [{"name": "A"}, {"name": "B", "doses": [{"amount": 1.5}, {"amount": 2}]}]}"#))
        let reps = Self.items(s.fhirResponse(try #require(task.fhir)), "med")
        #expect(reps.count == 2)
        // Each medication holds its own dose items, one per repetition.
        let doses = reps.map { $0["item"]?.arrayValue?.compactMap(\.objectValue).filter { $0["linkId"] == .string("doses") } ?? [] }
        #expect(doses.map(\.count) == [0, 2])
        #expect(doses[1].map { Self.answers($0, "amount") } == [try json(#"[{"valueDecimal": 1.5}]"#), try json(#"[{"valueDecimal": 2}]"#)])
    }

    @Test func anInitialExpressionStartsEachRepetitionWhenItIsCreated() throws {
        // SDC: initialExpression gives an item's starting answer when the item is created, so in
        // each repetition as it is made (the two of minOccurs, then each one added), evaluated
        // then and not again; the participant's change stays.
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "unit", "type": "string"},
          {"linkId": "row", "type": "group", "repeats": true,
           "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-minOccurs", "valueInteger": 2}],
           "item": [
            {"linkId": "n", "type": "integer"},
            {"linkId": "u", "type": "string", "extension": [{"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression",
              "valueExpression": {"language": "text/fhirpath", "expression": "%resource.item.where(linkId='unit').answer.value"}}]}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(report.entries.isEmpty, "\(report.entries.map(\.code))")
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.setAnswer(try json(#""mg""#))
        try s.goForward()
        #expect(s.answers[1] == (try json(#"{"row": [{"u": "mg"}, {"u": "mg"}]}"#)))
        try s.setAnswer(try json(#"{"row": [{"u": "g"}]}"#))
        // The unit changes: the repetitions made keep theirs; the one added next starts with it.
        try s.goBackward()
        try s.setAnswer(try json(#""kg""#))
        try s.goForward()
        try s.addInstance("row")
        #expect(s.answers[1] == (try json(#"{"row": [{"u": "g"}, {"u": "mg"}, {"u": "kg"}]}"#)))
        let reps = Self.items(s.fhirResponse(try #require(task.fhir)), "row")
        #expect(reps.map { Self.answers($0, "u") } == [try json(#"[{"valueString": "g"}]"#), try json(#"[{"valueString": "mg"}]"#),
                                                       try json(#"[{"valueString": "kg"}]"#)])
        // Saved and restored: the same answers, nothing evaluated again.
        let saved = try Restoration.saveText(s)
        let restored = try saved.withCString { pointer in
            try Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: SessionOptions(), clock: .system) }.get()
        }
        #expect(restored.answers[1] == s.answers[1])
        #expect(restored.stateJSON() == s.stateJSON())
    }

    @Test func aRepeatingGroupWithItsOwnConditionRepeatsWhereEnabled() throws {
        // R4: a disabled group has no items in the response, every repetition of it; enabled,
        // it repeats as any other. At the top level and inside a group.
        for nested in [false, true] {
            let group = #"{"linkId": "med", "type": "group", "repeats": true, "enableWhen": [{"question": "takes", "operator": "=", "answerBoolean": true}], "item": [{"linkId": "name", "type": "string"}]}"#
            let items = nested ? #"[{"linkId": "outer", "type": "group", "item": [{"linkId": "takes", "type": "boolean"}, \#(group)]}]"#
                               : #"[{"linkId": "takes", "type": "boolean"}, \#(group)]"#
            let (task, report, _) = try FHIRImporter.compile(try json(#"{"resourceType": "Questionnaire", "status": "active", "item": \#(items)}"#),
                                                             options: FHIRImportOptions())
            #expect(report.entries.isEmpty, "\(report.entries.map(\.code))")
            for takes in [true, false] {
                var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
                if nested {
                    try s.addInstance("med")
                    try s.addInstance("med")
                    try s.setAnswer(try json(#"{"takes": \#(takes), "med": [{"name": "a"}, {"name": "b"}]}"#))
                } else {
                    try s.setAnswer(.bool(takes))
                    try s.goForward()
                    if takes {
                        try s.addInstance("med")
                        try s.addInstance("med")
                        try s.setAnswer(try json(#"{"med": [{"name": "a"}, {"name": "b"}]}"#))
                    }
                }
                let response = s.fhirResponse(try #require(task.fhir))
                let top = nested ? (Self.items(response, "outer").first.map { JSON.object($0) } ?? .null) : response
                #expect(Self.items(top, "med").count == (takes ? 2 : 0), "nested \(nested), takes \(takes)")
            }
        }
    }

    @Test func aCalculationReadingTheSameRepetitionAndOneOutsideIt() throws {
        // SDC: the group's variable reads its own repetition; `%resource.item.where(...)` of a
        // top-level item reads the one answer there is.
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "factor", "type": "integer"},
          {"linkId": "row", "type": "group", "repeats": true,
           "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/variable",
             "valueExpression": {"name": "v", "language": "text/fhirpath", "expression": "item.where(linkId='value').answer.value"}}],
           "item": [
            {"linkId": "value", "type": "integer"},
            {"linkId": "scaled", "type": "integer", "extension": [{"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression",
              "valueExpression": {"language": "text/fhirpath", "expression": "%v * %resource.item.where(linkId='factor').answer.value"}}]}]}]}
        """#)
        let (task, _, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.setAnswer(try json("10"))
        try s.goForward()
        try s.addInstance("row")
        try s.addInstance("row")
        try s.addInstance("row")
        try s.setAnswer(try json(#"{"row": [{"value": 1}, {"value": 2}, {"value": 3}]}"#))
        let values = s.calculationsJSON().objectValue?["fhir_1"]?.arrayValue?.map(\.numericValue)
        #expect(values == [10, 20, 30])
        let reps = Self.items(s.fhirResponse(try #require(task.fhir)), "row")
        #expect(reps.map { Self.answers($0, "scaled") } == [try json(#"[{"valueInteger": 10}]"#), try json(#"[{"valueInteger": 20}]"#),
                                                            try json(#"[{"valueInteger": 30}]"#)])
    }
}
