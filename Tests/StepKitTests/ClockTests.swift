import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Time: exact restore of a running timer, a start date a new clock may still set, and total
/// arithmetic on any clock value (INT64_MIN, INT64_MAX, jumps back, a restored elapsed time near
/// INT64_MAX). A trap here would kill the test process, so every test also checks "no crash".
@Suite struct ClockTests {
    static let start: Int64 = 1_767_225_600_000

    /// The walk (ActiveTests.swift) on a manual clock, with recorders writing to a fresh directory.
    func open() throws -> (Session, ManualClock) {
        let clock = ManualClock(ClockTests.start)
        var options = SessionOptions()
        options.outputDirectory = temporaryDirectory()
        options.continueOnRecorderFailure = true
        return (Session(task: try compile(walk), options: options, clock: clock.clock), clock)
    }

    /// The walk with its "walking" step running for 20 s, a sample recorded.
    func walking() throws -> (Session, ManualClock) {
        var (s, clock) = try open()
        try s.goForward()
        clock.now += 5000
        s.tick()
        #expect(s.stepID == "walking")
        clock.now += 20_000
        try s.record("accel", .object(["t": .int(1)]))
        return (s, clock)
    }

    func restore(_ text: String, _ s: Session, clock: Clock) throws -> Session {
        let restored = text.withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: clock) }
        }
        return try restored.get()
    }

    func elapsed(_ s: Session) -> JSON? { s.stateJSON().objectValue?["active"]?.objectValue?["elapsed"] }

    // MARK: Saturating arithmetic

    @Test func saturatingArithmeticIsTotal() {
        #expect(Int64.max.addingSaturated(1) == .max)
        #expect(Int64.min.addingSaturated(-1) == .min)
        #expect(Int64.min.subtractingSaturated(1) == .min)
        #expect(Int64.max.subtractingSaturated(-1) == .max)
        #expect(Int64(-2_000_000_000_000).subtractingSaturated(.max) == .min)
        #expect(Int64(0).subtractingSaturated(.min) == .max)
        #expect(Int64(5).subtractingSaturated(7) == -2)
        #expect(Int64.max.multipliedSaturated(by: 2) == .max)
        #expect(Int64.min.multipliedSaturated(by: 2) == .min)
        #expect(Int64.min.multipliedSaturated(by: -1) == .max)
        #expect(Int64(7).clamped(0, 5) == 5)
        #expect(Int64(-7).clamped(0, 5) == 0)
        #expect(Int.max.addingSaturated(1) == .max)
        #expect(CivilTime.iso8601(milliseconds: .min) == "0000-01-01T00:00:00.000Z")
        #expect(CivilTime.iso8601(milliseconds: .max) == "9999-12-31T23:59:59.999Z")
    }

    // MARK: Exact restore

    /// The restore reads its own clock (in the ABI: the system clock), and that clock moves on
    /// before the host sets its own. The first clock set after the restore takes the restore over:
    /// the state, and the restoration data written again, equal the saved ones exactly.
    @Test func restoreIsExactWhenTheClockIsSetAfterTheRestore() throws {
        var (s, clock) = try walking()
        _ = s.takeEvents()  // events are not restoration data
        let text = try Restoration.saveText(s)
        let restoreClock = ManualClock(clock.now + 3_600_000)
        var back = try restore(text, s, clock: restoreClock.clock)
        restoreClock.now += 7
        back.setClock(clock.clock)
        #expect(back.stateJSON() == s.stateJSON())
        #expect(elapsed(back) == .int(20))
        #expect(back.resultJSON() == s.resultJSON())
        #expect(try Restoration.saveText(back) == text)
        clock.now += 40_000
        s.tick()
        back.tick()
        #expect(back.takeEvents() == s.takeEvents())
        #expect(back.stepID == "rest")
        #expect(back.stateJSON() == s.stateJSON())
        #expect(try Restoration.saveText(back) == Restoration.saveText(s))
    }

    /// Only the first clock after a restore takes the restore over; a later one carries on.
    @Test func onlyTheFirstClockAfterARestoreTakesItOver() throws {
        let (s, clock) = try walking()
        let text = try Restoration.saveText(s)
        var back = try restore(text, s, clock: ManualClock(0).clock)
        back.setClock(clock.clock)
        clock.now += 5000
        let other = ManualClock(ClockTests.start + 3_600_000)
        back.setClock(other.clock)
        #expect(elapsed(back) == .int(25))
        other.now += 1000
        #expect(elapsed(back) == .int(26))
    }

    /// Something happening on the restore's clock settles it: a clock set afterwards carries on.
    @Test func aChangeAfterTheRestoreSettlesItsClock() throws {
        let (s, clock) = try walking()
        let text = try Restoration.saveText(s)
        let restoreClock = ManualClock(clock.now + 3_600_000)
        var back = try restore(text, s, clock: restoreClock.clock)
        restoreClock.now += 3000
        try back.record("accel", .object(["t": .int(2)]))
        back.setClock(clock.clock)
        #expect(elapsed(back) == .int(23))
    }

    /// A restored session nothing has happened to is not started over by a new clock: its start
    /// date and first step stay as saved.
    @Test func aRestoredUntouchedRunKeepsItsStart() throws {
        let (s, _) = try open()
        let text = try Restoration.saveText(s)
        var back = try restore(text, s, clock: ManualClock(0).clock)
        back.setClock(ManualClock(ClockTests.start + 86_400_000).clock)
        #expect(back.startDate == ClockTests.start)
        #expect(try Restoration.saveText(back) == text)
    }

    // MARK: Start date (issue #11, item 11)

    /// A tick with nothing due before the first answer is not "something happened": the clock set
    /// afterwards still sets the start date, so the run does not start after it ends.
    @Test func aTickWithNothingDueLeavesTheStartToANewClock() throws {
        var options = SessionOptions()
        options.continueOnRecorderFailure = true  // no outputDirectory: the walk's GPS fails at once
        var s = Session(task: try compile(walk), options: options)  // the system clock
        s.tick()
        #expect(s.touched == false)
        let clock = ManualClock(ClockTests.start)
        s.setClock(clock.clock)
        #expect(s.startDate == ClockTests.start)
        clock.now += 1000
        try s.goForward()
        try s.finish(.discarded)
        let result = s.resultJSON().objectValue
        #expect(result?["startDate"] == .string("2026-01-01T00:00:00.000Z"))
        #expect(result?["endDate"] == .string("2026-01-01T00:00:01.000Z"))
    }

    /// A tick that fires something is something happening: the start stays.
    @Test func aTickThatFiresSomethingKeepsTheStart() throws {
        let task = try compile(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a", "stepDuration": 1, "shouldStartTimerAutomatically": true}, {"type": "instruction", "identifier": "i"}]}"#)
        let first = ManualClock(ClockTests.start)
        var s = Session(task: task, options: SessionOptions(), clock: first.clock)
        first.now += 1000
        s.tick()
        #expect(s.touched)
        s.setClock(ManualClock(ClockTests.start + 5000).clock)
        #expect(s.startDate == ClockTests.start)
    }

    // MARK: Extreme clocks

    /// The clock jumps to each extreme while a step runs; every call stays total.
    @Test(arguments: [Int64.min, Int64.max, -2_000_000_000_000, 0, Int64.min + 1, Int64.max - 1])
    func clockJumpsWhileAStepRuns(to value: Int64) throws {
        var (s, clock) = try walking()
        clock.now = value
        _ = s.stateJSON()
        _ = s.nextDeadline
        s.tick()
        _ = s.stateJSON()
        _ = s.resultJSON()
        let behind = value < ClockTests.start + 5000
        if behind {
            // A clock behind the moment the step started counts no running time.
            #expect(s.stepID == "walking")
            #expect(elapsed(s) == .int(0))
        } else {
            #expect(s.stepID == "rest")
        }
        let text = try Restoration.saveText(s)
        var back = try restore(text, s, clock: ManualClock(value).clock)
        back.setClock(clock.clock)
        var state = s.stateJSON().objectValue, restored = back.stateJSON().objectValue
        if behind {
            // Restoration data keeps a running step's elapsed time, not the moment it started:
            // the restored step runs from the restore, so only the deadline differs.
            state?["nextDeadline"] = nil
            restored?["nextDeadline"] = nil
        }
        #expect(restored == state)
        for next in [Int64.max, Int64.min, 0] {
            clock.now = next
            try? s.activeOperation(.suspend)
            try? s.activeOperation(.resume)
            s.tick()
            _ = try Restoration.saveText(s)
            _ = s.resultJSON()
        }
    }

    /// Suspended at INT64_MAX, resumed at -2e12, ticked: the step's time saturates and the step
    /// finishes. The session's time never goes back before the run's latest date (the walking
    /// visit's start), so what came due is dated then, not at -2e12.
    @Test func suspendAtMaxResumeFarBackAndTick() throws {
        var (s, clock) = try walking()
        clock.now = .max
        try s.activeOperation(.suspend)
        clock.now = -2_000_000_000_000
        try s.activeOperation(.resume)
        _ = s.takeEvents()
        s.tick()
        #expect(s.stepID == "rest")
        let walked = try #require(s.path.first { s.task.step(at: $0.stepIndex)?.identifier == "walking" })
        #expect(walked.active?.finishDate == ClockTests.start + 5000)
        #expect(walked.active?.elapsedBefore == Int64.max - (ClockTests.start + 5000))
        let dates = s.takeEvents().compactMap { $0.objectValue?["date"]?.stringValue }
        #expect(!dates.isEmpty)
        #expect(dates.allSatisfy { $0 == CivilTime.iso8601(milliseconds: ClockTests.start + 5000) })
    }

    /// A step that started far back and is read at INT64_MAX: its time saturates.
    @Test func elapsedSaturates() {
        var run = ActiveRun()
        run.status = .running
        run.runningSince = -2_000_000_000_000
        run.elapsedBefore = 5
        #expect(run.elapsed(at: .max) == .max)
        #expect(run.elapsed(at: .min) == 5)
        #expect(Session.dueTime(of: 1000, elapsed: .max, now: -2_000_000_000_000, runningSince: -2_000_000_000_000) == -2_000_000_000_000)
        #expect(Session.dueTime(of: 1000, elapsed: .max, now: .max, runningSince: .min) == 1000)
        #expect(Session.dueTime(of: 1000, elapsed: 1500, now: 10_000, runningSince: 0) == 9500)
        #expect(Session.dueTime(of: 1000, elapsed: 1500, now: 10_000, runningSince: 9900) == 9900)
        #expect(Session.dueTime(of: 1000, elapsed: 1500, now: 10_000, runningSince: 20_000) == 10_000)
    }

    /// A restored elapsed time near INT64_MAX: reading, ticking and saving stay total.
    @Test func restoredElapsedNearMax() throws {
        var (s, clock) = try walking()
        try s.activeOperation(.suspend)
        s.updateCurrent { $0.active?.elapsedBefore = .max - 5 }
        let text = try Restoration.saveText(s)
        var back = try restore(text, s, clock: clock.clock)
        #expect(back.nextDeadline == nil)
        try back.activeOperation(.resume)
        #expect(back.nextDeadline == clock.now.subtractingSaturated(.max - 5 - 30_000))
        clock.now = .max
        _ = back.stateJSON()
        back.tick()
        #expect(back.stepID == "rest")
        _ = try Restoration.saveText(back)
    }

    /// A step started at INT64_MAX - 10: its deadline saturates instead of wrapping around.
    @Test func deadlineSaturatesAtTheEndOfTime() throws {
        let task = try compile(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a", "stepDuration": 60, "shouldStartTimerAutomatically": true}]}"#)
        let clock = ManualClock(.max - 10)
        var s = Session(task: task, options: SessionOptions(), clock: clock.clock)
        #expect(s.nextDeadline == .max)
        clock.now = .max
        s.tick()
        #expect(s.stepID == "a")
        _ = s.stateJSON()
    }
}
