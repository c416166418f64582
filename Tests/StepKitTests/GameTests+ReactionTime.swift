import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Reaction time (docs/active-tasks.md) from recorded motion samples and ticks. The delays for
/// seed 7 are those bindings/python/tests/test_games_motor.py draws with its own PCG32 (stream
/// "rt#reactionTime", 2000 + a number below 2001 ms: 3973, 2142, 2358, 3146 …); every result
/// field is worked out by hand from the documented rule.
extension GameTests {
    static let reaction = #"{"type": "reactionTime", "identifier": "rt", "minimumStimulusInterval": 2, "maximumStimulusInterval": 4, "timeout": 1.5, "numberOfAttempts": 3, "thresholdAcceleration": 0.5, "successSound": 1013, "timeoutSound": 1005, "failureSound": 1006}"#

    func sample(_ s: inout Session, _ clock: ManualClock, at offset: Int64, _ x: Double, _ y: Double, _ z: Double) throws {
        try send(&s, clock, at: offset, #"{"type": "sample", "x": \#(x), "y": \#(y), "z": \#(z)}"#)
    }

    func tickAt(_ s: inout Session, _ clock: ManualClock, _ offset: Int64) {
        clock.now = GameTests.t0 + offset
        s.tick()
    }

    /// Attempt 1: waits from 0 (stimulus at 3.973 s); a sample at the threshold at 2 s is early,
    /// so the wait starts again at 2 s (delay 2.142: stimulus 4.142); the response 0.35 s later.
    /// Attempt 2: waits from 4.492 (delay 2.358: stimulus 6.85); nothing by 6.85 + 1.5 = 8.35:
    /// timeout. Attempt 3: waits from 8.35 (delay 3.146: stimulus 11.496); response 0.2 s later.
    func playReaction(_ s: inout Session, _ clock: ManualClock, upTo part: Int = 3) throws {
        if part >= 1 {
            try sample(&s, clock, at: 1000, 0.1, 0.1, 0.1)    // under the threshold: nothing
            try sample(&s, clock, at: 2000, 0.5, 0, 0)        // |a| = 0.5: at the threshold, early
            tickAt(&s, clock, 4142)                            // the stimulus
            try sample(&s, clock, at: 4492, 0, 0, -0.8)       // response, 0.35 s
        }
        if part >= 2 { tickAt(&s, clock, 8350) }              // attempt 2 times out
        if part >= 3 { try sample(&s, clock, at: 11696, 0.6, 0, 0) }
    }

    func checkReactionResult(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("reactionTime"))
        #expect(r["numberOfAttempts"] == .int(3))
        #expect(r["numberOfTimeouts"] == .int(1))
        func attempt(_ stimulus: Double, _ delay: Double, _ response: Double?, _ early: Int64) -> JSON {
            .object(["timestamp": .number(stimulus), "stimulusDelay": .number(delay), "responseTime": response.map { .number($0) } ?? .null,
                     "timedOut": .bool(response == nil), "earlyResponses": .int(early)])
        }
        #expect(r["attempts"] == .array([attempt(4.142, 2.142, 0.35, 1), attempt(6.85, 2.358, nil, 0), attempt(11.496, 3.146, 0.2, 0)]))
    }

    @Test func reactionTimeTimesResponsesTimeoutsAndEarlyMovement() throws {
        var (s, clock) = try open(GameTests.reaction)
        #expect(game(s)?["stimulusAt"] == .number(3.973))
        #expect(game(s)?["stimulus"] == .bool(false))
        #expect(s.nextDeadline == GameTests.t0 + 3973)
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 500, #"{"type": "tap", "target": 0}"#) }! == (.answer, "wrongInput"))
        try sample(&s, clock, at: 1000, 0.1, 0.1, 0.1)
        #expect(game(s)?["lastOutcome"] == nil)
        try sample(&s, clock, at: 2000, 0.5, 0, 0)
        #expect(game(s)?["stimulusAt"] == .number(4.142))
        #expect(game(s)?["lastOutcome"] == .object(["outcome": .string("early"), "at": .number(2), "sound": .int(1006)]))
        tickAt(&s, clock, 4142)
        #expect(game(s)?["stimulus"] == .bool(true))
        #expect(s.nextDeadline == GameTests.t0 + 5642)                 // the timeout, 1.5 s on
        try sample(&s, clock, at: 4492, 0, 0, -0.8)
        #expect(game(s)?["attempt"] == .int(2))
        #expect(game(s)?["lastOutcome"] == .object(["outcome": .string("success"), "at": .number(4.492), "sound": .int(1013)]))
        tickAt(&s, clock, 8350)
        #expect(game(s)?["attempt"] == .int(3))
        #expect(game(s)?["lastOutcome"] == .object(["outcome": .string("timeout"), "at": .number(8.35), "sound": .int(1005)]))
        #expect(game(s)?["stimulusAt"] == .number(11.496))
        try sample(&s, clock, at: 11696, 0.6, 0, 0)
        #expect(s.currentStep?.identifier == "done")
        try checkReactionResult(result(s, step: "rt"))
    }

    /// No movement at all: each attempt times out, and the next waits from that moment; one tick
    /// long after ends the step when the last one timed out: stimuli at 3.973, 5.473 + 2.142 =
    /// 7.615, 9.115 + 2.358 = 11.473; the last timeout at 12.973 s.
    @Test func reactionTimeWithoutMovementTimesOutEachAttempt() throws {
        var (s, clock) = try open(GameTests.reaction)
        _ = s.takeEvents()
        tickAt(&s, clock, 60_000)
        #expect(s.currentStep?.identifier == "done")
        let over = s.takeEvents().first { $0.objectValue?["type"] == .string("gameOver") }
        #expect(over?.objectValue?["date"] == .string(CivilTime.iso8601(milliseconds: GameTests.t0 + 12_973)))
        let r = try #require(result(s, step: "rt"))
        #expect(r["numberOfTimeouts"] == .int(3))
        #expect(r["attempts"]?.arrayValue?.map { $0.objectValue?["timestamp"] } == [3.973, 7.615, 11.473].map { .number($0) })
    }

    @Test func reactionTimeRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.reaction)
        try playReaction(&s, clock, upTo: 2)
        var back = try savedAndRestored(s, clock)
        try sample(&back, clock, at: 11696, 0.6, 0, 0)
        try checkReactionResult(result(back, step: "rt"))
    }

    @Test func reactionTimeParametersAreChecked() {
        #expect(!problems(GameTests.task(#"{"type": "reactionTime", "identifier": "r", "minimumStimulusInterval": 5, "maximumStimulusInterval": 4}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "reactionTime", "identifier": "r", "thresholdAcceleration": 0}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "reactionTime", "identifier": "r", "timeout": 0}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "reactionTime", "identifier": "r", "successSound": -1}"#)).isEmpty)
        #expect(problems(GameTests.task(#"{"type": "reactionTime", "identifier": "r"}"#)).isEmpty)
    }
}
