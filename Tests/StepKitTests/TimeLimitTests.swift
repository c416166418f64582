import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A task with a 60-second limit, a question with a 10-second limit that moves on, and one
/// with a 5-second limit that ends the task.
let timedTask = """
{"identifier": "timed", "timeLimit": 60, "steps": [
  {"type": "question", "identifier": "q1", "timeLimit": 10, "answerFormat": {"type": "boolean"}},
  {"type": "question", "identifier": "q2", "answerFormat": {"type": "boolean"}},
  {"type": "question", "identifier": "q3", "timeLimit": 5, "onTimeLimit": "endTask", "answerFormat": {"type": "boolean"}},
  {"type": "completion", "identifier": "done"}]}
"""

private let start: Int64 = 1_767_225_600_000

@Suite struct TimeLimitTests {
    func timeLimits(_ s: Session) -> JSONObject { s.stateJSON().objectValue?["timeLimits"]?.objectValue ?? JSONObject() }

    @Test func theStateGivesRemainingTimeAndDeadline() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        clock.now = start + 4_000
        s.tick()
        let limits = timeLimits(s)
        #expect(limits["task"]?.objectValue?["remaining"] == .number(56))
        #expect(limits["step"]?.objectValue?["remaining"] == .number(6))
        #expect(limits["step"]?.objectValue?["deadline"] == .string(CivilTime.iso8601(milliseconds: start + 10_000)))
        #expect(s.stateJSON().objectValue?["nextDeadline"] == .string(CivilTime.iso8601(milliseconds: start + 10_000)))
    }

    @Test func aStepLimitMovesOnAtItsDeadline() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        clock.now = start + 9_999
        s.tick()
        #expect(s.currentStep?.identifier == "q1")
        clock.now = start + 12_000
        s.tick()
        #expect(s.currentStep?.identifier == "q2")
        // Left when the limit ran out, not when the host asked; the required answer was missing.
        #expect(s.path[0].endDate == start + 10_000)
        #expect(s.path[1].startDate == start + 10_000)
        let results = s.resultJSON().objectValue?["results"]?.arrayValue ?? []
        #expect(results.first?.objectValue?["timeSpent"] == .number(10))
    }

    @Test func aStepLimitThatEndsTheTaskFinishesTimedOut() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        try s.setAnswer(.bool(true)); try s.goForward()
        try s.setAnswer(.bool(true)); try s.goForward()
        #expect(s.currentStep?.identifier == "q3")
        clock.now = start + 7_000
        s.tick()
        #expect(s.finishReason == .timedOut)
        #expect(s.endDate == start + 5_000)
    }

    @Test func theTaskLimitEndsTheTaskTimedOut() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        try s.setAnswer(.bool(true)); try s.goForward()
        clock.now = start + 61_000
        s.tick()
        #expect(s.finishReason == .timedOut)
        #expect(s.endDate == start + 60_000)
        #expect(s.resultJSON().objectValue?["timeSpent"] == .number(60))
    }

    /// Saved at 4 s, restored an hour later: 6 s are left on the step and 56 s on the task, and
    /// the hour in between counts for neither.
    @Test func suspendAndRestoreKeepTheRemainingTimeExactly() throws {
        let task = try compile(timedTask)
        let clock = ManualClock(start)
        let s = openSession(task, seed: nil, clock: clock)
        clock.now = start + 4_000
        let text = try Restoration.saveText(s)
        let later = ManualClock(start + 3_600_000)
        var restored = try text.withCString { p in try Restoration.restore(p, task: task, options: SessionOptions(), clock: later.clock) }
        #expect(timeLimits(restored)["step"]?.objectValue?["remaining"] == .number(6))
        #expect(timeLimits(restored)["task"]?.objectValue?["remaining"] == .number(56))
        later.now += 5_999
        restored.tick()
        #expect(restored.currentStep?.identifier == "q1")
        later.now += 1
        restored.tick()
        #expect(restored.currentStep?.identifier == "q2")
        let first = restored.resultJSON().objectValue?["results"]?.arrayValue?.first?.objectValue
        #expect(first?["timeSpent"] == .number(10))
    }

    /// A limit that ran out before a call that told the host of something later (an answer set
    /// at 15 s, its limit at 10 s) and found by the tick after it is dated no earlier than that
    /// call's events, so the host's events stay in order (the clock fuzzer found one dated back).
    @Test func aLimitFoundLateIsNotDatedBeforeEventsAlreadyGiven() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        clock.now = start + 15_000
        try s.setAnswer(.bool(true))
        s.tick()
        #expect(s.currentStep?.identifier == "q2")
        let dates = s.pendingEvents.compactMap { $0.objectValue?["date"]?.stringValue }
        let reached = s.pendingEvents.first { $0.objectValue?["type"] == .string("timeLimitReached") }
        #expect(reached?.objectValue?["date"] == .string(CivilTime.iso8601(milliseconds: start + 15_000)))
        #expect(dates == dates.sorted())
        #expect(s.path[0].endDate == start + 15_000)
    }

    /// A step its limit moved on from was left without its required answer; the saved run is
    /// what the task does, so it restores (the clock fuzzer found restore refusing it), and a
    /// step left in time without it is still refused.
    @Test func aRunWhoseStepLimitLeftARequiredAnswerOutRestores() throws {
        let task = try compile(timedTask)
        let clock = ManualClock(start)
        var s = openSession(task, seed: nil, clock: clock)
        clock.now = start + 12_000
        s.tick()
        #expect(s.currentStep?.identifier == "q2")
        let text = try Restoration.saveText(s)
        let restored = try text.withCString { p in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) }
        #expect(restored.currentStep?.identifier == "q2")
        #expect(restored.path[0].answer == nil)
        // The same visit saved as left after 9 s, before its limit ran out, and signed again as
        // a writer of unkeyed data could: refused, naming the step.
        guard case .object(var document) = try json(text) else { Issue.record("saved data is not an object"); return }
        document["integrity"] = nil
        let parts = JSONWriter.string(.object(document)).split(separator: #""timeSpent":10000"#, omittingEmptySubsequences: false)
        #expect(parts.count == 2)
        guard case .object(var early) = try json(parts.joined(separator: #""timeSpent":9000"#)) else { return }
        let (algorithm, digest) = try Restoration.sign(JSONWriter.string(.object(early)), key: nil)
        early["integrity"] = .object(JSONObject(["algorithm": .string(algorithm), "digest": .string(digest)]))
        let refused = JSONWriter.string(.object(early)).withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) }
        }
        guard case .failure(let error) = refused else { Issue.record("a required answer left out in time restored"); return }
        #expect(error.problems.first?.code == "notAllowed")
        #expect(error.problems.first?.message.contains("\"q1\" was left without what it requires") == true)
    }

    @Test(arguments: ["0", "-5", "604801", "1e9", #""10""#])
    func aTimeLimitOutOfRangeIsRefused(_ limit: String) {
        let task = #"{"identifier": "t", "timeLimit": "# + limit + #", "steps": [{"type": "instruction", "identifier": "i"}]}"#
        let step = #"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "timeLimit": "# + limit + "}]}"
        #expect(problems(task).map(\.path.description) == ["timeLimit"])
        #expect(problems(step).map(\.path.description) == ["steps[0].timeLimit"])
    }

    @Test func onTimeLimitNeedsALimitAndAKnownAction() {
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "onTimeLimit": "next"}]}"#).map(\.code) == ["invalidValue"])
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "timeLimit": 3, "onTimeLimit": "later"}]}"#).map(\.code) == ["invalidValue"])
    }
}

/// The audit trail records what the session does by itself: a time limit's move and end, and a
/// selection removed because it is no longer offered.
@Suite struct TimeLimitAuditTests {
    @Test func aTimeLimitsMovesAndEndsAreAudited() throws {
        let clock = ManualClock(start)
        var s = openSession(try compile(timedTask), seed: nil, clock: clock)
        clock.now = start + 10_000
        s.tick()
        try s.setAnswer(.bool(true)); try s.goForward()
        clock.now = start + 20_000
        s.tick()
        #expect(s.finishReason == .timedOut)
        let kinds = s.auditEvents.map { "\($0.kind)/\($0.detail ?? "")" }
        #expect(kinds.contains("forward/timeLimit"))
        #expect(kinds.last == "finish/timedOut")
        #expect(s.auditEvents.last?.date == start + 15_000)
    }

    @Test func aRemovedSelectionIsAudited() throws {
        var s = openSession(try compile(filteredTask), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        try s.setAnswer(json(#"["dog", "horse"]"#))
        try s.goBackward()
        try s.setAnswer(.int(10))
        let removal = s.auditEvents.last { $0.detail == "choicesRemoved" }
        #expect(removal?.step == "owned")
        #expect(removal?.old == .array([.string("dog"), .string("horse")]))
        #expect(removal?.new == .array([.string("dog")]))
    }
}
