import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The headache survey of docs/branching.md: a predicate rule, a direct rule, a skip rule and a modifier.
let headache = """
{"identifier": "headache", "steps": [
  {"type": "instruction", "identifier": "intro", "title": "Headache survey"},
  {"type": "question", "identifier": "symptom", "title": "What is your symptom?",
   "answerFormat": {"type": "textChoice", "style": "singleChoice",
     "textChoices": [{"text": "Headache", "value": "headache"}, {"text": "Dizziness", "value": "dizziness"}]}},
  {"type": "question", "identifier": "severity", "title": "Does it interfere with your day?", "answerFormat": {"type": "boolean"}},
  {"type": "form", "identifier": "about", "title": "About you", "formItems": [
     {"identifier": "age", "text": "Age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90}}]},
  {"type": "completion", "identifier": "done", "title": "Thank you"}],
 "navigationRules": {
   "symptom": {"type": "predicate", "branches": [{"when": {"not": {"result": "symptom", "contains": "headache"}}, "destination": "about"}]},
   "about": {"type": "direct", "destination": "done"}},
 "skipRules": {"about": {"result": "severity", "equals": false}},
 "stepModifiers": {"done": {"when": {"result": "severity", "equals": true}, "set": {"text": "Please see a doctor."}}}}
"""

func session(_ text: String, options: SessionOptions = SessionOptions()) throws -> Session {
    Session(task: try compile(text), options: options, clock: ManualClock(1_767_225_600_000).clock)
}

extension Session {
    var stepID: String? { isFinished ? nil : currentStep?.identifier }
    var visited: [String] { path.compactMap { task.step(at: $0.stepIndex)?.identifier } }
    var state: JSONObject { stateJSON().objectValue ?? JSONObject() }
}

@Suite struct BranchingTests {
    @Test func dizzinessJumpsToAbout() throws {
        var s = try session(headache)
        try s.goForward()
        try s.setAnswer(try json(#"["dizziness"]"#))
        try s.goForward()
        #expect(s.stepID == "about")
        #expect(s.visited == ["intro", "symptom", "about"])
        try s.setAnswer(try json(#"{"age": 40}"#))
        try s.goForward()
        #expect(s.stepID == "done")
        #expect(s.state["step"]?.objectValue?["text"] == nil)
        // Going back follows the visit path, not the step order.
        try s.goBackward()
        #expect(s.stepID == "about")
        try s.goBackward()
        #expect(s.stepID == "symptom")
    }

    @Test func severeHeadacheShowsTheModifiedCompletion() throws {
        var s = try session(headache)
        try s.goForward()
        try s.setAnswer(try json(#"["headache"]"#))
        try s.goForward()
        #expect(s.stepID == "severity")
        try s.setAnswer(.bool(true))
        try s.goForward()
        #expect(s.stepID == "about")
        try s.setAnswer(try json(#"{"age": 40}"#))
        try s.goForward()
        #expect(s.state["step"]?.objectValue?["text"] == .string("Please see a doctor."))
        let arrival = s.state["navigation"]?.objectValue?["arrival"]
        #expect(arrival == .array([.object(["rule": .string("about"), "type": .string("direct")]),
                                   .object(["modified": .string("done"), "by": .string("stepModifier")])]))
    }

    @Test func skipRulePassesOverAboutAndItsRuleStillApplies() throws {
        var s = try session(headache)
        try s.goForward()
        try s.setAnswer(try json(#"["headache"]"#))
        try s.goForward()
        try s.setAnswer(.bool(false))
        #expect(s.state["navigation"]?.objectValue?["hasNextStep"] == .bool(true))
        try s.goForward()
        #expect(s.stepID == "done")
        #expect(s.visited == ["intro", "symptom", "severity", "done"])
        let arrival = s.state["navigation"]?.objectValue?["arrival"]?.arrayValue ?? []
        #expect(arrival.first == .object(["skipped": .string("about"), "by": .string("skipRule")]))
        // Changing the answer on the way back reroutes the path.
        try s.goBackward()
        try s.setAnswer(.bool(true))
        try s.goForward()
        #expect(s.stepID == "about")
    }

    @Test func answersOffThePathAreInvisibleToPredicates() throws {
        var s = try session(headache)
        try s.goForward()
        try s.setAnswer(try json(#"["headache"]"#))
        try s.goForward()
        try s.setAnswer(.bool(true))
        try s.goBackward()
        // severity left the path: its answer is kept to prefill but no longer counts.
        try s.setAnswer(try json(#"["dizziness"]"#))
        try s.goForward()
        try s.setAnswer(try json(#"{"age": 30}"#))
        try s.goForward()
        #expect(s.state["step"]?.objectValue?["text"] == nil)
    }

    @Test func loopsGiveOneResultPerVisitAndPredicatesSeeTheLatest() throws {
        var s = try session("""
        {"identifier": "meds", "steps": [
          {"type": "question", "identifier": "name", "answerFormat": {"type": "text"}},
          {"type": "question", "identifier": "more", "answerFormat": {"type": "boolean"}},
          {"type": "completion", "identifier": "done"}],
         "navigationRules": {"more": {"type": "predicate", "branches": [{"when": {"result": "more", "equals": true}, "destination": "name"}]}}}
        """)
        #expect(s.state["progress"]?.objectValue?["mostRemaining"] == .null)
        for (name, more) in [("aspirin", true), ("ibuprofen", true), ("paracetamol", false)] {
            try s.setAnswer(.string(name))
            try s.goForward()
            try s.setAnswer(.bool(more))
            try s.goForward()
        }
        #expect(s.stepID == "done")
        let results = s.resultJSON().objectValue?["results"]?.arrayValue ?? []
        let names = results.filter { $0.objectValue?["identifier"] == .string("name") }
            .compactMap { $0.objectValue?["results"]?.arrayValue?.first?.objectValue?["answer"] }
        #expect(names == [.string("aspirin"), .string("ibuprofen"), .string("paracetamol")])
        #expect(results.count == 7)
    }

    @Test func sectionsNestRulesAndSkips() throws {
        var s = try session("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "smoker", "answerFormat": {"type": "boolean"}},
          {"type": "section", "identifier": "smoking", "steps": [
            {"type": "question", "identifier": "perDay", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0}},
            {"type": "section", "identifier": "quitting", "steps": [
              {"type": "question", "identifier": "tried", "answerFormat": {"type": "boolean"}}]}]},
          {"type": "question", "identifier": "alcohol", "answerFormat": {"type": "boolean"}},
          {"type": "completion", "identifier": "done"}],
         "skipRules": {"smoking": {"result": "smoker", "equals": false}},
         "navigationRules": {"smoking": {"type": "direct", "destination": "done"}}}
        """)
        try s.setAnswer(.bool(true))
        try s.goForward()
        #expect(s.stepID == "perDay")
        try s.setAnswer(.int(5))
        try s.goForward()
        try s.setAnswer(.bool(false))
        try s.goForward()
        // The section's rule applies when its last step is left.
        #expect(s.stepID == "done")
        let results = s.resultJSON().objectValue?["results"]?.arrayValue ?? []
        #expect(results.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["smoker", "smoking", "done"])
        let inner = results[1].objectValue?["results"]?.arrayValue ?? []
        #expect(inner.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["perDay", "quitting"])

        var nonSmoker = try session("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "smoker", "answerFormat": {"type": "boolean"}},
          {"type": "section", "identifier": "smoking", "steps": [
            {"type": "question", "identifier": "perDay", "answerFormat": {"type": "numeric", "style": "integer"}}]},
          {"type": "question", "identifier": "alcohol", "answerFormat": {"type": "boolean"}}],
         "skipRules": {"smoking": {"result": "smoker", "equals": false}}}
        """)
        try nonSmoker.setAnswer(.bool(false))
        try nonSmoker.goForward()
        #expect(nonSmoker.stepID == "alcohol")
    }

    @Test func visibleWhenHidesItemsThatThenDoNotBlock() throws {
        var s = try session("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "pregnant", "answerFormat": {"type": "boolean"}},
            {"identifier": "weeks", "answerFormat": {"type": "numeric", "style": "integer"},
             "visibleWhen": {"result": {"step": "f", "item": "pregnant"}, "equals": true}}]}]}
        """)
        #expect(s.state["visibleItems"] == .array([.string("pregnant")]))
        try s.setAnswer(try json(#"{"pregnant": true}"#))
        #expect(s.state["visibleItems"] == .array([.string("pregnant"), .string("weeks")]))
        #expect(throws: StepKitError.self) { var copy = s; try copy.goForward() }
        try s.setAnswer(try json(#"{"weeks": 12, "pregnant": false}"#))
        try s.goForward()
        let items = s.resultJSON().objectValue?["results"]?.arrayValue?.first?.objectValue?["results"]?.arrayValue ?? []
        #expect(items.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["pregnant"])
    }

    @Test func progressOnTheRuleGraph() throws {
        var s = try session(headache)
        let progress = s.state["progress"]?.objectValue
        #expect(progress?["presented"] == .int(1))
        // intro → symptom → (about skippable) → done: at least 2 more; at most 4 more.
        #expect(progress?["fewestRemaining"] == .int(2))
        #expect(progress?["mostRemaining"] == .int(4))
        // Unanswered, "not contains headache" holds: the projection goes intro, symptom, about, done.
        #expect(progress?["total"] == .int(4))
        try s.goForward()
        try s.setAnswer(try json(#"["headache"]"#))
        #expect(s.state["progress"]?.objectValue?["total"] == .int(5))
        #expect(s.state["progress"]?.objectValue?["current"] == .int(2))
    }

    @Test func additionalTaskResultsFeedPredicates() throws {
        var options = SessionOptions()
        let d = Diagnostics()
        options.additionalTaskResults = ExternalResults(try json("""
        [{"identifier": "baseline", "results": [{"identifier": "smoker", "results": [{"identifier": "smoker", "type": "boolean", "answer": true}]}]}]
        """), at: .root, d)
        #expect(d.isEmpty)
        let text = """
        {"identifier": "t", "steps": [
          {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}, {"type": "instruction", "identifier": "c"}],
         "skipRules": {"b": {"result": {"task": "baseline", "step": "smoker"}, "equals": true}}}
        """
        var s = try session(text, options: options)
        try s.goForward()
        #expect(s.stepID == "c")
        var plain = try session(text)
        try plain.goForward()
        #expect(plain.stepID == "b")
    }

    @Test func compileChecksOnRules() {
        let base = """
          "steps": [
            {"type": "question", "identifier": "n", "answerFormat": {"type": "numeric", "style": "integer"}},
            {"type": "question", "identifier": "t", "answerFormat": {"type": "text"}},
            {"type": "question", "identifier": "c", "answerFormat": {"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": "a"}]}},
            {"type": "instruction", "identifier": "i"}]
        """
        func codes(_ rules: String) -> [String: String] {
            Dictionary(problems("{\"identifier\": \"x\", \(base), \(rules)}").map { ($0.path.description, $0.code) }, uniquingKeysWith: { a, _ in a })
        }
        #expect(codes(#""navigationRules": {"zzz": {"type": "direct", "destination": "n"}}"#)["navigationRules.zzz"] == "unknownStep")
        #expect(codes(#""navigationRules": {"n": {"type": "direct", "destination": "nowhere"}}"#)["navigationRules.n.destination"] == "unknownDestination")
        #expect(codes(#""skipRules": {"t": {"result": "ghost", "answered": true}}"#)["skipRules.t.result"] == "unknownStep")
        #expect(codes(#""skipRules": {"t": {"result": "n", "contains": 3}}"#)["skipRules.t.contains"] == "operatorNotApplicable")
        #expect(codes(#""skipRules": {"c": {"result": "t", "minimum": 3}}"#)["skipRules.c.minimum"] == "operatorNotApplicable")
        #expect(codes(#""skipRules": {"t": {"result": "c", "contains": "b"}}"#)["skipRules.t.contains"] == "notAChoice")
        #expect(codes(#""skipRules": {"t": {"result": "n", "equals": "3"}}"#)["skipRules.t.equals"] == "wrongOperandType")
        #expect(codes(#""skipRules": {"t": {"result": "i", "answered": true}}"#)["skipRules.t.result"] == "noAnswer")
        #expect(codes(#""skipRules": {"t": {"result": "n", "greater": 1}}"#)["skipRules.t.greater"] == "unknownOperator")
        #expect(codes(#""stepModifiers": {"t": {"when": {"always": true}, "set": {"answerFormat": "x"}}}"#)["stepModifiers.t.set.answerFormat"] == "unknownKey")
        #expect(codes(#""navigationRules": {"n": {"type": "predicate", "branches": [{"when": {"result": "n", "matches": "("}, "destination": "t"}]}}"#)["navigationRules.n.branches[0].when.matches"] != nil)
    }
}

/// Every operator against every answer type it applies to, true and false, unanswered and
/// don't know.
@Suite struct PredicateTests {
    struct Fixed: AnswerLookup {
        let value: JSON?
        let type: ResultType
        func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? { value.map { ($0, type) } }
    }

    func holds(_ test: Comparison.Test, _ value: JSON?, _ type: ResultType) -> Bool {
        Predicate.compare(Comparison(selector: .step(0), tests: [test])).evaluate(Fixed(value: value, type: type))
    }

    @Test func answeredAndDontKnow() {
        #expect(holds(.answered(true), .bool(false), .boolean))
        #expect(holds(.answered(false), nil, .boolean))
        #expect(!holds(.answered(true), nil, .numeric))
        #expect(holds(.answered(true), AnswerFormat.dontKnow, .numeric))
        #expect(holds(.dontKnow(true), AnswerFormat.dontKnow, .numeric))
        #expect(!holds(.dontKnow(true), .int(3), .numeric))
        #expect(holds(.dontKnow(false), .int(3), .numeric))
        #expect(!holds(.dontKnow(false), nil, .numeric))
        // A value comparison on an unanswered or "don't know" question is false, even notEquals.
        #expect(!holds(.notEquals(.int(1)), nil, .numeric))
        #expect(!holds(.minimum(.int(0)), AnswerFormat.dontKnow, .numeric))
    }

    @Test func equalityPerType() {
        #expect(holds(.equals(.bool(true)), .bool(true), .boolean))
        #expect(!holds(.equals(.bool(true)), .bool(false), .boolean))
        #expect(holds(.equals(.int(3)), .double(3.0), .numeric))
        #expect(holds(.notEquals(.int(3)), .int(4), .scale))
        #expect(holds(.equals(.string("yes")), .string("yes"), .text))
        #expect(holds(.equals(.string("a")), .array([.string("a")]), .choice))
        #expect(!holds(.equals(.string("a")), .array([.string("a"), .string("b")]), .choice))
        #expect(holds(.equals(.array([.string("b"), .string("a")])), .array([.string("a"), .string("b")]), .choice))
        #expect(holds(.equals(.string("08:30")), .string("08:30"), .timeOfDay))
        #expect(holds(.equals(.string("2026-01-01T01:00:00+01:00")), .string("2026-01-01T00:00:00Z"), .date))
        #expect(holds(.equals(.int(600)), .int(600), .timeInterval))
        #expect(holds(.equals(.array([.int(1), .string("x")])), .array([.int(1), .string("x")]), .multipleComponent))
    }

    @Test func choiceOperators() {
        let answer = JSON.array([.string("a"), .object(["value": .string("other"), "text": .string("typed")])])
        #expect(holds(.contains([.string("a")]), answer, .choice))
        #expect(holds(.contains([.string("a"), .string("other")]), answer, .choice))
        #expect(!holds(.contains([.string("a"), .string("b")]), answer, .choice))
        #expect(holds(.containsAny([.string("b"), .string("other")]), answer, .choice))
        #expect(!holds(.containsAny([.string("b")]), answer, .choice))
        #expect(!holds(.contains([.string("a")]), nil, .choice))
    }

    @Test func matchesOnTextAndChoices() throws {
        let pattern = try Pattern("^mig")
        #expect(holds(.matches(pattern), .string("migraine"), .text))
        #expect(!holds(.matches(pattern), .string("tension"), .text))
        #expect(holds(.matches(pattern), .array([.string("migraine")]), .choice))
    }

    @Test func orderingOnNumbersTimesAndDates() {
        #expect(holds(.minimum(.int(5)), .int(5), .numeric))
        #expect(!holds(.exclusiveMinimum(.int(5)), .int(5), .numeric))
        #expect(holds(.maximum(.double(5.5)), .int(5), .scale))
        #expect(holds(.exclusiveMaximum(.int(6)), .int(5), .ses))
        #expect(holds(.minimum(.int(300)), .int(600), .timeInterval))
        #expect(holds(.minimum(.string("08:00")), .string("08:30"), .timeOfDay))
        #expect(!holds(.maximum(.string("08:00")), .string("08:30"), .timeOfDay))
        #expect(holds(.exclusiveMaximum(.string("2026-01-01")), .string("2025-12-31"), .date))
        #expect(!holds(.minimum(.string("2026-01-01")), .string("2025-12-31"), .date))
    }

    @Test func combinators() {
        let yes = Predicate.always(true), no = Predicate.always(false)
        let lookup = Fixed(value: nil, type: .boolean)
        #expect(Predicate.all([yes, yes]).evaluate(lookup))
        #expect(!Predicate.all([yes, no]).evaluate(lookup))
        #expect(Predicate.any([no, yes]).evaluate(lookup))
        #expect(!Predicate.any([]).evaluate(lookup))
        #expect(Predicate.not(no).evaluate(lookup))
        // Several operators in one comparison are ANDed.
        let both = Predicate.compare(Comparison(selector: .step(0), tests: [.minimum(.int(1)), .maximum(.int(3))]))
        #expect(both.evaluate(Fixed(value: .int(2), type: .numeric)))
        #expect(!both.evaluate(Fixed(value: .int(4), type: .numeric)))
    }
}

@Suite struct CheckerTests {
    func codes(_ text: String) throws -> [String] { try findings(text).map(\.code) }

    @Test func unreachableStepsAndLoopsWithoutExit() throws {
        #expect(try codes(headache).isEmpty)
        #expect(try codes("""
        {"identifier": "t", "steps": [
          {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}, {"type": "instruction", "identifier": "c"}],
         "navigationRules": {"a": {"type": "direct", "destination": "c"}}}
        """) == ["unreachable"])
        #expect(try codes("""
        {"identifier": "t", "steps": [
          {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}],
         "navigationRules": {"b": {"type": "direct", "destination": "a"}}}
        """) == ["noWayOut", "noWayOut"])
    }
}

/// A move's notes keep the first inline and the rest in an array: they must still read back in
/// the order navigation wrote them, however many there are.
@Suite struct ArrivalNotesTests {
    @Test func notesReadBackInTheOrderTheyWereWritten() {
        var notes = ArrivalNotes()
        #expect(notes.isEmpty && Array(notes).isEmpty)
        notes.append(.skippedStep(3))
        #expect(!notes.isEmpty && Array(notes) == [.skippedStep(3)])
        notes.append(.rule(.step(3), .branch(1)))
        notes.append(.modified(5))
        #expect(Array(notes) == [.skippedStep(3), .rule(.step(3), .branch(1)), .modified(5)])
        #expect(notes == [.skippedStep(3), .rule(.step(3), .branch(1)), .modified(5)])
        #expect(notes != [.skippedStep(3), .modified(5), .rule(.step(3), .branch(1))])
    }
}
