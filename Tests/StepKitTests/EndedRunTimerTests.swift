import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Issue 26, item 12: a run that ends while an active step's timer runs stops that timer, for
/// every reason it may end with, so saved data written later says what it said at the end.
@Suite struct EndedRunTimerTests {
    static let task = """
    {"identifier": "timed", "steps": [
      {"type": "instruction", "identifier": "intro", "title": "Hello"},
      {"type": "active", "identifier": "walk", "title": "Walk", "stepDuration": 60},
      {"type": "completion", "identifier": "done", "title": "Thanks"}]}
    """

    /// The saved `active` member of the walk's visit.
    func savedWalk(_ s: Session) throws -> JSONObject {
        let saved = try #require(Restoration.save(s).objectValue)
        let visit = try #require(saved["path"]?.arrayValue?.last?.objectValue)
        return try #require(visit["active"]?.objectValue)
    }

    /// A session on the walk, its timer started by the host at the clock's time.
    func walking(on clock: ManualClock) throws -> Session {
        var s = Session(task: try compile(Self.task), options: SessionOptions(), clock: clock.clock)
        try s.goForward()
        try s.activeOperation(.start)
        return s
    }

    @Test(arguments: [FinishReason.failed, .discarded, .saved, .earlyTermination])
    func aRunEndedOnARunningStepSavesTheSameTimerLater(_ reason: FinishReason) throws {
        let clock = ManualClock(1_767_225_600_000)
        var s = try walking(on: clock)
        clock.now += 5_000
        try s.finish(reason)
        let atEnd = try savedWalk(s)
        // 5 s of the step's own time when the run ended, and no more however late it is saved.
        #expect(atEnd["elapsed"] == .int(5_000))
        #expect(atEnd["status"] != .string("running"))
        clock.now += 100_000
        #expect(try savedWalk(s) == atEnd)
        // Restored an hour later, the step's time is still the 5 s it ran.
        let restoreClock = ManualClock(clock.now + 3_600_000)
        let text = try Restoration.saveText(s)
        var restored = try text.withCString { p in
            Result { () throws(StepKitError) -> Session in
                try Restoration.restore(p, task: s.task, options: s.options, clock: restoreClock.clock)
            }
        }.get()
        restored.setClock(restoreClock.clock)
        restoreClock.now += 60_000
        #expect(try savedWalk(restored)["elapsed"] == .int(5_000))
    }

    @Test func dataSavedWithTheTimerStillRunningStopsItOnRestore() throws {
        let clock = ManualClock(1_767_225_600_000)
        var s = try walking(on: clock)
        clock.now += 5_000
        try s.finish(.failed)
        // What an earlier version saved: the finished run's step still "running", 7 s counted.
        guard case .object(var document) = Restoration.save(s), var path = document["path"]?.arrayValue,
              case .object(var visit)? = path.last, case .object(var active)? = visit["active"] else {
            Issue.record("no saved walk")
            return
        }
        active["status"] = .string("running")
        active["finishDate"] = .null
        active["elapsed"] = .int(7_000)
        visit["active"] = .object(active)
        path[path.count - 1] = .object(visit)
        document["path"] = .array(path)
        document["integrity"] = nil
        document["integrity"] = .object(["algorithm": .string("SHA-256"), "digest": .string(try Digest.sha256(JSONWriter.string(.object(document))))])
        let text = JSONWriter.string(.object(document))
        let later = ManualClock(clock.now + 3_600_000)
        let restored = try text.withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: later.clock) }
        }.get()
        later.now += 60_000
        let saved = try savedWalk(restored)
        #expect(saved["elapsed"] == .int(7_000))
        #expect(saved["status"] == .string("finished"))
    }

    @Test func aStepSuspendedWhenTheRunEndsKeepsTheTimeItRan() throws {
        let clock = ManualClock(1_767_225_600_000)
        var s = try walking(on: clock)
        clock.now += 2_000
        try s.activeOperation(.suspend)
        clock.now += 10_000
        try s.finish(.failed)
        clock.now += 10_000
        let saved = try savedWalk(s)
        #expect(saved["elapsed"] == .int(2_000))
        #expect(saved["status"] == .string("suspended"))
    }
}
