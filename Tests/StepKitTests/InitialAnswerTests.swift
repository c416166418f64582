import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// `initial` on a question or a form item (issue 29, item 7), the native form of SDC's
/// `initialExpression`: "an expression whose result provides the initial value … evaluated once
/// when the item is first enabled"; the participant may change it, and a changed answer is not
/// recomputed.
@Suite struct InitialAnswerTests {
    static let definition = """
    {"identifier": "t", "steps": [
      {"type": "question", "identifier": "weight", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 500}},
      {"type": "question", "identifier": "copy", "initial": {"*": [{"answer": "weight"}, 2]},
       "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 500}},
      {"type": "form", "identifier": "f", "formItems": [
        {"identifier": "smoker", "text": "Smoker", "answerFormat": {"type": "boolean"}},
        {"identifier": "packs", "text": "Packs", "visibleWhen": {"result": {"step": "f", "item": "smoker"}, "equals": true},
         "initial": 1, "answerFormat": {"type": "numeric", "style": "integer"}},
        {"identifier": "kind", "text": "Kind", "initial": "b",
         "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": "a"}, {"text": "B", "value": "b"}]}}]}]}
    """

    func open() throws -> Session {
        Session(task: try compile(Self.definition), options: SessionOptions(), clock: ManualClock(1_767_225_600_000).clock)
    }

    @Test func aQuestionStartsWithItsValueWhenFirstShown() throws {
        var s = try open()
        try s.setAnswer(.number(40))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["answer"] == .number(80))
        // Edited, then the source changes: the edit stays (evaluated once, not recomputed).
        try s.setAnswer(.number(75))
        try s.goBackward()
        try s.setAnswer(.number(50))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["answer"] == .number(75))
        try s.goForward()
        let result = try #require(s.resultJSON().objectValue?["results"]?.arrayValue)
        #expect(result[1].objectValue?["results"]?.arrayValue?.first?.objectValue?["answer"] == .number(75))
    }

    @Test func aClearedAnswerIsNotRefilled() throws {
        var s = try open()
        try s.setAnswer(.number(40))
        try s.goForward()
        try s.setAnswer(.null)
        #expect(s.stateJSON().objectValue?["answer"] == .null)
        #expect(throws: StepKitError.self) { try s.goForward() }
    }

    @Test func aFormItemStartsWhenItFirstBecomesVisible() throws {
        var s = try open()
        try s.setAnswer(.number(40))
        try s.goForward()
        try s.goForward()
        // "packs" is hidden (not enabled): no value; the visible choice starts selected.
        #expect(s.stateJSON().objectValue?["answer"] == .object(["kind": .array([.string("b")])]))
        try s.setAnswer(try json(#"{"smoker": true}"#))
        #expect(s.stateJSON().objectValue?["answer"]?.objectValue?["packs"] == .int(1))
        // Changed, hidden and shown again: the change stays.
        try s.setAnswer(try json(#"{"packs": 3}"#))
        try s.setAnswer(try json(#"{"smoker": false}"#))
        try s.setAnswer(try json(#"{"smoker": true}"#))
        #expect(s.stateJSON().objectValue?["answer"]?.objectValue?["packs"] == .int(3))
    }

    @Test func anInitialOfTheWrongTypeIsADefinitionError() throws {
        let found = problems("""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "initial": "many",
          "answerFormat": {"type": "numeric", "style": "integer"}}]}
        """)
        #expect(!found.isEmpty)
        #expect(found.first?.path.description == "steps[0].initial")
    }

    @Test func aValueTheFormatRefusesLeavesItUnanswered() throws {
        var s = Session(task: try compile("""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "initial": 900,
          "answerFormat": {"type": "numeric", "style": "integer", "maximum": 10}}]}
        """), options: SessionOptions())
        #expect(s.stateJSON().objectValue?["answer"] == .null)
        #expect(throws: StepKitError.self) { try s.goForward() }
    }

    @Test func restoreKeepsTheAnswersAsSavedAndEvaluatesNothing() throws {
        var s = try open()
        try s.setAnswer(.number(40))
        try s.goForward()
        try s.setAnswer(.number(12))
        let text = JSONWriter.string(Restoration.save(s))
        let back = try text.withCString { pointer in
            try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: ManualClock(1_767_225_600_000).clock)
        }
        #expect(back.stateJSON().objectValue?["answer"] == .number(12))
    }
}

/// SDC's `initialExpression` imported as `initial`.
@Suite struct FHIRInitialExpressionTests {
    static let url = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression"
    static let questionnaire = """
    {"resourceType": "Questionnaire", "id": "ie", "item": [
      {"linkId": "weight", "text": "Weight", "type": "decimal"},
      {"linkId": "again", "text": "Weight again", "type": "decimal", "extension": [{"url": "\(url)",
        "valueExpression": {"language": "text/fhirpath", "expression": "%resource.item.where(linkId='weight').answer.value"}}]},
      {"linkId": "sex", "text": "Sex", "type": "string", "extension": [{"url": "\(url)",
        "valueExpression": {"language": "text/fhirpath", "expression": "%patient.gender"}}]}]}
    """

    @Test func anInitialExpressionStartsTheAnswerOnceAndIsReportedWhereItCannotRun() throws {
        let t = try FHIRImporter.compile(try json(Self.questionnaire), options: FHIRImportOptions())
        #expect(t.report.entries.map(\.code) == ["initialNotTranslated"])
        #expect(t.report.entries.first?.path.description == "item[2].extension[0]")
        var s = Session(task: t.task, options: SessionOptions())
        try s.setAnswer(.number(70.5))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["answer"] == .number(70.5))
        try s.setAnswer(.number(71))
        try s.goBackward()
        try s.setAnswer(.number(80))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["answer"] == .number(71))
    }
}

/// The checker on `initial`: one that reads a step no path answers before its own is always
/// empty there.
@Suite struct InitialCheckerTests {
    @Test func anInitialReadingALaterStepIsAWarning() throws {
        let found = try findings("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "a", "initial": {"answer": "b"}, "answerFormat": {"type": "numeric", "style": "integer"}},
          {"type": "question", "identifier": "b", "answerFormat": {"type": "numeric", "style": "integer"}},
          {"type": "question", "identifier": "c", "initial": {"answer": "b"}, "answerFormat": {"type": "numeric", "style": "integer"}}]}
        """)
        #expect(found == [Finding(severity: "warning", code: "readsUnansweredStep", path: "steps[0].initial")])
    }
}
