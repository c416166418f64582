import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Issue 26, item 10: a long choice list compiles in time linear in its length (measured by
/// instruction counts in `bindings/c/tests/check_choice_scaling.sh`, never timed here); these
/// hold what the faster check must keep: which values repeat, the error, its path.
@Suite struct ChoiceListTests {
    func textChoices(_ values: [String]) -> String {
        let list = values.enumerated().map { #"{"text": "c\#($0.offset)", "value": \#($0.element)}"# }.joined(separator: ", ")
        return #"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [\#(list)]}}]}"#
    }

    @Test func repeatsAreFoundAsSameValueFindsThemAtTheLaterIndex() throws {
        // 1 and 1.0 are the same value, "1" is not 1; -0.0 is 0; a string repeats only exactly.
        let found = problems(textChoices(["1", "\"1\"", "2", "1.0", "\"a\"", "\"A\"", "0", "-0.0", "\"a\"", "true", "2e0"]))
        #expect(found.map(\.code) == ["duplicateValue", "duplicateValue", "duplicateValue", "wrongType", "duplicateValue"])
        #expect(found.map(\.path.description) == [
            "steps[0].answerFormat.textChoices[3].value", "steps[0].answerFormat.textChoices[7].value",
            "steps[0].answerFormat.textChoices[8].value", "steps[0].answerFormat.textChoices[9].value",
            "steps[0].answerFormat.textChoices[10].value",
        ])
        #expect(found[0].message == "Another choice already has the value 1.0.")
        #expect(found[2].message == "Another choice already has the value \"a\".")
    }

    @Test func aLongListKeepsEveryChoiceInOrder() throws {
        let n = 20_000
        let task = try compile(textChoices((0..<n).map { "\"v\($0)\"" }))
        let format = try #require(task.steps.first?.format()?.rules as? ChoiceFormat)
        #expect(format.options.count == n)
        #expect(format.options.last?.value == .string("v\(n - 1)"))
        // The last duplicate of a long list is still reported where it is.
        let found = problems(textChoices((0..<n).map { "\"v\($0)\"" } + ["\"v0\""]))
        #expect(found.map(\.path.description) == ["steps[0].answerFormat.textChoices[\(n)].value"])
    }

    @Test func anOpenChoicesOtherValueStepsAroundTakenValues() throws {
        // "other" and "_other" are options' codes: the free-text choice becomes "__other".
        let q = try json(#"{"resourceType": "Questionnaire", "item": [{"linkId": "q", "type": "open-choice", "answerOption": [{"valueCoding": {"code": "other"}}, {"valueString": "_other"}, {"valueCoding": {"code": "x"}}]}]}"#)
        let text = JSONWriter.string(try FHIRImporter.translate(q).task)
        #expect(text.contains(#""value":"__other","other":true"#))
    }

    @Test func fhirRepeatsAreStillRefused() throws {
        let options = (0..<5_000).map { #"{"valueCoding": {"code": "c\#($0)"}}"# } + [#"{"valueCoding": {"code": "c7"}}"#]
        let q = try json(#"{"resourceType": "Questionnaire", "item": [{"linkId": "q", "type": "choice", "answerOption": [\#(options.joined(separator: ","))]}]}"#)
        do {
            _ = try FHIRImporter.translate(q)
            Issue.record("a repeated answer was accepted")
        } catch {
            #expect(error.problems.map(\.code) == ["duplicateAnswer"])
            #expect(error.problems.first?.message == "The item offers the answer \"c7\" twice.")
            #expect(error.problems.first?.path.description == "item[0].answerOption")
        }
    }
}
