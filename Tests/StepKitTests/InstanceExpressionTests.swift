import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Expressions over repeating blocks (docs/expressions.md, "Repeating blocks: scope"). Every
/// expected value below is worked out by hand from the answers the test gives.
private let block = #"{"step": "list", "block": "medication"}"#
private func item(_ name: String, index: Int? = nil) -> String {
    #"{"step": "list", "block": "medication", "item": "\#(name)""# + (index.map { #", "index": \#($0)"# } ?? "") + "}"
}

private let medicationTask = """
{"identifier": "meds", "steps": [
  {"type": "question", "identifier": "howMany", "question": "How many?", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 50}},
  {"type": "form", "identifier": "list", "formItems": [
    {"identifier": "medication", "text": "Medications", "repeat": {"maxCount": 5, "count": {"answer": "howMany"}},
     "items": [
      {"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
      {"identifier": "dose", "text": "Dose (mg)", "optional": true, "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}},
      {"identifier": "daily", "text": "Every day?", "answerFormat": {"type": "boolean"}},
      {"identifier": "timesPerDay", "text": "Times a day", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 6},
       "visibleWhen": {"result": \(item("daily")), "equals": true}}]}]},
  {"type": "question", "identifier": "phones", "question": "Phone numbers", "optional": true, "repeat": {"maxCount": 3}, "answerFormat": {"type": "text"}},
  {"type": "instruction", "identifier": "summary", "text": "{{n}} medications, {{total}} mg a day."}],
 "calculations": {
   "n": {"count": {"over": \(block)}},
   "dailyN": {"count": {"over": \(block), "where": {"answer": \(item("daily"))}}},
   "perDay": {"forEach": \(block), "value": {"*": [{"answer": \(item("dose"))}, {"coalesce": [{"answer": \(item("timesPerDay"))}, 1]}]}},
   "total": {"sum": {"over": \(block), "of": {"calc": "perDay"}}},
   "largest": {"max": {"over": \(block), "of": {"answer": \(item("dose"))}}},
   "smallest": {"min": {"over": \(block), "of": {"answer": \(item("dose"))}}},
   "mean": {"avg": {"over": \(block), "of": {"answer": \(item("dose"))}}},
   "anyHigh": {"any": {"over": \(block), "of": {">": [{"answer": \(item("dose"))}, 500]}}},
   "allNamed": {"all": {"over": \(block), "of": {"answered": \(item("name"))}}},
   "dailyDosed": {"all": {"over": \(block), "where": {"answer": \(item("daily"))}, "of": {"answered": \(item("dose"))}}},
   "first": {"answer": \(item("name", index: 0))},
   "third": {"answer": \(item("dose", index: 2))},
   "last": {"answer": \(item("name", index: -1))},
   "phoneCount": {"count": {"over": {"step": "phones", "block": "phones"}}},
   "phoneFirst": {"answer": {"step": "phones", "block": "phones", "index": 0}}
 }}
"""

private func open(_ text: String = medicationTask) throws -> Session {
    Session(task: try compile(text), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_000).clock)
}

private func calc(_ s: Session, _ name: String) -> JSON? { s.calculationsJSON().objectValue?[name] }

@Suite struct InstanceExpressionTests {
    /// Three medications: the second is not daily, so its "times a day" is hidden in that
    /// instance alone (the answer it holds is not read); the third has no dose.
    @Test func aggregatesIndexedReadsAndPerInstanceValues() throws {
        var s = try open()
        try s.setAnswer(try json("3"))
        try s.goForward()
        // Nothing answered yet: three empty instances (from "count").
        #expect(calc(s, "n") == .int(3) && calc(s, "total") == .int(0) && calc(s, "largest") == .null)
        #expect(calc(s, "allNamed") == .bool(false) && calc(s, "anyHigh") == .bool(false))
        try s.setAnswer(try json(#"""
            {"medication": [{"name": "Ibuprofen", "dose": 200, "daily": true, "timesPerDay": 3},
                            {"name": "Vitamin D", "dose": 20, "daily": false, "timesPerDay": 2},
                            {"name": "Aspirin", "daily": true, "timesPerDay": 1}]}
            """#))
        // 200 × 3 = 600; 20 × (hidden, so 1) = 20; no dose: null. Sum 620 (null left out).
        #expect(calc(s, "perDay") == (try json("[600, 20, null]")))
        #expect(calc(s, "total") == .int(620))
        #expect(calc(s, "n") == .int(3) && calc(s, "dailyN") == .int(2))
        #expect(calc(s, "largest") == .int(200) && calc(s, "smallest") == .int(20) && calc(s, "mean") == .int(110))
        #expect(calc(s, "anyHigh") == .bool(false) && calc(s, "allNamed") == .bool(true))
        // The daily ones are the first and third; the third has no dose.
        #expect(calc(s, "dailyDosed") == .bool(false))
        #expect(calc(s, "first") == .string("Ibuprofen") && calc(s, "third") == .null && calc(s, "last") == .string("Aspirin"))
        // Per instance: the second instance's "times a day" is hidden, no other.
        let hidden = s.stateJSON().objectValue?["instances"]?.objectValue?["medication"]?.objectValue?["hidden"]
        #expect(hidden == (try json(#"[[], ["timesPerDay"], []]"#)))
        // Required items are per instance: the hidden one is not required, so the form may be left.
        try s.goForward()
        // The closed visit leaves the hidden answer out of that instance only.
        let result = s.resultJSON()
        let instances = result.objectValue?["results"]?.arrayValue?.first { $0.objectValue?["identifier"] == .string("list") }?
            .objectValue?["results"]?.arrayValue?.first?.objectValue?["instances"]?.arrayValue ?? []
        let answerOf = { (k: Int, id: String) in
            instances[ifPresent: k]?.objectValue?["results"]?.arrayValue?.first { $0.objectValue?["identifier"] == .string(id) }?.objectValue?["answer"]
        }
        #expect(instances.count == 3)
        #expect(answerOf(0, "timesPerDay") == .int(3) && answerOf(1, "timesPerDay") == .null && answerOf(2, "timesPerDay") == .int(1))
        #expect(answerOf(1, "dose") == .int(20))
        #expect(calc(s, "total") == .int(620))
        // The repeating question: two phone numbers.
        try s.setAnswer(try json(#"["555-0100", "555-0199"]"#))
        #expect(calc(s, "phoneCount") == .int(2) && calc(s, "phoneFirst") == .string("555-0100"))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["step"]?.objectValue?["text"] == .string("3 medications, 620 mg a day."))
    }

    /// The trap of Android FHIR SDK #726/#1559: a condition inside a repeated group must read its
    /// own instance, not the first one. Instance 1 daily, instance 2 not: only instance 2 hides.
    /// And the other way round: instance 1 not daily, instance 2 daily.
    @Test func visibilityIsPerInstance() throws {
        for (first, second, expected) in [(true, false, #"[[], ["timesPerDay"]]"#), (false, true, #"[["timesPerDay"], []]"#)] {
            var s = try open()
            try s.setAnswer(try json("2"))
            try s.goForward()
            try s.setAnswer(try json(#"{"medication": [{"name": "A", "daily": \#(first)}, {"name": "B", "daily": \#(second)}]}"#))
            let hidden = s.stateJSON().objectValue?["instances"]?.objectValue?["medication"]?.objectValue?["hidden"]
            #expect(hidden == (try json(expected)))
            // The shown one is required (in its own instance, numbered), the hidden one is not.
            let problems = s.forwardProblems(hidden: s.hiddenItems(step: 1))
            let k = first ? 0 : 1
            #expect(problems.map(\.path.description) == ["medication[\(k)].timesPerDay"])
        }
    }

    /// ODK's trap (javarosa #45): lowering the count must not lose answers. The instances that
    /// hold answers stay, and the aggregates still read them until the host removes one.
    @Test func loweringTheCountKeepsInstancesAndTheirValues() throws {
        var s = try open()
        try s.setAnswer(try json("3"))
        try s.goForward()
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "dose": 1}, {"name": "B", "dose": 2}, {"name": "C", "dose": 4}]}"#))
        try s.goBackward()
        try s.setAnswer(try json("1"))
        try s.goForward()
        #expect(calc(s, "n") == .int(3) && calc(s, "largest") == .int(4))
        try s.removeInstance("medication", at: 2)
        #expect(calc(s, "n") == .int(2) && calc(s, "largest") == .int(2) && calc(s, "mean") == .number(1.5))
    }

    /// A block whose step is off the path has no instances: a count of 0, not its minCount.
    @Test func blocksOffThePathHaveNoInstances() throws {
        let s = try open()
        #expect(calc(s, "n") == .int(0) && calc(s, "phoneCount") == .int(0) && calc(s, "allNamed") == .bool(true))
    }

    @Test func scopeRefusals() throws {
        func codes(_ calculations: String, extra: String = "") -> [String] {
            let text = medicationTask.replacing(#""calculations": {"#, with: #""calculations": {"# + calculations + ",") + extra
            // (A calculation refused leaves the summary's placeholders unknown too.)
            return problems(text).map(\.code).filter { $0 != "unknownPlaceholder" }
        }
        // An item inside a block read from outside, with no aggregate or index.
        #expect(codes(#""bad": {"answer": \#(item("dose"))}"#) == ["outsideInstance"])
        // ... from inside another block's aggregate.
        #expect(codes(#""bad": {"sum": {"over": {"step": "phones", "block": "phones"}, "of": {"answer": \#(item("dose"))}}}"#) == ["otherInstance"])
        // A per-instance calculation read outside its block.
        #expect(codes(#""bad": {"+": [{"calc": "perDay"}, 1]}"#) == ["outsideInstance"])
        // An aggregate over an item that does not repeat, over a step that does not exist.
        #expect(codes(#""bad": {"count": {"over": {"step": "howMany", "block": "howMany"}}}"#) == ["notABlock"])
        #expect(codes(#""bad": {"count": {"over": {"step": "nope", "block": "x"}}}"#) == ["unknownStep"])
        // Types: "of" of a sum is a number, of "all" a condition; count takes no "of"; sum needs one.
        #expect(codes(#""bad": {"sum": {"over": \#(block), "of": {"answer": \#(item("name"))}}}"#) == ["wrongType"])
        #expect(codes(#""bad": {"all": {"over": \#(block), "of": {"answer": \#(item("dose"))}}}"#) == ["wrongType"])
        #expect(codes(#""bad": {"count": {"over": \#(block), "of": 1}}"#) == ["unknownKey"])
        #expect(codes(#""bad": {"sum": {"over": \#(block)}}"#) == ["missingKey"])
        // An index that is no instance's position.
        #expect(codes(#""bad": {"answer": \#(item("dose", index: 1000))}"#) == ["outOfRange"])
        // Nested aggregates over two blocks of up to 1000 instances: a million visits and more.
        let wide = medicationTask.replacing(#""repeat": {"maxCount": 5, "count""#, with: #""repeat": {"count""#)
            .replacing(#""repeat": {"maxCount": 3}"#, with: #""repeat": {}"#)
            .replacing(#""calculations": {"#, with: #""calculations": {"nested": {"sum": {"over": {"step": "phones", "block": "phones"}, "of": {"count": {"over": \#(block), "where": {"answered": \#(item("dose"))}}}}},"#)
        #expect(problems(wide).map(\.code).filter { $0 != "unknownPlaceholder" } == ["expressionTooCostly"])
        // A count that reads instances (here through a calculation) would depend on itself.
        let selfCount = medicationTask.replacing(#""count": {"answer": "howMany"}"#, with: #""count": {"+": [{"calc": "n"}, 1]}"#)
        #expect(problems(selfCount).map(\.code) == ["countReadsInstances"])
    }

    /// A per-instance `visibleWhen` reading another block's item without an aggregate is refused
    /// (`otherInstance`), and so is a navigation rule reading an item inside a block.
    @Test func rulesReadingInsideABlockFromOutside() throws {
        let rule = medicationTask.replacing(#""calculations": {"#, with: #""navigationRules": {"list": {"type": "predicate", "branches": [{"when": {"result": \#(item("daily")), "equals": true}, "destination": "summary"}]}}, "calculations": {"#)
        #expect(problems(rule).map(\.code) == ["outsideInstance"])
        let aggregateRule = medicationTask.replacing(#""calculations": {"#, with: #""navigationRules": {"list": {"type": "predicate", "branches": [{"when": {"any": {"over": \#(block), "of": {"answer": \#(item("daily"))}}}, "destination": "summary"}]}}, "calculations": {"#)
        #expect(problems(aggregateRule).isEmpty)
        let cross = medicationTask.replacing(#""visibleWhen": {"result": \#(item("daily")), "equals": true}"#,
                                             with: #""visibleWhen": {"result": {"step": "phones", "block": "phones"}, "equals": "x"}"#)
        #expect(problems(cross).map(\.code) == ["otherInstance"])
    }

    /// A rule routes on an aggregate: "any" as a predicate, on the path.
    @Test func navigationOnAnAggregate() throws {
        let text = medicationTask.replacing(#""calculations": {"#, with: #""navigationRules": {"list": {"type": "predicate", "branches": [{"when": {"any": {"over": \#(block), "of": {">": [{"answer": \#(item("dose"))}, 500]}}}, "destination": "summary"}]}}, "calculations": {"#)
        for (dose, next) in [(100, "phones"), (800, "summary")] {
            var s = try open(text)
            try s.setAnswer(try json("1"))
            try s.goForward()
            try s.setAnswer(try json(#"{"medication": [{"name": "A", "daily": false, "dose": \#(dose)}]}"#))
            try s.goForward()
            #expect(s.currentStep?.identifier == next)
        }
    }

    /// Saved and restored, the values are the same (they are derived from the answers).
    @Test func restoredSessionsReadTheSameValues() throws {
        var s = try open()
        try s.setAnswer(try json("2"))
        try s.goForward()
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "dose": 10, "daily": true, "timesPerDay": 2}, {"name": "B", "dose": 5, "daily": false, "timesPerDay": 4}]}"#))
        try s.goForward()
        let text = try Restoration.saveText(s)
        let restored = try text.withCString { pointer in
            try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: .system)
        }
        // 10 × 2 + 5 × 1 (hidden) = 25.
        #expect(calc(restored, "total") == .int(25) && calc(s, "total") == .int(25))
        #expect(restored.calculationsJSON() == s.calculationsJSON())
    }

    /// The checker's warnings on reads that compile but read nothing useful.
    @Test func checkerFindings() throws {
        func warned(_ calculations: String, rules: String = "") throws -> [String] {
            let text = medicationTask.replacing(#""calculations": {"#, with: rules + #""calculations": {"# + calculations + (calculations.isEmpty ? "" : ","))
            return try findings(text).filter { ["aggregateOverNothing", "indexNeverExists", "aggregateIgnoresInstance"].contains($0.code) }.map(\.description)
        }
        // The task as it is: nothing.
        #expect(try findings(medicationTask).filter { ["aggregateOverNothing", "indexNeverExists", "aggregateIgnoresInstance"].contains($0.code) }.isEmpty)
        // Index 5 of a block of at most 5 instances (0 to 4); index 4 is fine.
        #expect(try warned(#""sixth": {"answer": \#(item("dose", index: 5))}, "fifth": {"answer": \#(item("dose", index: 4))}"#)
                == ["warning indexNeverExists @ calculations.sixth"])
        // A filter that reads no instance: the same for every instance.
        #expect(try warned(#""many": {"count": {"over": \#(block), "where": {">": [{"answer": "howMany"}, 2]}}}"#)
                == ["warning aggregateIgnoresInstance @ calculations.many"])
        // The block's step is never reached: every aggregate over it reads nothing.
        let skipList = #""navigationRules": {"howMany": {"type": "predicate", "branches": [{"when": {"always": true}, "destination": "phones"}]}}, "#
        let over = try warned("", rules: skipList).filter { $0.contains("aggregateOverNothing") }
        // n, dailyN, total, largest, smallest, mean, anyHigh, allNamed, dailyDosed.
        #expect(over.count == 9 && over.contains("warning aggregateOverNothing @ calculations.total"))
    }
}
