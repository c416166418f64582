import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The static checker's checks beyond reachability: one task per finding, and tasks that must
/// stay silent.
@Suite struct CheckerMoreTests {
    func codes(_ text: String) throws -> [String] { try findings(text).map(\.code) }

    /// Steps `symptom` (single choice), `pain` (scale 0–10), `severity` (boolean, optional),
    /// `note` (optional text), then `about` and `done`, with the given rules.
    func task(rules: String = "", extraSteps: String = "") -> String {
        """
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "symptom", "title": "Symptom",
           "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [
             {"text": "Headache", "value": "headache"}, {"text": "Dizziness", "value": "dizziness"},
             {"text": "None", "value": "none", "exclusive": true}]}},
          {"type": "question", "identifier": "pain", "title": "Pain", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10}},
          {"type": "question", "identifier": "severity", "title": "Severity", "optional": true, "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "note", "title": "Note", "optional": true, "answerFormat": {"type": "text"}},
          \(extraSteps)
          {"type": "instruction", "identifier": "about", "title": "About"},
          {"type": "completion", "identifier": "done", "title": "Thank you"}]
         \(rules.isEmpty ? "" : ", " + rules)}
        """
    }

    func branch(_ when: String, at step: String = "pain", to destination: String = "about", extra: String = "", fallback: String? = nil) -> String {
        let defaultDestination = fallback.map { ", \"defaultDestination\": \"\($0)\"" } ?? ""
        return """
        "navigationRules": {"\(step)": {"type": "predicate", "branches": [{"when": \(when), "destination": "\(destination)"}\(extra)]\(defaultDestination)}}
        """
    }

    @Test func aPlainTaskIsClean() throws {
        #expect(try findings(task()).isEmpty)
        #expect(try findings(task(rules: branch(#"{"result": "pain", "minimum": 7}"#))).isEmpty)
    }

    // MARK: Branches that can never be taken

    @Test func minimumAboveMaximumInOneComparison() throws {
        let found = try findings(task(rules: branch(#"{"result": "pain", "minimum": 8, "maximum": 3}"#)))
        #expect(found == [Finding(severity: "warning", code: "branchNeverTaken", path: "navigationRules.pain.branches[0]")])
        // Exclusive bounds that meet, and a bound beyond the scale's own range.
        #expect(try codes(task(rules: branch(#"{"result": "pain", "exclusiveMinimum": 5, "maximum": 5}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"result": "pain", "minimum": 11}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"result": "pain", "minimum": 5, "maximum": 5}"#))).isEmpty)
    }

    @Test func predicateAndItsNegation() throws {
        let p = #"{"result": "symptom", "contains": "headache"}"#
        #expect(try codes(task(rules: branch(#"{"all": [\#(p), {"not": \#(p)}]}"#))) == ["branchNeverTaken"])
        // Nested all and a double negation are seen through.
        #expect(try codes(task(rules: branch(#"{"all": [{"all": [\#(p)]}, {"not": {"not": {"not": \#(p)}}}]}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"any": []}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"always": false}"#))) == ["branchNeverTaken"])
    }

    @Test func equalsTwoDifferentValues() throws {
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "severity", "equals": true}, {"result": "severity", "equals": false}]}"#, at: "note")))
                == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "pain", "equals": 3}, {"result": "pain", "notEquals": 3}]}"#)))
                == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "pain", "equals": 3}, {"result": "pain", "minimum": 4}]}"#)))
                == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "pain", "equals": 3}, {"result": "pain", "equals": 3.0}]}"#))).isEmpty)
    }

    @Test func impossibleChoices() throws {
        // Two values of a single choice, an exclusive choice with another, answered false with a value.
        #expect(try codes(task(rules: branch(#"{"result": "symptom", "contains": ["headache", "dizziness"]}"#))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "symptom", "equals": "headache"}, {"result": "symptom", "contains": "dizziness"}]}"#)))
                == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "severity", "answered": false}, {"result": "severity", "equals": true}]}"#, at: "note")))
                == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"all": [{"result": "symptom", "contains": "headache"}, {"not": {"result": "symptom", "containsAny": ["headache", "none"]}}]}"#)))
                == ["branchNeverTaken"])
        // "Don't know" on a format without the button.
        #expect(try codes(task(rules: branch(#"{"result": "pain", "dontKnow": true}"#))) == ["branchNeverTaken"])
    }

    @Test func answeredFalseOnARequiredQuestionEveryPathPasses() throws {
        // pain is required and comes before every rule after it; severity is optional.
        #expect(try codes(task(rules: branch(#"{"result": "pain", "answered": false}"#, at: "note"))) == ["branchNeverTaken"])
        #expect(try codes(task(rules: branch(#"{"result": "severity", "answered": false}"#, at: "note"))).isEmpty)
    }

    // MARK: Branches shadowed by an earlier one

    @Test func shadowedBranches() throws {
        let always = branch(#"{"always": true}"#, extra: #", {"when": {"result": "pain", "minimum": 5}, "destination": "done"}"#)
        let found = try findings(task(rules: always))
        // severity and note come next in order only when no branch matches: now never.
        #expect(found == [Finding(severity: "warning", code: "unreachable", path: "steps[2]"),
                          Finding(severity: "warning", code: "unreachable", path: "steps[3]"),
                          Finding(severity: "warning", code: "branchShadowed", path: "navigationRules.pain.branches[1]")])
        // answered: true on a required question every path has answered.
        let answered = branch(#"{"result": "symptom", "answered": true}"#, at: "note",
                              extra: #", {"when": {"result": "pain", "minimum": 5}, "destination": "done"}"#, fallback: "done")
        #expect(try codes(task(rules: answered)) == ["branchShadowed", "defaultNeverUsed"])
        // The rule's own step counts: leaving "pain" means it was answered.
        #expect(try codes(task(rules: branch(#"{"result": "pain", "answered": true}"#, extra: #", {"when": {"always": true}, "destination": "done"}"#)))
                == ["unreachable", "unreachable", "branchShadowed"])
        // An optional question may be unanswered: no shadowing.
        #expect(try codes(task(rules: branch(#"{"result": "severity", "answered": true}"#, at: "note", extra: #", {"when": {"always": true}, "destination": "done"}"#)))
                .isEmpty)
        // The same condition twice.
        let p = #"{"result": "pain", "minimum": 5}"#
        #expect(try codes(task(rules: branch(p, extra: #", {"when": \#(p), "destination": "done"}"#))) == ["branchShadowed"])
    }

    // MARK: Predicates that read a step not answered yet

    @Test func readsAStepThatComesLater() throws {
        let found = try findings(task(rules: branch(#"{"result": "note", "matches": "x"}"#, at: "pain")))
        #expect(found == [Finding(severity: "warning", code: "readsUnansweredStep", path: "navigationRules.pain.branches[0].when")])
        // A skip rule reading its own step, and a modifier reading a later one.
        #expect(try codes(task(rules: #""skipRules": {"pain": {"result": "pain", "minimum": 3}}"#)) == ["readsUnansweredStep"])
        #expect(try codes(task(rules: #""stepModifiers": {"pain": {"when": {"result": "note", "answered": true}, "set": {"text": "x"}}}"#))
                .contains("readsUnansweredStep"))
        // A loop makes a later step come before: no finding.
        let loop = #""navigationRules": {"note": {"type": "predicate", "branches": [{"when": {"result": "note", "answered": false}, "destination": "pain"}]}, "pain": {"type": "predicate", "branches": [{"when": {"result": "note", "answered": true}, "destination": "about"}]}}"#
        #expect(try codes(task(rules: loop)).isEmpty)
    }

    // MARK: Ends before a completion step

    @Test func endsBeforeCompletion() throws {
        let found = try findings(task(rules: branch(#"{"result": "pain", "minimum": 9}"#, to: "$end")))
        #expect(found == [Finding(severity: "warning", code: "endsBeforeCompletion", path: "navigationRules.pain.branches[0].destination")])
        // A branch that is never taken does not end the task.
        #expect(try codes(task(rules: branch(#"{"result": "pain", "minimum": 9, "maximum": 2}"#, to: "$end"))) == ["branchNeverTaken"])
        // A completion step that a skip rule may pass over.
        #expect(try codes(task(rules: #""skipRules": {"done": {"result": "pain", "minimum": 9}}"#)) == ["endsBeforeCompletion"])
        // Without any completion step, ending early is no finding.
        #expect(try codes("""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}},
          {"type": "instruction", "identifier": "i"}],
         "navigationRules": {"q": {"type": "predicate", "branches": [{"when": {"result": "q", "equals": true}, "destination": "$end"}]}}}
        """).isEmpty)
    }

    // MARK: Required items hidden on every path

    @Test func requiredItemHiddenEverywhere() throws {
        let form = """
        {"type": "form", "identifier": "f", "title": "Form", "formItems": [
          {"identifier": "a", "text": "A", "answerFormat": {"type": "numeric", "style": "integer"}},
          {"identifier": "b", "text": "B", "answerFormat": {"type": "text"}, "visibleWhen": {"result": {"step": "f", "item": "a"}, "minimum": 10, "maximum": 1}},
          {"identifier": "c", "text": "C", "optional": true, "answerFormat": {"type": "text"}, "visibleWhen": {"always": false}},
          {"identifier": "d", "text": "D", "answerFormat": {"type": "text"}, "visibleWhen": {"result": {"step": "f", "item": "a"}, "minimum": 10}}]},
        """
        let found = try findings(task(extraSteps: form))
        #expect(found == [
            Finding(severity: "warning", code: "requiredItemHidden", path: "steps[4].formItems[1].visibleWhen"),
            Finding(severity: "warning", code: "itemAlwaysHidden", path: "steps[4].formItems[2].visibleWhen"),
        ])
    }

    // MARK: Duplicate texts

    @Test func duplicateTexts() throws {
        let steps = """
        {"type": "question", "identifier": "pain2", "title": "Pain", "answerFormat": {"type": "boolean"}},
        {"type": "form", "identifier": "f", "title": "Form", "formItems": [
          {"identifier": "a", "text": "Age", "answerFormat": {"type": "age"}},
          {"identifier": "b", "text": "Age", "answerFormat": {"type": "textChoice", "style": "singleChoice",
            "textChoices": [{"text": "Yes", "value": 1}, {"text": "Yes", "value": 2}]}}]},
        {"type": "completion", "identifier": "done2", "title": "Thank you"},
        """
        let found = try findings(task(extraSteps: steps))
        #expect(found.contains(Finding(severity: "warning", code: "duplicateStepText", path: "steps[4]")))
        #expect(found.contains(Finding(severity: "warning", code: "duplicateItemText", path: "steps[5].formItems[1].text")))
        #expect(found.contains(Finding(severity: "warning", code: "duplicateChoiceText", path: "steps[5].formItems[1].answerFormat.textChoices[1].text")))
        #expect(found.contains(Finding(severity: "info", code: "duplicateStepText", path: "steps[8]")))
        #expect(found.count == 4)
    }

    @Test func sectionRuleShadowedByItsLastStepsRule() throws {
        let text = """
        {"identifier": "t", "steps": [
          {"type": "section", "identifier": "s", "steps": [
            {"type": "question", "identifier": "a", "answerFormat": {"type": "boolean"}},
            {"type": "question", "identifier": "b", "answerFormat": {"type": "boolean"}}]},
          {"type": "instruction", "identifier": "c"}, {"type": "instruction", "identifier": "d"}],
         "navigationRules": {"s": {"type": "direct", "destination": "d"}, "b": {"type": "direct", "destination": "c"}}}
        """
        #expect(try findings(text) == [Finding(severity: "warning", code: "sectionRuleNeverUsed", path: "navigationRules.s")])
    }

    // MARK: The graph the checks read

    /// start → a → (b | c) → d → end, and d → a when looping; `more` goes after the
    /// navigation rules (other rules of the task).
    func diamondText(loop: Bool = false, more: String = "") -> String {
        """
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "a", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "b", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "c", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "d", "answerFormat": {"type": "boolean"}}],
         "navigationRules": {
           "a": {"type": "predicate", "branches": [{"when": {"result": "a", "equals": true}, "destination": "c"}]},
           "b": {"type": "direct", "destination": "d"}\(loop ? #", "d": {"type": "predicate", "branches": [{"when": {"result": "d", "equals": true}, "destination": "a"}]}"# : "")}\(more)}
        """
    }

    func diamond(loop: Bool = false) throws -> Task {
        try compile(diamondText(loop: loop))
    }

    @Test func dominatorsAndPrecedence() throws {
        let g = CheckerGraph(task: try diamond())
        #expect(g.dominates(0, 3) && g.dominates(0, 1) && g.dominates(0, 2))
        #expect(!g.dominates(1, 3) && !g.dominates(2, 3) && !g.dominates(3, 3))
        #expect(g.canPrecede(0, 3) && g.canPrecede(1, 3) && g.canPrecede(2, 3))
        #expect(!g.canPrecede(1, 2) && !g.canPrecede(2, 1) && !g.canPrecede(3, 0) && !g.canPrecede(3, 3))
        let looping = CheckerGraph(task: try diamond(loop: true))
        #expect(looping.canPrecede(3, 0) && looping.canPrecede(1, 2) && looping.canPrecede(3, 3))
        #expect(looping.dominates(0, 3) && !looping.dominates(1, 3))
    }

    @Test func parallelBranchesCannotReadEachOther() throws {
        // c comes after b in order, but no path passes b before c.
        let text = diamondText(more: #", "skipRules": {"c": {"result": "b", "equals": true}, "d": {"result": "b", "answered": true}}"#)
        #expect(try findings(text) == [Finding(severity: "warning", code: "readsUnansweredStep", path: "skipRules.c")])
        // b is not on every path to d: "answered" is not certain, so no finding for d either way.
    }

    @Test func answeredOnlyOnSomePathsIsNotCertain() throws {
        // b is required but only one branch passes it: no shadowing after d.
        let text = """
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "a", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "b", "answerFormat": {"type": "boolean"}},
          {"type": "question", "identifier": "d", "answerFormat": {"type": "boolean"}},
          {"type": "instruction", "identifier": "e"}],
         "navigationRules": {
           "a": {"type": "predicate", "branches": [{"when": {"result": "a", "equals": true}, "destination": "d"}]},
           "d": {"type": "predicate", "branches": [{"when": {"result": "b", "answered": true}, "destination": "e"},
                                                   {"when": {"result": "a", "answered": true}, "destination": "$end"},
                                                   {"when": {"always": true}, "destination": "e"}]}}}
        """
        // Branch 1 (a answered: a dominates d) always matches, so branch 2 is shadowed.
        #expect(try codes(text) == ["branchShadowed"])
    }

    @Test func aSkipRuleMakesAnAnswerUncertain() throws {
        let text = task(rules: #""skipRules": {"pain": {"result": "symptom", "contains": "none"}}, "# + branch(#"{"result": "pain", "answered": false}"#, at: "note"))
        #expect(try codes(text).isEmpty)
    }

    // MARK: Report shape

    @Test func reportCountsBySeverity() throws {
        let report = TaskChecker.check(try compile("""
        {"identifier": "t", "steps": [{"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}],
         "navigationRules": {"b": {"type": "direct", "destination": "a"}}}
        """))
        #expect(report.objectValue?["errors"] == .int(2))
        #expect(report.objectValue?["warnings"] == .int(0))
    }
}
