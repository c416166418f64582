import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Medications, and for each medication its doses (issue 31): a repeating group inside a
/// repeating group. Each medication needs a name and 1 to 2 doses (each dose's amount required,
/// its time optional); there are 1 to 3 medications.
let nestedMedications = """
{"identifier": "meds", "steps": [
  {"type": "form", "identifier": "list", "formItems": [
    {"identifier": "medication", "text": "Medications", "repeat": {"minCount": 1, "maxCount": 3, "title": "Medication {{index}}: {{name}}"},
     "items": [
      {"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
      {"identifier": "doses", "text": "Doses", "repeat": {"minCount": 1, "maxCount": 2, "title": "Dose {{index}}: {{amount}}"},
       "items": [
        {"identifier": "amount", "text": "Amount", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}},
        {"identifier": "time", "text": "Time", "optional": true, "answerFormat": {"type": "text"}}]}]}]},
  {"type": "completion", "identifier": "done"}]}
"""

private func open() throws -> Session {
    Session(task: try compile(nestedMedications), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_000).clock)
}

private func block(_ s: Session, _ name: String) -> JSONObject {
    s.stateJSON().objectValue?["instances"]?.objectValue?[name]?.objectValue ?? JSONObject()
}

/// A JSON value with every object's keys in order: an answer's key order is not its meaning.
private func sorted(_ value: JSON?) -> JSON? {
    switch value {
    case .object(let o)?:
        let entries = o.entries.sorted { $0.key < $1.key }
        return .object(JSONObject(distinctKeys: entries.map(\.key), values: entries.map { sorted($0.value) ?? .null }))
    case .array(let a)?: return .array(a.map { sorted($0) ?? .null })
    default: return value
    }
}

private func int(_ o: JSONObject, _ key: String) -> Int? { if case .int(let i)? = o[key] { return Int(i) }; return nil }

@Suite struct NestedRepeatingTests {
    @Test func groupsNestOneLevelWithoutCountsOrInnerRules() throws {
        #expect(problems(nestedMedications).isEmpty)
        let amount = #"{"identifier": "amount", "text": "Amount", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}}"#
        // A third level does not nest.
        let third = nestedMedications.replacing(amount, with: #"{"identifier": "amount", "repeat": {}, "items": [{"identifier": "x", "answerFormat": {"type": "text"}}]}"#)
        #expect(problems(third).map(\.code) == ["unsupportedInGroup"])
        // The inner group has no count (its instances are added in each medication).
        let counted = nestedMedications.replacing(#""minCount": 1, "maxCount": 2,"#, with: #""minCount": 1, "maxCount": 2, "count": 2,"#)
        #expect(problems(counted).map(\.code) == ["unsupportedInGroup"])
        // Its items have no visibleWhen or initial of their own.
        let shown = nestedMedications.replacing(#""identifier": "time", "text": "Time","#, with: #""identifier": "time", "text": "Time", "visibleWhen": true,"#)
        #expect(problems(shown).map(\.code) == ["unsupportedInGroup"])
        let initial = nestedMedications.replacing(#""identifier": "time", "text": "Time","#, with: #""identifier": "time", "text": "Time", "initial": "08:00","#)
        #expect(problems(initial).map(\.code) == ["unsupportedInGroup"])
        // Bounds are checked at each level.
        let never = nestedMedications.replacing(#""minCount": 1, "maxCount": 2,"#, with: #""minCount": 3, "maxCount": 2,"#)
        #expect(problems(never).map(\.code) == ["boundsNeverMet"])
        // Expressions do not read inside the inner group yet: such a read is refused when the
        // task compiles, never evaluated wrongly.
        for read in [#"{"count": {"over": {"step": "list", "block": "medication.doses"}}}"#,
                     #"{"answer": {"step": "list", "block": "medication", "item": "doses", "index": 0}}"#] {
            let task = nestedMedications.replacing(#"{"type": "completion", "identifier": "done"}"#,
                                                   with: #"{"type": "instruction", "identifier": "x", "visibleWhen": {"eq": [\#(read), 1]}}, {"type": "completion", "identifier": "done"}"#)
            #expect(!problems(task).isEmpty, "\(read)")
        }
    }

    @Test func innerInstancesAreAddedEnteredAndRemovedInTheOuterInstance() throws {
        var s = try open()
        // One medication with one dose: both minCounts.
        var doses = block(s, "medication.doses")
        #expect(int(doses, "count") == 1 && int(doses, "current") == 0 && int(doses, "outerIndex") == 0)
        #expect(doses["outer"] == .string("medication") && int(doses, "minCount") == 1 && int(doses, "maxCount") == 2)
        #expect(doses["canAdd"] == .bool(true) && doses["canRemove"] == .bool(false))
        try s.addInstance("medication.doses")
        doses = block(s, "medication.doses")
        #expect(int(doses, "count") == 2 && int(doses, "current") == 1 && doses["canAdd"] == .bool(false))
        #expect(s.answers[0] == (try json(#"{"medication": [{"doses": [{}, {}]}]}"#)))
        #expect(s.events.take().contains { $0.objectValue?["type"] == .string("instanceAdded") && $0.objectValue?["block"] == .string("medication.doses") && $0.objectValue?["index"] == .int(1) })
        // A second medication: its own doses (one, its minCount), the cursor in its first.
        try s.addInstance("medication")
        doses = block(s, "medication.doses")
        #expect(int(doses, "count") == 1 && int(doses, "current") == 0 && int(doses, "outerIndex") == 1)
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 5}, {"amount": 10, "time": "20:00"}]}, {"name": "B", "doses": [{"amount": 1}]}]}"#))
        #expect(block(s, "medication.doses")["titles"] == (try json(#"["Dose 1: 1"]"#)))
        try s.enterInstance("medication", at: 0)
        doses = block(s, "medication.doses")
        #expect(int(doses, "count") == 2 && int(doses, "outerIndex") == 0)
        #expect(doses["titles"] == (try json(#"["Dose 1: 5", "Dose 2: 10"]"#)))
        try s.enterInstance("medication.doses", at: 1)
        #expect(int(block(s, "medication.doses"), "current") == 1)
        // The path may name the outer instance: the one the participant is in.
        try s.enterInstance("medication[0].doses", at: 0)
        #expect(int(block(s, "medication.doses"), "current") == 0)
        try s.removeInstance("medication.doses", at: 0)
        #expect(sorted(s.answers[0]) == sorted(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 10, "time": "20:00"}]}, {"name": "B", "doses": [{"amount": 1}]}]}"#)))
        #expect(s.events.take().contains { $0.objectValue?["type"] == .string("instanceRemoved") && $0.objectValue?["block"] == .string("medication.doses") && $0.objectValue?["outerIndex"] == .int(0) })

        // Bad input: each a clear error that changes nothing.
        try refuses(&s, "tooFewInstances") { s throws(StepKitError) in try s.removeInstance("medication.doses", at: 0) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.enterInstance("medication.doses", at: 1) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.removeInstance("medication.doses", at: -1) }
        try refuses(&s, "outsideOuterInstance") { s throws(StepKitError) in try s.enterInstance("medication[1].doses", at: 0) }
        try refuses(&s, "outsideOuterInstance") { s throws(StepKitError) in try s.addInstance("medication[1].doses") }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.addInstance("medication[7].doses") }
        try refuses(&s, "unknownBlock") { s throws(StepKitError) in try s.addInstance("medication.name") }
        try refuses(&s, "unknownBlock") { s throws(StepKitError) in try s.addInstance("medication[x].doses") }
        try refuses(&s, "unknownBlock") { s throws(StepKitError) in try s.addInstance("nothing.doses") }
        try s.addInstance("medication.doses")
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in try s.addInstance("medication.doses") }
        // An answer for a dose the medication does not have (add it first), and past maxCount.
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in
            try s.setAnswer(try! JSONParser.parse(#"{"medication": [{}, {"doses": [{}, {"amount": 2}]}]}"#))
        }
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in
            try s.setAnswer(try! JSONParser.parse(#"{"medication": [{"doses": [{}, {}, {"amount": 2}]}]}"#))
        }
        // Removing the outer instance the participant is in starts the inner cursor again.
        try s.enterInstance("medication", at: 1)
        try s.removeInstance("medication", at: 1)
        #expect(int(block(s, "medication.doses"), "outerIndex") == 0 && int(block(s, "medication.doses"), "current") == 0)
    }

    @Test func eachInnerInstanceIsRequiredAndResultsNest() throws {
        var s = try open()
        try s.addInstance("medication.doses")
        try s.addInstance("medication")
        // Required per instance at each level: the second medication's dose exists by minCount.
        #expect(s.forwardProblems().map(\.path.description) == ["medication[0].name", "medication[0].doses[0].amount", "medication[0].doses[1].amount",
                                                                "medication[1].name", "medication[1].doses[0].amount"])
        #expect(s.forwardProblems().map(\.message).contains { $0.contains("Amount (2, 1)") })
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 5}, {"amount": 10, "time": "20:00"}]}, {"name": "B", "doses": [{"amount": 1}]}]}"#))
        #expect(s.forwardProblems().isEmpty)
        try s.goForward()
        try s.goForward()
        #expect(s.finishReason == .completed)
        // Each medication its own result object, each dose its own inside it, in order.
        let results = try #require(try s.resultJSON().objectValue?["results"]?.arrayValue)
        let group = try #require(results[0].objectValue?["results"]?.arrayValue?[0].objectValue)
        let meds: [JSONObject] = try #require(group["instances"]?.arrayValue).compactMap(\.objectValue)
        #expect(meds.count == 2 && meds.map { $0["index"] } == [.int(0), .int(1)])
        let first: [JSONObject] = try #require(meds[0]["results"]?.arrayValue).compactMap(\.objectValue)
        #expect(first.map { $0["identifier"] } == [.string("name"), .string("doses")])
        #expect(first[1]["type"] == .string("group"))
        let firstDoses: [JSONObject] = try #require(first[1]["instances"]?.arrayValue).compactMap(\.objectValue)
        #expect(firstDoses.map { $0["index"] } == [.int(0), .int(1)])
        #expect(firstDoses.map { $0["results"]?.arrayValue?.first?.objectValue?["answer"] } == [.int(5), .int(10)])
        #expect(firstDoses[1]["results"]?.arrayValue?[1].objectValue?["answer"] == .string("20:00"))
        let secondDoses = try #require(meds[1]["results"]?.arrayValue?[1].objectValue?["instances"]?.arrayValue)
        #expect(secondDoses.count == 1)
        // The result written straight into the buffer is the tree's, byte for byte.
        var out = JSONOutput()
        s.writeResult(to: &out)
        #expect(out.finishString() == JSONWriter.string(s.resultJSON()))
    }

    @Test func restorationIsExactAndRefusesInnerInstancesTheBoundsDoNotAllow() throws {
        var s = try open()
        try s.addInstance("medication")
        try s.addInstance("medication.doses")
        try s.setAnswer(try json(#"{"medication": [{"name": "A"}, {"name": "B", "doses": [{"amount": 1}, {"amount": 2}]}]}"#))
        let text = try Restoration.saveText(s)
        let task = s.task
        let back = try Restoration.restore(text: text, task: task, clock: ManualClock(1_000).clock)
        #expect(try Restoration.saveText(back) == text)
        #expect(back.stateJSON().objectValue?["instances"] == s.stateJSON().objectValue?["instances"])
        #expect(int(block(back, "medication.doses"), "current") == 1 && int(block(back, "medication.doses"), "outerIndex") == 1)
        // Three doses where maxCount is 2: refused.
        var doc = try #require(try json(text).objectValue)
        doc["integrity"] = nil
        var answers = try #require(doc["answers"]?.objectValue)
        answers["list"] = try json(#"{"medication": [{"name": "A"}, {"name": "B", "doses": [{}, {}, {}]}]}"#)
        doc["answers"] = .object(answers)
        #expect(refusalCode(try Restoration.resignedText(doc), task) == "damaged")
        // An inner cursor past the outer instance's doses (the first medication has one).
        var cursor = try #require(try json(text).objectValue)
        cursor["integrity"] = nil
        cursor["instances"] = try json(#"{"list": {"medication": 0, "medication.doses": 1}}"#)
        #expect(refusalCode(try Restoration.resignedText(cursor), task) == "damaged")
        cursor["instances"] = try json(#"{"list": {"medication.nope": 1}}"#)
        #expect(refusalCode(try Restoration.resignedText(cursor), task) == "damaged")
        var same = try #require(try json(text).objectValue)
        same["integrity"] = nil
        #expect(refusalCode(try Restoration.resignedText(same), task) == nil)
    }

    @Test func migrationCarriesInnerInstancesOverItemByItem() throws {
        var s = try open()
        try s.addInstance("medication.doses")
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 5, "time": "8"}, {"amount": 10}]}]}"#))
        let text = try Restoration.saveText(s)
        // Version 2: no time, at most one dose.
        let v2 = nestedMedications.replacing(#""minCount": 1, "maxCount": 2,"#, with: #""minCount": 1, "maxCount": 1,"#)
            .replacing(#",\#n        {"identifier": "time", "text": "Time", "optional": true, "answerFormat": {"type": "text"}}"#, with: "")
        #expect(problems(v2).isEmpty)
        let migrated = try Restoration.restore(text: text, task: try compile(v2), options: .migrating)
        let dropped = migrated.restoreReport.objectValue?["dropped"]?.arrayValue?.compactMap { $0.objectValue?["item"]?.stringValue } ?? []
        #expect(dropped == ["medication[0].doses[0].time", "medication[0].doses[1]"])
        #expect(sorted(migrated.answers[0]) == sorted(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 5}]}]}"#)))
    }
}

/// Expressions over inner instances (issue 31): from an outer instance, an aggregate over its
/// doses; inside a dose, a read of the dose (and of its medication's answers).
@Suite struct NestedInstanceExpressionTests {
    static let doses = #"{"step": "list", "block": "medication.doses"}"#
    static let meds = #"{"step": "list", "block": "medication"}"#
    static func item(_ block: String, _ name: String) -> String { #"{"step": "list", "block": "\#(block)", "item": "\#(name)"}"# }
    static let task = nestedMedications
        .replacing(#"{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},"#,
                   with: #"{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}}, {"identifier": "why", "text": "Why several doses?", "optional": true, "answerFormat": {"type": "text"}, "visibleWhen": {">": [{"count": {"over": \#(doses)}}, 1]}},"#)
        .replacing(#"{"type": "completion", "identifier": "done"}]}"#, with: #"""
        {"type": "completion", "identifier": "done"}],
         "calculations": {
           "perMedication": {"forEach": \#(meds), "value": {"sum": {"over": \#(doses), "of": {"answer": \#(item("medication.doses", "amount"))}}}},
           "allDoses": {"sum": {"over": \#(meds), "of": {"count": {"over": \#(doses)}}}},
           "bigFromA": {"sum": {"over": \#(meds), "of": {"count": {"over": \#(doses), "where": {"and": [{">": [{"answer": \#(item("medication.doses", "amount"))}, 4]}, {"==": [{"answer": \#(item("medication", "name"))}, "A"]}]}}}}},
           "firstDose": {"sum": {"over": \#(meds), "of": {"coalesce": [{"answer": {"step": "list", "block": "medication.doses", "item": "amount", "index": 0}}, 0]}}}
         }}
        """#)

    @Test func aggregatesOverInnerInstancesFromTheOuterOne() throws {
        #expect(problems(Self.task).isEmpty, "\(problems(Self.task).map(\.message))")
        var s = Session(task: try compile(Self.task), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_000).clock)
        try s.addInstance("medication.doses")
        try s.addInstance("medication")
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "doses": [{"amount": 5}, {"amount": 10}]}, {"name": "B", "doses": [{"amount": 7}]}]}"#))
        let c = s.calculationsJSON().objectValue
        // Per medication: its own doses only (5 + 10, and 7).
        #expect(c?["perMedication"] == (try json("[15, 7]")))
        #expect(c?["allDoses"] == .int(3))
        // The dose's amount and its medication's name read together: A's 5 and 10.
        #expect(c?["bigFromA"] == .int(2))
        #expect(c?["firstDose"] == .int(12))
        // "why" is shown only in the medication with more than one dose.
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["medication"]?.objectValue?["hidden"] == (try json(#"[[], ["why"]]"#)))
        // Removing a dose changes them at once.
        try s.enterInstance("medication", at: 0)
        try s.removeInstance("medication.doses", at: 1)
        #expect(s.calculationsJSON().objectValue?["perMedication"] == (try json("[5, 7]")))
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["medication"]?.objectValue?["hidden"] == (try json(#"[["why"], ["why"]]"#)))
    }

    @Test func innerReadsNeedTheirOuterInstance() throws {
        func codes(_ calculation: String) -> [String] {
            problems(Self.task.replacing(#""calculations": {"#, with: #""calculations": {"x": \#(calculation),"#)).map(\.code)
        }
        // From outside every medication: no medication's doses are meant.
        #expect(codes(#"{"count": {"over": \#(Self.doses)}}"#) == ["outsideInstance"])
        #expect(codes(#"{"forEach": \#(Self.doses), "value": 1}"#) == ["outsideInstance"])
        #expect(codes(#"{"count": {"over": {"step": "list", "block": "medication.nope"}}}"#) == ["unknownBlock"])
        // A dose's item read in its medication but outside any dose.
        #expect(codes(#"{"sum": {"over": \#(Self.meds), "of": {"answer": \#(Self.item("medication.doses", "amount"))}}}"#) == ["otherInstance"])
    }
}
