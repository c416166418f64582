import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// `{{placeholders}}` and `choicesFrom` reading a repeating section of steps are scoped as
/// expression reads are (docs/expressions.md, "Repeating blocks: scope"; issue 31): inside the
/// section they read the instance the participant is in; outside it a plain read means no
/// instance and is refused when the task compiles (`outsideInstance`, `otherInstance` from inside
/// another section's instance); `choicesFrom` may name an instance by index. Expected texts and
/// choices are worked out from those rules and the answers given.
@Suite struct SectionScopingTests {
    /// howMany; section "person" (name, likes: several drinks, best: one of the drinks liked,
    /// `choicesFrom` the same instance's likes); "shared": one of the drinks the first person
    /// likes (an indexed `choicesFrom`). "first" is each person's name, per instance.
    static let task = #"""
    {"identifier": "drinks", "steps": [
      {"type": "question", "identifier": "howMany", "question": "How many people?",
       "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 5}},
      {"type": "section", "identifier": "person",
       "repeat": {"minCount": 1, "maxCount": 5, "count": {"answer": "howMany"}, "title": "Person {{index}}: {{first}}"},
       "steps": [
        {"type": "question", "identifier": "name", "question": "Name", "answerFormat": {"type": "text"}},
        {"type": "question", "identifier": "likes", "question": "What does {{first}} like?",
         "answerFormat": {"type": "textChoice", "style": "multipleChoice", "textChoices": [
           {"text": "Tea", "value": "tea"}, {"text": "Coffee", "value": "coffee"}, {"text": "Juice", "value": "juice"}]}},
        {"type": "question", "identifier": "best", "question": "Which does {{first}} like best?",
         "answerFormat": {"type": "textChoice", "style": "singleChoice", "choicesFrom": {"step": "likes", "which": "chosen"}}}]},
      {"type": "question", "identifier": "shared", "question": "Which would the first person share?",
       "answerFormat": {"type": "textChoice", "style": "singleChoice",
                        "choicesFrom": {"section": "person", "step": "likes", "index": 0, "which": "chosen"}}},
      {"type": "completion", "identifier": "done"}],
     "calculations": {"first": {"forEach": {"section": "person"}, "value": {"answer": "name"}}}}
    """#

    static func offered(_ s: Session) -> [String] {
        let format = s.state["step"]?.objectValue?["answerFormat"]?.objectValue
        return (format?["textChoices"]?.arrayValue ?? []).compactMap { $0.objectValue?["value"]?.stringValue }
    }

    static func question(_ s: Session) -> String? { s.state["step"]?.objectValue?["question"]?.stringValue }

    @Test func insideTheSectionAPipeAndChoicesFromReadTheCurrentInstance() throws {
        #expect(problems(Self.task).isEmpty, "\(problems(Self.task).map(\.message))")
        var s = try session(Self.task)
        try s.setAnswer(.int(2))
        try s.goForward()
        try s.setAnswer(.string("Ann"))
        try s.goForward()
        #expect(Self.question(s) == "What does Ann like?")
        try s.setAnswer(try json(#"["tea", "coffee"]"#))
        try s.goForward()
        #expect(Self.question(s) == "Which does Ann like best?")
        #expect(Self.offered(s) == ["tea", "coffee"])
        try s.setAnswer(try json(#"["tea"]"#))
        try s.goForward()
        // The second person: every text and list reads this instance, not the first (nor both).
        try s.setAnswer(.string("Bo"))
        try s.goForward()
        #expect(Self.question(s) == "What does Bo like?")
        try s.setAnswer(try json(#"["juice"]"#))
        try s.goForward()
        #expect(Self.question(s) == "Which does Bo like best?")
        #expect(Self.offered(s) == ["juice"])
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"["tea"]"#)) }
        try s.setAnswer(try json(#"["juice"]"#))
        // Each instance's title shows its own name.
        let titles = s.state["instances"]?.objectValue?["person"]?.objectValue?["titles"]
        #expect(titles == (try json(#"["Person 1: Ann", "Person 2: Bo"]"#)))
        try s.goForward()
        // Outside, "shared" offers what the first person (index 0) likes: tea and coffee.
        #expect(s.stepID == "shared")
        #expect(Self.offered(s) == ["tea", "coffee"])
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"["juice"]"#)) }
        try s.setAnswer(try json(#"["coffee"]"#))
        // Going back into the first instance reads it again.
        try s.goBackward()
        #expect(s.stepID == "best")
        #expect(Self.question(s) == "Which does Bo like best?")
        try s.enterInstance("person", at: 0)
        #expect(s.stepID == "name")
        try s.goForward()
        #expect(Self.question(s) == "What does Ann like?")
    }

    static func codesAndPaths(_ text: String) -> [String] {
        problems(text).map { $0.code + " " + $0.path.description }.sorted()
    }

    @Test func aPlainReadFromOutsideIsRefusedWhenTheTaskCompiles() throws {
        // A pipe of the per-instance name after the section: whose name?
        let pipe = Self.task.replacing(#""question": "Which would the first person share?""#, with: #""question": "Which would {{first}} share?""#)
        #expect(Self.codesAndPaths(pipe) == ["outsideInstance steps[2].question"])
        let message = try #require(problems(pipe).first?.message)
        #expect(message.contains("\"person\"") && message.contains("outside its instances"))
        // choicesFrom naming a step of the section with no instance.
        let plain = Self.task.replacing(#"{"section": "person", "step": "likes", "index": 0, "which": "chosen"}"#,
                                        with: #"{"step": "likes", "which": "chosen"}"#)
        #expect(Self.codesAndPaths(plain) == ["outsideInstance steps[2].answerFormat.choicesFrom"])
        #expect(problems(plain).first?.message.contains(#"{"section": "person", "step": "likes", "index": 0"#) == true)
        // A task validation's message is outside every instance too.
        let validation = Self.task.replacing(#""calculations": {"#,
                                             with: #""validations": [{"when": {"answered": "howMany"}, "message": "Not {{first}}"}], "calculations": {"#)
        #expect(Self.codesAndPaths(validation) == ["outsideInstance validations[0].message"])
    }

    @Test func aReadFromAnotherSectionsInstanceIsRefused() throws {
        // A second repeating section "pet": its steps are in a pet's instance, not a person's.
        let pet = #"""
          {"type": "section", "identifier": "pet", "repeat": {"minCount": 1, "maxCount": 3},
           "steps": [{"type": "question", "identifier": "petName", "question": "Pet of {{first}}?", "answerFormat": {"type": "text"}},
                     {"type": "question", "identifier": "petDrink", "question": "Drink?",
                      "answerFormat": {"type": "textChoice", "style": "singleChoice", "choicesFrom": {"step": "likes", "which": "chosen"}}}]},
          {"type": "completion", "identifier": "done"}]
        """#
        let text = Self.task.replacing(#"{"type": "completion", "identifier": "done"}]"#, with: pet)
        #expect(Self.codesAndPaths(text) == ["outsideInstance steps[3].steps[0].question", "outsideInstance steps[3].steps[1].answerFormat.choicesFrom"].sorted())
    }

    @Test func anIndexedChoicesFromIsCheckedAsAnIndexedRead() throws {
        let wrongSection = Self.task.replacing(#"{"section": "person", "step": "likes", "index": 0"#, with: #"{"section": "nobody", "step": "likes", "index": 0"#)
        #expect(Self.codesAndPaths(wrongSection) == ["unknownBlock steps[2].answerFormat.choicesFrom.section"])
        let badIndex = Self.task.replacing(#""step": "likes", "index": 0"#, with: #""step": "likes", "index": 0.5"#)
        #expect(Self.codesAndPaths(badIndex) == ["outOfRange steps[2].answerFormat.choicesFrom.index"])
        // An index where the source is no repeating section's step.
        let notSection = #"""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "likes", "question": "Likes", "answerFormat": {"type": "textChoice", "style": "multipleChoice",
            "textChoices": [{"text": "Tea", "value": "tea"}, {"text": "Coffee", "value": "coffee"}]}},
          {"type": "question", "identifier": "best", "question": "Best", "answerFormat": {"type": "textChoice", "style": "singleChoice",
            "choicesFrom": {"step": "likes", "index": 0, "which": "chosen"}}}]}
        """#
        #expect(Self.codesAndPaths(notSection) == ["notABlock steps[1].answerFormat.choicesFrom.index"])
    }

    @Test func aPipeOfAFormGroupsPerInstanceValueIsRefusedInTheStepsText() throws {
        // A form's repeating group shows its texts once for all its instances: no instance is
        // meant, so a pipe of its per-instance value there is refused; its instances' titles
        // show their own.
        let text = #"""
        {"identifier": "meds", "steps": [
          {"type": "form", "identifier": "list", "text": "{{perDay}} mg", "formItems": [
            {"identifier": "medication", "repeat": {"maxCount": 5, "title": "Medication {{index}}: {{perDay}} mg a day"}, "items": [
              {"identifier": "dose", "text": "Dose", "answerFormat": {"type": "numeric", "style": "integer"}},
              {"identifier": "times", "text": "Times a day", "answerFormat": {"type": "numeric", "style": "integer"}}]}]}],
         "calculations": {"perDay": {"forEach": {"step": "list", "block": "medication"},
                                     "value": {"*": [{"answer": {"step": "list", "block": "medication", "item": "dose"}},
                                                     {"answer": {"step": "list", "block": "medication", "item": "times"}}]}}}}
        """#
        #expect(Self.codesAndPaths(text) == ["outsideInstance steps[0].text"])
        let fine = text.replacing(#""text": "{{perDay}} mg", "#, with: "")
        #expect(problems(fine).isEmpty)
        var s = try session(fine)
        try s.addInstance("medication")
        try s.addInstance("medication")
        try s.setAnswer(try json(#"{"medication": [{"dose": 100, "times": 2}, {"dose": 5, "times": 3}]}"#))
        let titles = s.state["instances"]?.objectValue?["medication"]?.objectValue?["titles"]
        #expect(titles == (try json(#"["Medication 1: 200 mg a day", "Medication 2: 15 mg a day"]"#)))
    }
}
