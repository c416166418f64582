import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Pets owned, then the favourite among those chosen, then the ones not chosen, and a choice
/// shown only to a participant over 18.
let filteredTask = """
{"identifier": "pets", "steps": [
  {"type": "question", "identifier": "age", "answerFormat": {"type": "numeric", "style": "integer"}},
  {"type": "question", "identifier": "owned", "answerFormat": {"type": "textChoice", "style": "multipleChoice", "textChoices": [
     {"text": "Cat", "value": "cat"}, {"text": "Dog", "value": "dog"}, {"text": "Fish", "value": "fish"},
     {"text": "Horse", "value": "horse", "visibleWhen": {"result": "age", "minimum": 18}}]}},
  {"type": "question", "identifier": "favourite", "answerFormat": {"type": "textChoice", "style": "singleChoice",
     "choicesFrom": {"step": "owned", "which": "chosen"}}},
  {"type": "question", "identifier": "wanted", "optional": true, "answerFormat": {"type": "textChoice", "style": "multipleChoice",
     "choicesFrom": {"step": "owned", "which": "notChosen"}}}]}
"""

@Suite struct ChoiceFilterTests {
    func shownValues(_ s: Session) -> [JSON] {
        s.stateJSON().objectValue?["step"]?.objectValue?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue?.compactMap { $0.objectValue?["value"] } ?? []
    }

    @Test func aChoiceWithAFalseConditionIsNeitherShownNorAccepted() throws {
        var s = openSession(try compile(filteredTask), seed: nil)
        try s.setAnswer(.int(12)); try s.goForward()
        #expect(shownValues(s) == [.string("cat"), .string("dog"), .string("fish")])
        let before = s.stateJSON()
        #expect(throws: StepKitError.self) { try s.setAnswer(json(#"["horse"]"#)) }
        #expect(s.stateJSON() == before)
    }

    @Test func choicesFromAnEarlierAnswer() throws {
        var s = openSession(try compile(filteredTask), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        #expect(shownValues(s).count == 4)
        try s.setAnswer(json(#"["dog", "horse"]"#)); try s.goForward()
        #expect(shownValues(s) == [.string("dog"), .string("horse")])
        #expect(throws: StepKitError.self) { try s.setAnswer(json(#"["cat"]"#)) }
        try s.setAnswer(json(#"["horse"]"#)); try s.goForward()
        #expect(shownValues(s) == [.string("cat"), .string("fish")])
    }

    /// Going back and unchoosing the favourite's choice removes the favourite, with an event.
    @Test func aSelectionThatStopsBeingOfferedIsRemovedWithAnEvent() throws {
        var s = openSession(try compile(filteredTask), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        try s.setAnswer(json(#"["dog", "horse"]"#)); try s.goForward()
        try s.setAnswer(json(#"["horse"]"#))
        try s.goBackward()
        _ = s.events.take()
        try s.setAnswer(json(#"["dog"]"#))
        #expect(s.answers[2] == nil)
        let events = s.events.take()
        let removed = events.first { $0.objectValue?["type"] == .string("choicesRemoved") }?.objectValue
        #expect(removed?["step"] == .string("favourite"))
        #expect(removed?["values"] == .array([.string("horse")]))
        // The age going under 18 takes the horse away from "owned" as well.
        try s.setAnswer(json(#"["dog", "horse"]"#))
        try s.goBackward()
        try s.setAnswer(.int(10))
        #expect(s.answers[1] == .array([.string("dog")]))
    }

    @Test func choicesFromMustNameAnEarlierChoiceQuestion() {
        let later = #"{"identifier": "t", "steps": [{"type": "question", "identifier": "a", "answerFormat": {"type": "textChoice", "style": "singleChoice", "choicesFrom": {"step": "b", "which": "chosen"}, "textChoices": [{"text": "x", "value": 1}]}}, {"type": "question", "identifier": "b", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "x", "value": 1}]}}]}"#
        #expect(problems(later).map(\.code).contains("invalidReference"))
        let which = #"{"identifier": "t", "steps": [{"type": "question", "identifier": "a", "answerFormat": {"type": "textChoice", "style": "singleChoice", "choicesFrom": {"step": "a", "which": "some"}, "textChoices": [{"text": "x", "value": 1}]}}]}"#
        #expect(!problems(which).isEmpty)
    }
}

@Suite struct ChoiceFilterCheckerTests {
    /// The favourite is required and comes from an optional question's chosen choices: it can be
    /// left with none (a warning: the participant then goes on without it); "wanted" is optional
    /// and takes what was not chosen in a multiple-choice question (a warning).
    @Test func theCheckerReportsAListThatCanRunOut() throws {
        let task = filteredTask.replacing(#""identifier": "owned", "answerFormat""#, with: #""identifier": "owned", "optional": true, "answerFormat""#)
        let found = try findings(task).filter { $0.code == "choicesMayRunOut" }
        #expect(found == [Finding(severity: "warning", code: "choicesMayRunOut", path: "steps[2]"),
                          Finding(severity: "warning", code: "choicesMayRunOut", path: "steps[3]")])
    }

    @Test func aListWithAnUnconditionalChoiceIsNotReported() throws {
        let task = #"{"identifier": "t", "steps": [{"type": "question", "identifier": "a", "answerFormat": {"type": "numeric", "style": "integer"}}, {"type": "question", "identifier": "b", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "x", "value": 1, "visibleWhen": {"result": "a", "minimum": 3}}, {"text": "y", "value": 2}]}}]}"#
        #expect(try findings(task).filter { $0.code == "choicesMayRunOut" }.isEmpty)
        let all = task.replacing(#"{"text": "y", "value": 2}"#, with: #"{"text": "y", "value": 2, "visibleWhen": {"result": "a", "maximum": 2}}"#)
        #expect(try findings(all).filter { $0.code == "choicesMayRunOut" } == [Finding(severity: "warning", code: "choicesMayRunOut", path: "steps[1]")])
    }
}
