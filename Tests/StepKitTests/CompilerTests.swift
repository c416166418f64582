import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

@Suite struct CompilerTests {
    @Test func reportsEveryProblemWithItsPath() {
        let found = problems("""
        {"identifier": "x", "extra": 1, "steps": [
          {"type": "question", "identifier": "a", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 5, "maximum": 1}},
          {"type": "question", "identifier": "a", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "c", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": []}},
          {"type": "question", "identifier": "d", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": 1}, {"text": "B", "value": 1.0}]}},
          {"type": "question", "identifier": "e", "answerFormat": {"type": "text", "validationRegularExpression": "([", "invalidMessage": "no"}},
          {"type": "question", "identifier": "f", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10, "defaultValue": 11}},
          {"type": "warp", "identifier": "g"},
          {"type": "question", "answerFormat": {"type": "boolean"}}
        ]}
        """)
        let byPath = Dictionary(found.map { ($0.path.description, $0.code) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["extra"] == "unknownKey")
        #expect(byPath["steps[0].answerFormat.minimum"] == "minimumAboveMaximum")
        #expect(byPath["steps[1].identifier"] == "duplicateIdentifier")
        #expect(byPath["steps[2].answerFormat.textChoices"] == "emptyChoices")
        #expect(byPath["steps[3].answerFormat.textChoices[1].value"] == "duplicateValue")
        #expect(byPath["steps[4].answerFormat.validationRegularExpression"] == "invalidRegularExpression")
        #expect(byPath["steps[5].answerFormat.defaultValue"] == "defaultOutOfRange")
        #expect(byPath["steps[6].type"] == "unknownStepType")
        #expect(byPath["steps[7].identifier"] == "missingKey")
        #expect(found.count == 9)
    }

    @Test func wrongTypesAndMissingPieces() {
        #expect(problems("[]").first?.code == "wrongType")
        #expect(problems(#"{"identifier": 3, "steps": []}"#).map(\.code) == ["wrongType", "emptySteps"])
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q"}]}"#).first?.path.description == "steps[0].answerFormat")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "form", "identifier": "f", "formItems": [{"sectionTitle": "S"}]}]}"#).first?.code == "emptyForm")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "form", "identifier": "f", "formItems": [{"identifier": "c", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "nope"}}]}]}"#).first?.code == "unknownItem")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "date", "minimumDate": "2026-01-01T00:00Z"}}]}"#).first?.code == "invalidDate")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "date", "minimumDate": "2026-02-01", "maximumDate": "2026-01-01"}}]}"#).first?.code == "minimumAboveMaximum")
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10, "step": 3}}]}"#).first?.code == "invalidStep")
    }

    @Test func validTaskCompilesWithIndexes() throws {
        let task = try compile("""
        {"identifier": "t", "steps": [
          {"type": "instruction", "identifier": "i", "title": "Hello"},
          {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "a", "answerFormat": {"type": "age"}}, {"sectionTitle": "More"},
            {"identifier": "b", "optional": true, "answerFormat": {"type": "email"}}]},
          {"type": "completion", "identifier": "done"}]}
        """)
        #expect(task.steps.count == 3)
        #expect(task.stepIndex["done"] == 2)
        guard case .form(let form) = task.steps[1].content else { Issue.record("not a form"); return }
        #expect(form.items.map(\.identifier) == ["a", "b"])
        #expect(task.steps[0].presentation["optional"] == .bool(false))
    }
}
