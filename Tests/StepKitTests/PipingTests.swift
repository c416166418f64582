import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private let piped = """
{"identifier": "p", "steps": [
  {"type": "question", "identifier": "name", "optional": true, "answerFormat": {"type": "text"}},
  {"type": "question", "identifier": "score", "answerFormat": {"type": "numeric", "style": "decimal"}},
  {"type": "form", "identifier": "f", "title": "Thanks, {{who|friend}}", "formItems": [
    {"identifier": "a", "text": "Is {{half}} right? \\\\{{literal}}", "answerFormat": {"type": "textChoice", "style": "singleChoice",
      "textChoices": [{"text": "Yes, {{half}}", "value": 1}, {"text": "No", "value": 0}]}}],
   "validations": [{"when": {"<": [{"calc": "half"}, 1]}, "message": "{{half}} is too small, {{who}}."}]},
  {"type": "completion", "identifier": "done", "text": "Bye {{who}}"}],
 "calculations": {"who": {"answer": "name"}, "half": {"/": [{"answer": "score"}, 2]}},
 "stepModifiers": {"done": {"when": {"always": true}, "set": {"title": "Total {{half|none}}"}}}}
"""

/// `{{name}}` placeholders (issue 13): resolved in the state's step and in validation messages.
@Suite struct PipingTests {
    func step(_ s: Session) -> JSONObject { s.stateJSON().objectValue?["step"]?.objectValue ?? JSONObject() }

    @Test func placeholdersResolveInTheStateAndMessages() throws {
        var s = Session(task: try compile(piped), options: SessionOptions(), clock: ManualClock(0).clock)
        try s.skip()
        try s.setAnswer(.number(5))
        try s.goForward()
        var f = step(s)
        #expect(f["title"] == .string("Thanks, friend"))
        let item = f["formItems"]?.arrayValue?.first?.objectValue
        #expect(item?["text"] == .string("Is 2.5 right? {{literal}}"))
        #expect(item?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue?.first?.objectValue?["text"] == .string("Yes, 2.5"))
        try s.goBackward()
        try s.goBackward()
        try s.setAnswer(.string("Ada"))
        try s.goForward()
        try s.setAnswer(.number(1))
        try s.goForward()
        f = step(s)
        #expect(f["title"] == .string("Thanks, Ada"))
        // The required item's message shows its piped text; a validation's message is piped too.
        #expect(s.forwardProblems().map(\.message) == ["Answer \"Is 0.5 right? {{literal}}\" to continue."])
        try s.setAnswer(try json(#"{"a": [0]}"#))
        #expect(s.forwardProblems().map(\.message) == ["0.5 is too small, Ada."])
        try s.goBackward()
        try s.setAnswer(.number(28))
        try s.goForward()
        try s.setAnswer(try json(#"{"a": [1]}"#))
        try s.goForward()
        f = step(s)
        #expect(f["text"] == .string("Bye Ada"))
        #expect(f["title"] == .string("Total 14"))
    }

    @Test func aChoiceAnswerShowsItsChoicesTexts() throws {
        let task = try compile("""
        {"identifier": "c", "steps": [
          {"type": "question", "identifier": "often", "answerFormat": {"type": "textChoice", "style": "multipleChoice",
            "textChoices": [{"text": "Not at all", "value": 0}, {"text": "Several days", "value": 1}, {"text": "Daily", "value": "d"}]}},
          {"type": "instruction", "identifier": "echo", "title": "You said: {{often|nothing}}"}],
         "calculations": {"often": {"answer": "often"}}}
        """)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(0).clock)
        try s.setAnswer(try json(#"[1, "d"]"#))
        try s.goForward()
        #expect(step(s)["title"] == .string("You said: Several days, Daily"))
        // The result keeps the values: piping changes only how a text reads.
        #expect(s.calculationsJSON(nil).objectValue?["often"] == (try json(#"[1, "d"]"#)))
    }

    @Test func unknownAndUnclosedPlaceholdersAreDefinitionErrors() {
        let found = problems("""
        {"identifier": "t", "steps": [
          {"type": "instruction", "identifier": "i", "title": "{{nothing}}", "text": "{{open"},
          {"type": "form", "identifier": "f", "formItems": [{"identifier": "a", "text": "{{x|y}}", "answerFormat": {"type": "boolean"}}],
           "validations": [{"when": {"always": false}, "message": "{{gone}}"}]}],
         "calculations": {"c": 1}}
        """)
        #expect(found.map(\.code) == ["unknownPlaceholder", "unclosedPlaceholder", "unknownPlaceholder", "unknownPlaceholder"])
        #expect(found.map(\.path.description) == ["steps[0].title", "steps[0].text", "steps[1].formItems[0].text", "steps[1].validations[0].message"])
        #expect(Piping.pieces("a \\{{b}} {{c|d}}") == .success([.literal("a {{b}} "), .placeholder(name: "c", fallback: "d")]))
    }
}
