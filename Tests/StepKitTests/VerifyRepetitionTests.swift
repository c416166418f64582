import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Verify checks every repetition of a FHIR repeating group (issue 31), not only the first.
/// Expectations from the specifications, worked out by hand:
/// - R4 `Questionnaire.item.repeats`: each repetition of a group is its own response item, in
///   order, with its own items; a disabled item "SHALL NOT" have answers, per repetition;
/// - SDC `calculatedExpression`: evaluated with its item as the context, so in each repetition
///   on that repetition's answers (`Tests/fixtures/fhir-loop.json`: perDay = dose × times where
///   daily is true).
@Suite struct VerifyRepetitionTests {
    static func task() throws -> Task {
        try FHIRImporter.compile(try json(FHIRRepetitionTests.loop), options: FHIRImportOptions()).task
    }

    /// Three medications, every one daily: perDay is 100 × 2 = 200, 50 × 2 = 100, 10 × 3 = 30;
    /// with `secondDaily` false, the second has no times and no perDay (disabled there).
    static func walk(_ task: Task, secondDaily: Bool = true) throws -> Session {
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("meds")
        try s.addInstance("meds")
        try s.setAnswer(try json(#"""
        {"meds": [{"name": "A", "dose": 100, "daily": true, "times": 2},
                  {"name": "B", "dose": 50, "daily": \#(secondDaily), "times": 2},
                  {"name": "C", "dose": 10, "daily": true, "times": 3}]}
        """#))
        try s.goForward()
        try s.setAnswer(try json(#"{"complete": true}"#))
        try s.goForward()
        return s
    }

    static func divergences(_ submission: JSON, _ task: Task) throws -> [JSONObject] {
        let report = try Verification.verify(submission, task: task, options: VerifyOptions())
        return report.objectValue?["divergences"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    /// The response with `change` applied to repetition `k`'s items (a list of response items).
    static func editing(_ response: JSON, repetition k: Int, _ change: (inout [JSON]) -> Void) -> JSON {
        guard case .object(var r) = response, case .array(var items)? = r["item"],
              let i = items.indices.filter({ items[$0].objectValue?["linkId"] == .string("meds") })[ifPresent: k],
              case .object(var rep) = items[i], case .array(var children)? = rep["item"] else { return response }
        change(&children)
        rep["item"] = .array(children)
        items[i] = .object(rep)
        r["item"] = .array(items)
        return .object(r)
    }

    static func position(_ items: [JSON], _ linkId: String) -> Int? {
        items.firstIndex { $0.objectValue?["linkId"] == .string(linkId) }
    }

    @Test func anHonestResponseWithThreeRepetitionsVerifies() throws {
        let task = try Self.task()
        let s = try Self.walk(task)
        let response = s.fhirResponse(try #require(task.fhir))
        let reps = FHIRRepetitionTests.items(response, "meds")
        #expect(reps.map { FHIRRepetitionTests.answers($0, "perDay") } == [try json(#"[{"valueDecimal": 200}]"#), try json(#"[{"valueDecimal": 100}]"#),
                                                                          try json(#"[{"valueDecimal": 30}]"#)])
        #expect(try Self.divergences(response, task).isEmpty)
        #expect(try Self.divergences(s.resultJSON(), task).isEmpty)
    }

    @Test func aValueForgedInTheThirdRepetitionIsReportedThere() throws {
        let task = try Self.task()
        let response = try Self.walk(task).fhirResponse(try #require(task.fhir))
        var at: Int?
        let forged = Self.editing(response, repetition: 2) { children in
            at = Self.position(children, "perDay")
            if let i = at { children[i] = .object(["linkId": .string("perDay"), "text": .string("mg a day"), "answer": .array([.object(["valueDecimal": .int(31)])])]) }
        }
        let i = try #require(at)
        let found = try Self.divergences(forged, task)
        // The meds repetitions are the response's first three items: the third is item[2].
        #expect(found.map { $0["code"]?.stringValue } == ["calculationMismatch"])
        #expect(found.first?["path"] == .string("item[2].item[\(i)].answer"))
        #expect(found.first?["item"] == .string("perDay"))
        #expect(found.first?["message"]?.stringValue?.contains("repetition 3 of \"meds\"") == true)
        #expect(found.first?["message"]?.stringValue?.contains("[{\"valueDecimal\":30}]") == true)
    }

    @Test func aCalculatedValueLeftOutOfOneRepetitionIsReportedThere() throws {
        let task = try Self.task()
        let response = try Self.walk(task).fhirResponse(try #require(task.fhir))
        let dropped = Self.editing(response, repetition: 1) { children in
            if let i = Self.position(children, "perDay") { children.remove(at: i) }
        }
        let found = try Self.divergences(dropped, task)
        #expect(found.map { $0["code"]?.stringValue } == ["calculationMismatch"])
        #expect(found.first?["path"] == .string("item[1].item"))
        #expect(found.first?["message"]?.stringValue?.contains("repetition 2 of \"meds\"") == true)
    }

    @Test func aValueInTheOneRepetitionWhereTheItemIsDisabledIsReported() throws {
        // daily is false in the second medication only: perDay is disabled there (R4: no answer).
        let task = try Self.task()
        let response = try Self.walk(task, secondDaily: false).fhirResponse(try #require(task.fhir))
        let reps = FHIRRepetitionTests.items(response, "meds")
        #expect(FHIRRepetitionTests.answers(reps[1], "perDay") == nil)
        #expect(try Self.divergences(response, task).isEmpty)
        var count = 0
        let forged = Self.editing(response, repetition: 1) { children in
            count = children.count
            children.append(.object(["linkId": .string("perDay"), "answer": .array([.object(["valueDecimal": .int(100)])])]))
        }
        let found = try Self.divergences(forged, task)
        #expect(found.map { $0["code"]?.stringValue } == ["disabledItem"])
        #expect(found.first?["path"] == .string("item[1].item[\(count)].answer"))
    }

    @Test func aResultsPerInstanceCalculationIsComparedInEveryInstance() throws {
        // The StepKit result lists a per-repetition calculation as one value per instance.
        let task = try Self.task()
        let result = try Self.walk(task).resultJSON()
        #expect(result.objectValue?["calculations"]?.objectValue?["fhir_1"] == (try json("[200, 100, 30]")))
        let forged = try json(JSONWriter.string(result).replacing(#""fhir_1":[200,100,30]"#, with: #""fhir_1":[200,100,31]"#))
        #expect(forged != result)
        let found = try Self.divergences(forged, task)
        #expect(found.map { $0["code"]?.stringValue } == ["calculationMismatch"])
        #expect(found.first?["path"] == .string("calculations.fhir_1"))
    }

    @Test func aGroupInsideARepeatingGroupIsReadInItsRepetition() throws {
        // R4: a group inside a repeating group is part of each repetition, nested in it in the
        // response. An honest response verifies; an answer in the second repetition's inner group
        // where its enableWhen (same repetition: "smokes" is false there) disables it is found
        // there.
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "person", "type": "group", "repeats": true, "item": [
            {"linkId": "name", "type": "string"},
            {"linkId": "smokes", "type": "boolean"},
            {"linkId": "habit", "type": "group", "enableWhen": [{"question": "smokes", "operator": "=", "answerBoolean": true}], "item": [
              {"linkId": "perDay", "type": "integer"}]}]}]}
        """#)
        let task = try FHIRImporter.compile(q, options: FHIRImportOptions()).task
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("person")
        try s.addInstance("person")
        try s.setAnswer(try json(#"{"person": [{"name": "A", "smokes": true, "perDay": 5}, {"name": "B", "smokes": false}]}"#))
        let response = s.fhirResponse(try #require(task.fhir))
        #expect(try Self.divergences(response, task).isEmpty)
        let text = JSONWriter.string(response)
        let forged = try json(text.replacing(#"{"linkId":"smokes","answer":[{"valueBoolean":false}]}"#,
                                             with: #"{"linkId":"smokes","answer":[{"valueBoolean":false}]},{"linkId":"habit","item":[{"linkId":"perDay","answer":[{"valueInteger":7}]}]}"#))
        #expect(forged != response)
        let found = try Self.divergences(forged, task)
        #expect(found.map { $0["code"]?.stringValue } == ["disabledItem"])
        #expect(found.first?["path"] == .string("item[1].item[2].item[0].answer"))
    }
}
