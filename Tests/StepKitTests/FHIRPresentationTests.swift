import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// What a FHIR import presents (issue 29, item 6). R4: `questionnaire-hidden` means the item is
/// "not displayed to the user" (it is still enabled and in the response); `readOnly` items are
/// displayed and cannot be changed; SDC's calculated items are computed and displayed. So hidden
/// groups and items never make a step, visible calculated and read-only items are shown with
/// their value, and an `initial` answer is kept or reported (docs/fhir.md: nothing dropped
/// silently).
@Suite struct FHIRPresentationTests {
    private func translate(_ text: String) throws -> (steps: [JSONObject], report: [FHIRReportEntry]) {
        let t = try FHIRImporter.translate(try json(text))
        let steps = t.task.objectValue?["steps"]?.arrayValue?.compactMap(\.objectValue) ?? []
        return (steps, t.report.entries)
    }

    private static let calc = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"
    private static let hidden = #"{"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-hidden", "valueBoolean": true}"#

    private static func calculated(_ linkId: String, hidden: Bool = false) -> String {
        """
        {"linkId": "\(linkId)", "text": "Copy", "type": "decimal", "extension": [\(hidden ? Self.hidden + ", " : "")
          {"url": "\(calc)", "valueExpression": {"language": "text/fhirpath", "expression": "%resource.item.where(linkId='n').answer.value"}}]}
        """
    }

    @Test func aHiddenGroupIsNeverPresentedButStillExported() throws {
        let q = """
        {"resourceType": "Questionnaire", "id": "h", "item": [
          {"linkId": "n", "text": "A number", "type": "decimal"},
          {"linkId": "secret", "text": "Hidden group", "type": "group", "extension": [\(Self.hidden)], "item": [
            \(Self.calculated("secret.copy")),
            {"linkId": "secret.fixed", "text": "Fixed", "type": "string", "initial": [{"valueString": "kept"}]}]}]}
        """
        let t = try translate(q)
        #expect(t.steps.map { $0["identifier"]?.stringValue } == ["n"])
        let task = try FHIRImporter.compile(try json(q), options: FHIRImportOptions()).task
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(.number(2.5))
        try s.goForward()
        #expect(s.finishReason == .completed)
        let items = try #require(task.fhir.map { s.fhirResponse($0) }?.objectValue?["item"]?.arrayValue)
        let secret = try #require(items.first { $0.objectValue?["linkId"] == .string("secret") }?.objectValue)
        let answers = secret["item"]?.arrayValue?.compactMap { $0.objectValue?["answer"] } ?? []
        #expect(answers == [.array([.object(["valueDecimal": .number(2.5)])]), .array([.object(["valueString": .string("kept")])])])
    }

    @Test func visibleCalculatedAndReadOnlyItemsAreShownWithTheirValue() throws {
        let q = """
        {"resourceType": "Questionnaire", "id": "v", "item": [
          {"linkId": "n", "text": "A number", "type": "decimal"},
          {"linkId": "g", "text": "Results", "type": "group", "item": [
            {"linkId": "other", "text": "Other", "type": "string"},
            \(Self.calculated("g.copy")),
            \(Self.calculated("g.hiddenCopy", hidden: true)),
            {"linkId": "g.ro", "text": "Site", "type": "choice", "readOnly": true,
             "initial": [{"valueCoding": {"system": "http://example.org", "code": "b", "display": "Berlin"}}]}]}]}
        """
        let t = try translate(q)
        let form = try #require(t.steps.last)
        #expect(form["type"] == .string("form"))
        #expect(form["text"] == .string("Copy: {{fhir_1}}\nSite: Berlin"))
        #expect(form["calculations"] == nil)
        let task = try FHIRImporter.compile(try json(q), options: FHIRImportOptions()).task
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(.number(4))
        try s.goForward()
        let step = try #require(s.stateJSON().objectValue?["step"]?.objectValue)
        #expect(step["text"] == .string("Copy: 4\nSite: Berlin"))
        // Shown, not asked: the form's only question is "other".
        #expect(step["formItems"]?.arrayValue?.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["other"])
    }

    @Test func aTopLevelCalculatedItemIsAStepShowingItsValue() throws {
        let q = """
        {"resourceType": "Questionnaire", "id": "t", "item": [
          {"linkId": "n", "text": "A number", "type": "decimal"},
          \(Self.calculated("total")),
          \(Self.calculated("invisible", hidden: true))]}
        """
        let task = try FHIRImporter.compile(try json(q), options: FHIRImportOptions()).task
        #expect(task.steps.map(\.identifier) == ["n", "total"])
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(.number(1.5))
        try s.goForward()
        let step = try #require(s.stateJSON().objectValue?["step"]?.objectValue)
        #expect(step["type"] == .string("instruction"))
        #expect(step["title"] == .string("Copy"))
        #expect(step["text"] == .string("1.5"))
    }

    @Test func aCalculatedItemWithItsOwnConditionInAFormIsReported() throws {
        let q = """
        {"resourceType": "Questionnaire", "id": "c", "item": [
          {"linkId": "g", "type": "group", "item": [
            {"linkId": "n", "text": "A number", "type": "decimal"},
            {"linkId": "copy", "text": "Copy", "type": "decimal",
             "enableWhen": [{"question": "n", "operator": "exists", "answerBoolean": true}],
             "extension": [{"url": "\(Self.calc)", "valueExpression": {"language": "text/fhirpath", "expression": "%resource.repeat(item).where(linkId='n').answer.value"}}]}]}]}
        """
        let t = try translate(q)
        #expect(t.report.map(\.code) == ["valueNotShown"])
        #expect(t.report.first?.path.description == "item[0].item[1].enableWhen")
        #expect(t.steps.first?["text"] == nil)
    }

    @Test func anInitialAnswerIsKeptOrReported() throws {
        let q = """
        {"resourceType": "Questionnaire", "id": "i", "item": [
          {"linkId": "symptom", "text": "Symptom", "type": "choice",
           "initial": [{"valueCoding": {"system": "http://snomed.info/sct", "code": "44169009", "display": "Loss of smell"}}]},
          {"linkId": "when", "text": "When", "type": "dateTime", "initial": [{"valueDate": "2021-05-01"}]},
          {"linkId": "dose", "text": "Dose", "type": "decimal", "initial": [{"valueInteger": 2}]}]}
        """
        let t = try translate(q)
        // A choice item with no options is asked as text, which has no coded starting value; a
        // dateTime question's starting value is a date and time. Both are reported at the
        // initial, and the decimal's whole number is kept.
        #expect(t.report.map(\.code) == ["initialNotTranslated", "initialNotTranslated"])
        #expect(t.report.map(\.path.description) == ["item[0].initial[0]", "item[1].initial[0]"])
        let dose = try #require(t.steps.last?["answerFormat"]?.objectValue)
        #expect(dose["defaultNumericAnswer"] == .int(2))
    }
}
