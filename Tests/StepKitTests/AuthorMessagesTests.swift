import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The messages an author meets while translating an instrument (issue 13, "Messages an author
/// meets"): each says what is wrong in the terms the author wrote.
@Suite struct AuthorMessagesTests {
    private let frequency = """
    {"type": "textChoice", "style": "singleChoice", "textChoices": [
      {"text": "Not at all", "value": 0}, {"text": "Several days", "value": 1}, {"text": "Most days", "value": 2}]}
    """

    @Test func aChoiceErrorNamesValuesWithTheirTypes() throws {
        let found = problems("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "q", "answerFormat": \(frequency)},
          {"type": "instruction", "identifier": "end"}],
         "skipRules": {"end": {"result": "q", "equals": "Several days"}}}
        """)
        #expect(found.map(\.code) == ["notAChoice"])
        #expect(found.first?.message == #"The string "Several days" is not the value of any choice; the values are the numbers 0, 1, 2."#)
        // An answer: the string "2" is not the number 2.
        let task = try questionTask(frequency)
        let rejected = try check(task, #"["2"]"#)
        guard case .failure(let rejection) = rejected else { Issue.record("accepted"); return }
        #expect(rejection.code == "unknownChoice")
        #expect(rejection.message == #"The string "2" is not the value of any choice; the values are the numbers 0, 1, 2."#)
    }

    @Test func aChoiceErrorWithMixedOrManyValues() throws {
        let mixed = try questionTask("""
        {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "One", "value": 1}, {"text": "Two", "value": "2"}]}
        """)
        guard case .failure(let rejection) = try check(mixed, "[3]") else { Issue.record("accepted"); return }
        #expect(rejection.message == #"The number 3 is not the value of any choice; the values are the number 1, the string "2"."#)
        let choices = (0..<25).map { #"{"text": "c\#($0)", "value": "v\#($0)"}"# }.joined(separator: ", ")
        let many = try questionTask(#"{"type": "textChoice", "style": "singleChoice", "textChoices": [\#(choices)]}"#)
        guard case .failure(let long) = try check(many, #"["x"]"#) else { Issue.record("accepted"); return }
        #expect(long.message.hasSuffix(#""v18", "v19" and 5 more."#))
    }

    @Test func aBareFormItemIdentifierSaysHowToWriteTheSelector() {
        let found = problems("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "s1", "formItems": [{"identifier": "q1check", "answerFormat": {"type": "boolean"}}]},
          {"type": "instruction", "identifier": "end"}],
         "skipRules": {"end": {"result": "q1check", "equals": true}}}
        """)
        #expect(found.map(\.code) == ["unknownStep"])
        #expect(found.first?.path.description == "skipRules.end.result")
        #expect(found.first?.message == #"No step is called "q1check"; it is an item of the form "s1": write {"step": "s1", "item": "q1check"}."#)
        // A name that is nothing at all keeps the plain message.
        let plain = problems("""
        {"identifier": "t", "steps": [{"type": "instruction", "identifier": "end"}], "skipRules": {"end": {"result": "nothing", "answered": true}}}
        """)
        #expect(plain.first?.message == #"No step is called "nothing"."#)
    }

    @Test func aScaleWithTooManyStepsPointsToOtherFormats() {
        let found = problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 100}}]}"#)
        #expect(found.map(\.code) == ["tooManySteps"])
        #expect(found.first?.message.contains(#""continuousScale""#) == true)
        #expect(found.first?.message.contains(#""numeric""#) == true)
    }

    @Test func everyErrorAboutAFormItemCarriesItsIdentifier() throws {
        let task = try compile("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "/44250-9", "text": "Interest", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 3}},
            {"identifier": "formItem03", "answerFormat": {"type": "boolean"}}]},
          {"type": "completion", "identifier": "done"}]}
        """)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(0).clock)
        let answer = try json(#"{"/44250-9": 9, "formItem03": 1, "other": true}"#)
        do throws(StepKitError) {
            try s.setAnswer(answer)
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.item) == ["/44250-9", "formItem03", "other"])
            #expect(error.problems.map(\.path.description) == [#"["/44250-9"]"#, "formItem03", "other"])
            let object = try #require(error.json.objectValue)
            #expect(object["item"] == .string("/44250-9"))
            #expect(object["errors"]?.arrayValue?.compactMap { $0.objectValue?["item"]?.stringValue } == ["/44250-9", "formItem03", "other"])
        }
        // The state's problems (a required item unanswered) name the item too.
        let state = try #require(s.stateJSON().objectValue)
        let items = state["problems"]?.arrayValue?.compactMap { $0.objectValue?["item"]?.stringValue }
        #expect(items == ["/44250-9", "formItem03"])
        // An error not about an item has no "item" member.
        #expect(StepKitError(.state, code: "x", message: "m").json.objectValue?["item"] == nil)
    }
}

/// The checker accepts the legitimate designs issue 13 names: pages that share a title but ask
/// different items, and a deliberate early end at a step marked terminal.
extension CheckerMoreTests {
    @Test func pagesThatShareATitleButDifferInItemsAreNoDuplicates() throws {
        func page(_ id: String, _ items: [String]) -> String {
            let list = items.map { #"{"identifier": "\#($0)", "text": "\#($0)?", "answerFormat": {"type": "boolean"}}"# }.joined(separator: ", ")
            return #"{"type": "form", "identifier": "\#(id)", "title": "Over the last two weeks", "formItems": [\#(list)]},"#
        }
        let distinct = try findings(task(extraSteps: page("p1", ["a", "b"]) + page("p2", ["c", "d"])))
        #expect(!distinct.contains { $0.code == "duplicateStepText" })
        // The same items again are still a copy-paste mistake.
        let copied = try findings(task(extraSteps: page("p1", ["a", "b"]) + page("p2", ["a", "b"])))
        #expect(copied.filter { $0.code == "duplicateStepText" } == [Finding(severity: "warning", code: "duplicateStepText", path: "steps[5]")])
    }

    @Test func aTerminalStepIsADeliberateEnd() throws {
        let screenOut = #"{"type": "instruction", "identifier": "ineligible", "title": "Not eligible", "terminal": true},"#
        let rules = #""navigationRules": {"note": {"type": "predicate", "branches": [{"when": {"result": "pain", "minimum": 9}, "destination": "ineligible"}], "defaultDestination": "about"}, "ineligible": {"type": "direct", "destination": "$end"}}"#
        #expect(try findings(task(rules: rules, extraSteps: screenOut)).isEmpty)
        // Unmarked, the same design is reported.
        let unmarked = #"{"type": "instruction", "identifier": "ineligible", "title": "Not eligible"},"#
        #expect(try findings(task(rules: rules, extraSteps: unmarked)) == [Finding(severity: "warning", code: "endsBeforeCompletion", path: "navigationRules.ineligible.destination")])
        // The mark reaches the host with the step.
        let compiled = try compile(task(rules: rules, extraSteps: screenOut))
        #expect(compiled.steps[4].presentation["terminal"] == .bool(true))
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "terminal": 1}]}"#).map(\.code) == ["wrongType"])
    }
}

/// ResearchKit formats a text format's `invalidMessage` with the typed text.
@Suite struct InvalidMessageTests {
    @Test func percentAtShowsTheTypedText() throws {
        let task = try questionTask(#"{"type": "text", "validationRegularExpression": "^[A-Z]{2}[0-9]{4}$", "invalidMessage": "\"%@\" is not a code like AB1234 (100%% letters and digits)."}"#)
        guard case .failure(let rejection) = try check(task, #""ab12""#) else { Issue.record("accepted"); return }
        #expect(rejection.code == "patternMismatch")
        #expect(rejection.message == #""ab12" is not a code like AB1234 (100% letters and digits)."#)
        // A message without %@ stays exactly as written, percent signs included.
        let plain = try questionTask(#"{"type": "text", "validationRegularExpression": "^x$", "invalidMessage": "Type x (100%%)."}"#)
        guard case .failure(let same) = try check(plain, #""y""#) else { Issue.record("accepted"); return }
        #expect(same.message == "Type x (100%%).")
        #expect(InvalidMessage.filled("%@ and %@, %d, trailing %", with: "t") == "t and t, %d, trailing %")
    }
}

/// The checker names calculations that nothing reads (issue 13).
@Suite struct CalculationUseTests {
    @Test func calculationsNeverUsedAreReported() throws {
        let found = try findings("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "a", "answerFormat": {"type": "numeric", "style": "integer"}},
          {"type": "instruction", "identifier": "i", "title": "{{shown}}", "calculations": ["listed"]},
          {"type": "completion", "identifier": "done"}],
         "calculations": {"base": {"answer": "a"}, "shown": {"+": [{"calc": "base"}, 1]}, "listed": 1, "rule": 2, "idle": 3},
         "skipRules": {"i": {">": [{"calc": "rule"}, 5]}}}
        """)
        #expect(found == [Finding(severity: "info", code: "calculationNeverUsed", path: "calculations.idle")])
    }
}

/// Expression conditions the checker can decide without answers (issue 13).
extension CheckerMoreTests {
    @Test func expressionConditionsAlwaysOrNever() throws {
        #expect(try codes(task(rules: branch(#"{">": [{"answer": "pain"}, 10]}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"<": [10, {"answer": "pain"}]}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"and": [{">=": [{"answer": "pain"}, 3]}, {"==": [{"answer": "pain"}, -1]}]}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{">": [{"answer": "pain"}, 9]}"#))).isEmpty)
        #expect(try codes(task(rules: #""skipRules": {"about": {"==": [1, 2]}}"#)) == ["skipRuleNeverApplies"])
        #expect(try codes(task(rules: #""skipRules": {"about": {"<": [1, 2]}}"#)) == ["alwaysSkipped"])
    }
}
