import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A household: how many children (a question), then a repeating section of two steps asked
/// once per child, then a completion step.
let household = """
{"identifier": "household", "steps": [
  {"type": "question", "identifier": "howMany", "question": "How many children?", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 20}},
  {"type": "section", "identifier": "child", "repeat": {"maxCount": 3, "count": {"answer": "howMany"}, "title": "Child {{index}}: {{name}}"},
   "steps": [
     {"type": "question", "identifier": "name", "question": "Name", "answerFormat": {"type": "text"}},
     {"type": "question", "identifier": "age", "question": "Age", "optional": true, "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0}}]},
  {"type": "completion", "identifier": "done"}]}
"""

private func open(_ text: String = household) throws -> Session {
    Session(task: try compile(text), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556677"), clock: ManualClock(1_000).clock)
}

private func state(_ s: Session) -> JSONObject { s.stateJSON().objectValue ?? JSONObject() }
private func stepID(_ s: Session) -> String? { state(s)["step"]?.objectValue?["identifier"]?.stringValue }
private func child(_ s: Session) -> JSONObject { state(s)["instances"]?.objectValue?["child"]?.objectValue ?? JSONObject() }
private func int(_ o: JSONObject, _ key: String) -> Int64? { if case .int(let i)? = o[key] { return i }; return nil }

/// Answers the current step and goes forward.
private func answer(_ s: inout Session, _ text: String) throws {
    try s.setAnswer(try json(text))
    try s.goForward()
}

/// Two children: the first answered (Ann, 7), the participant on the second one's name with
/// "Ben" typed and not yet gone on.
private func benTypedForTheSecondChild() throws -> Session {
    var s = try open()
    try answer(&s, "2")
    try answer(&s, #""Ann""#)
    try answer(&s, "7")
    try s.setAnswer(try json(#""Ben""#))
    return s
}

/// Saves `s`, restores what it saved and expects the same run: the same restoration data and
/// the same state. Returns the saved text.
@discardableResult
private func expectRestoresExactly(_ s: Session) throws -> String {
    let saved = try Restoration.saveText(s)
    let restored = try Restoration.restore(text: saved, task: s.task)
    #expect(try Restoration.saveText(restored) == saved)
    #expect(restored.stateJSON() == s.stateJSON())
    return saved
}

@Suite struct RepeatingStepsTests {
    @Test func definitionErrors() throws {
        #expect(problems(household).isEmpty)
        let neverEntered = household.replacing(#""maxCount": 3, "count": {"answer": "howMany"}, "#, with: #""maxCount": 3, "#)
        #expect(problems(neverEntered).map(\.code) == ["boundsNeverMet"])
        let nested = household.replacing(#"{"type": "question", "identifier": "age""#,
                                         with: #"{"type": "section", "identifier": "inner", "steps": [{"type": "instruction", "identifier": "i"}]}, {"type": "question", "identifier": "age""#)
        #expect(problems(nested).map(\.code) == ["sectionInRepeatingSection"])
        let intoMiddle = household.dropLast(1) + #", "navigationRules": {"howMany": {"type": "direct", "destination": "age"}}}"#
        #expect(problems(String(intoMiddle)).map(\.code) == ["intoRepeatingBlock"])
        let outOfBlock = household.dropLast(1) + #", "navigationRules": {"name": {"type": "direct", "destination": "done"}}}"#
        #expect(problems(String(outOfBlock)).map(\.code) == ["outOfRepeatingBlock"])
        let withGroup = household.replacing(#""identifier": "age", "question": "Age", "optional": true,"#,
                                            with: #""identifier": "age", "question": "Age", "optional": true, "repeat": {"maxCount": 2},"#)
        #expect(problems(withGroup).map(\.code) == ["unsupportedInGroup"])
    }

    @Test func forwardWalksEachInstanceAndTheResultNestsThem() throws {
        var s = try open()
        try answer(&s, "2")
        #expect(stepID(s) == "name")
        var b = child(s)
        #expect(int(b, "count") == 2 && int(b, "current") == 0 && int(b, "expectedCount") == 2)
        #expect(b["canAdd"] == .bool(true) && b["canRemove"] == .bool(false))
        #expect(b["steps"] == (try json(#"["name", "age"]"#)))
        // Progress counts each instance's steps: howMany and name shown; age, the second
        // child's two steps and done to come.
        let progress = state(s)["progress"]?.objectValue ?? JSONObject()
        #expect(int(progress, "current") == 2 && int(progress, "total") == 6)
        try answer(&s, #""Ann""#)
        try answer(&s, "7")
        // After the first child's last step: the second child's first step, unanswered.
        #expect(stepID(s) == "name")
        #expect(int(child(s), "current") == 1)
        #expect(state(s)["answer"] == .null)
        try answer(&s, #""Ben""#)
        b = child(s)
        #expect(b["titles"] == (try json(#"["Child 1: Ann", "Child 2: Ben"]"#)))
        try s.skip()
        #expect(stepID(s) == "done")
        try s.goForward()
        let results = s.resultJSON().objectValue?["results"]?.arrayValue ?? []
        #expect(results.count == 3)
        let block = results[ifPresent: 1]?.objectValue ?? JSONObject()
        #expect(block["identifier"] == .string("child"))
        let instances = block["instances"]?.arrayValue ?? []
        #expect(instances.count == 2)
        func answers(_ instance: JSON?) -> [JSON] {
            (instance?.objectValue?["results"]?.arrayValue ?? []).map {
                $0.objectValue?["results"]?.arrayValue?.first?.objectValue?["answer"] ?? .null
            }
        }
        #expect(int(instances[ifPresent: 0]?.objectValue ?? JSONObject(), "index") == 0)
        #expect(answers(instances[ifPresent: 0]) == [.string("Ann"), .int(7)])
        #expect(answers(instances[ifPresent: 1]) == [.string("Ben"), .null])
        // The text written straight into the buffer is the tree's.
        var written = JSONOutput()
        s.writeResult(to: &written)
        #expect(written.finishString() == JSONWriter.string(s.resultJSON()))
    }

    @Test func backGoesThroughTheInstancesAndKeepsEachOnesAnswers() throws {
        var s = try benTypedForTheSecondChild()
        try s.goBackward()
        #expect(stepID(s) == "age" && int(child(s), "current") == 0)
        #expect(state(s)["answer"] == .int(7))
        try s.goBackward()
        #expect(state(s)["answer"] == .string("Ann"))
        try s.goForward()
        try s.goForward()
        // The second child's answer waited in its instance.
        #expect(stepID(s) == "name" && int(child(s), "current") == 1)
        #expect(state(s)["answer"] == .string("Ben"))
    }

    @Test func addRemoveEnterAndTheirRefusals() throws {
        var s = try open()
        try refuses(&s, "noRepeatingBlock") { s throws(StepKitError) in try s.addInstance(nil) }
        try answer(&s, "2")
        try answer(&s, #""Ann""#)
        try refuses(&s, "unknownBlock") { s throws(StepKitError) in try s.addInstance("medication") }
        try refuses(&s, "belowCount") { s throws(StepKitError) in try s.removeInstance("child", at: 0) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.removeInstance("child", at: 7) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.enterInstance("child", at: 7) }
        try refuses(&s, "instanceNotReached") { s throws(StepKitError) in try s.enterInstance("child", at: 1) }
        try s.addInstance(nil)
        #expect(int(child(s), "count") == 3 && int(child(s), "overCount") == 1 && child(s)["canAdd"] == .bool(false))
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in try s.addInstance("child") }
        try answer(&s, "7")
        try answer(&s, #""Ben""#)
        try answer(&s, "5")
        // The third, added, instance follows.
        #expect(stepID(s) == "name" && int(child(s), "current") == 2)
        try s.setAnswer(try json(#""Cy""#))
        // Removing the second child: its answers and visits go, Cy becomes the second.
        _ = s.events.take()
        try s.removeInstance("child", at: 1)
        #expect(s.events.take().contains { $0.objectValue?["type"] == .string("instanceRemoved") })
        #expect(int(child(s), "count") == 2 && int(child(s), "current") == 1)
        #expect(child(s)["titles"] == (try json(#"["Child 1: Ann", "Child 2: Cy"]"#)))
        #expect(stepID(s) == "name" && state(s)["answer"] == .string("Cy"))
        try refuses(&s, "belowCount") { s throws(StepKitError) in try s.removeInstance(nil, at: 1) }
        // Entering the first instance goes back to its first step, its answers kept.
        try s.enterInstance("child", at: 0)
        #expect(stepID(s) == "name" && int(child(s), "current") == 0 && state(s)["answer"] == .string("Ann"))
        try s.goForward()
        try s.goForward()
        #expect(int(child(s), "current") == 1 && state(s)["answer"] == .string("Cy"))
        // Both writers agree (the trees are the oracle): the state inside the block, the result.
        var state = JSONOutput()
        s.writeState(events: [], to: &state)
        var tree = try #require(s.stateJSON().objectValue)
        tree["events"] = .array([])
        #expect(state.finishString() == JSONWriter.string(.object(tree)))
        var result = JSONOutput()
        s.writeResult(to: &result)
        #expect(result.finishString() == JSONWriter.string(s.resultJSON()))
        // Saved and restored after all this: the same run, which the replay accepts.
        try expectRestoresExactly(s)
    }

    @Test func removingTheInstanceTheParticipantIsInGoesBack() throws {
        var s = try open()
        try answer(&s, "1")
        try answer(&s, #""Ann""#)
        try s.addInstance(nil)
        try answer(&s, "7")
        #expect(int(child(s), "current") == 1)
        try s.setAnswer(try json(#""Ben""#))
        try s.removeInstance("child", at: 1)
        // Back on the first child's last step, reopened; Ben is gone.
        #expect(stepID(s) == "age" && int(child(s), "current") == 0 && int(child(s), "count") == 1)
        #expect(state(s)["answer"] == .int(7))
        try s.goForward()
        #expect(stepID(s) == "done")
        let saved = try expectRestoresExactly(s)
        // Ben is gone from the answers and the path (the audit trail keeps the clearing).
        let document = try json(saved).objectValue ?? JSONObject()
        #expect(!JSONWriter.string(document["answers"] ?? .null).contains("Ben"))
        #expect(!JSONWriter.string(document["path"] ?? .null).contains("Ben"))
        #expect(!JSONWriter.string(document["stepInstances"] ?? .null).contains("Ben"))
    }

    @Test func aCountOfZeroPassesOverTheBlockAndOneOutOfBoundsIsRefused() throws {
        var s = try open()
        try refuses(&s, "countOutOfRange") { s throws(StepKitError) in try s.setAnswer(try! JSONParser.parse("5")) }
        try answer(&s, "0")
        #expect(stepID(s) == "done")
        #expect(state(s)["navigation"]?.objectValue?["arrival"] == (try json(#"[{"skipped": "child", "by": "noInstances"}]"#)))
    }

    @Test func requiredAtCompletionIsCheckedPerInstance() throws {
        let text = household.replacing(#"{"identifier": "household", "#, with: #"{"identifier": "household", "requiredAnswersChecked": "atCompletion", "#)
        var s = try open(text)
        try answer(&s, "2")
        try answer(&s, #""Ann""#)
        try s.goForward()
        try s.goForward()   // the second child's name left unanswered
        try s.goForward()
        #expect(stepID(s) == "done")
        let missing = s.missingAnswers().map(\.path.description)
        #expect(missing == ["child[1].name"])
        #expect(throws: StepKitError.self) { try s.goForward() }
    }

    @Test func restorationRefusesInstancesPastTheBounds() throws {
        let s = try benTypedForTheSecondChild()
        let saved = try Restoration.saveText(s)
        let task = s.task
        var document = try #require(try json(saved).objectValue)
        document["integrity"] = nil
        #expect(document["stepInstances"] != nil)
        // Instances past maxCount (3).
        var past = document
        past["stepInstances"] = try json(#"{"child": {"made": 7, "current": 1, "parked": []}}"#)
        #expect(throws: StepKitError.self) { try Restoration.restore(text: try Restoration.resignedText(past), task: task) }
        // A visit in instance 5 of a block of at most 3.
        var visit = document
        var path = try #require(visit["path"]?.arrayValue)
        var last = try #require(path.last?.objectValue)
        last["instance"] = .int(5)
        path[path.count - 1] = .object(last)
        visit["path"] = .array(path)
        #expect(throws: StepKitError.self) { try Restoration.restore(text: try Restoration.resignedText(visit), task: task) }
        // Parked answers of a step outside the block.
        var outside = document
        outside["stepInstances"] = try json(#"{"child": {"made": 2, "current": 1, "parked": [{"index": 0, "answers": {"howMany": 2}}]}}"#)
        #expect(throws: StepKitError.self) { try Restoration.restore(text: try Restoration.resignedText(outside), task: task) }
        // The data as saved restores exactly.
        let restored = try Restoration.restore(text: try Restoration.resignedText(document), task: task)
        #expect(try Restoration.saveText(restored) == saved)
    }

    @Test func aResultWithInstancesIsVerified() throws {
        var s = try open()
        try answer(&s, "1")
        try answer(&s, #""Ann""#)
        try s.addInstance(nil)   // one more than the count: the participant added it
        try answer(&s, "7")
        try answer(&s, #""Ben""#)
        try s.skip()
        try s.goForward()
        let result = s.resultJSON()
        let report = try #require(try Verification.verify(result, task: s.task, options: VerifyOptions()).objectValue)
        #expect(report["verified"] == .bool(true), "\(JSONWriter.string(report["divergences"] ?? .null))")
        // The engine's own result is the submitted one.
        #expect(report["result"] == result)
        // A submission whose second child answers differently from what its result says is caught.
        let forged = JSONWriter.string(result).replacing(#""answer":"Ben""#, with: #""answer":7"#)
        let refused = try #require(try Verification.verify(try json(forged), task: s.task, options: VerifyOptions()).objectValue)
        #expect(refused["verified"] == .bool(false))
    }

    @Test func migrationCarriesEveryInstanceOver() throws {
        let s = try benTypedForTheSecondChild()
        let saved = try Restoration.saveText(s)
        // The new version adds a step to the block.
        let next = household.replacing(#"{"type": "question", "identifier": "age""#,
                                       with: #"{"type": "question", "identifier": "school", "optional": true, "answerFormat": {"type": "text"}}, {"type": "question", "identifier": "age""#)
        let migrated = try Restoration.restore(text: saved, task: try compile(next), options: .migrating)
        // The walk stops at the first step needing the participant: the first child's new step.
        #expect(stepID(migrated) == "school" && int(child(migrated), "current") == 0)
        #expect(migrated.instanceAnswers(block: 0, instance: 1)[migrated.task.stepIndex["name"] ?? -1] == .string("Ben"))
    }
}
