import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Trail making (docs/active-tasks.md) from recorded taps. The layout for seed 7 is the one
/// bindings/python/tests/test_games.py draws with its own PCG32 (stream "trail#trailmaking": the
/// grid's cells in the order 4 18 5 7 16 12 6 13 19 17 2 21 9 …); every result field is worked
/// out by hand from the rule "the next target connects, any other is an error".
extension GameTests {
    /// `s` saved and restored on the same clock: the same game and state as the saved session.
    func savedAndRestored(_ s: Session, _ clock: ManualClock) throws -> Session {
        let text = JSONWriter.string(Restoration.save(s))
        let back = try text.withCString { p in
            try Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: clock.clock) }.get()
        }
        #expect(back.current?.active?.game == s.current?.active?.game)
        #expect(back.stateJSON() == s.stateJSON())
        return back
    }

    static let trailB = #"{"type": "trailmaking", "identifier": "trail", "trailType": "B"}"#

    /// Trail B with two errors: target 2 tapped when 1 ("A") was next, and target 6 when 5 was.
    static let trailTaps: [(Int64, Int)] = [(1000, 0), (1800, 2), (2500, 1), (3000, 2), (3500, 3), (4000, 4),
                                             (4200, 6), (4500, 5), (5000, 6), (5500, 7), (6000, 8), (6500, 9),
                                             (7000, 10), (7500, 11), (8000, 12)]

    func checkTrailResult(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("trailmaking"))
        #expect(r["trailType"] == .string("B"))
        #expect(r["numberOfErrors"] == .int(2))
        let taps = try #require(r["taps"]?.arrayValue)
        #expect(taps.count == 15)
        let expected: [JSON] = GameTests.trailTaps.enumerated().map { (i, tap) in
            .object(["timestamp": .number(Double(tap.0) / 1000), "index": .int(Int64(tap.1)), "incorrect": .bool(i == 1 || i == 6)])
        }
        #expect(taps == expected)
    }

    @Test func trailmakingLaysOutTheSeededTrailAndCountsErrors() throws {
        var (s, clock) = try open(GameTests.trailB)
        let state = try #require(game(s))
        let targets = try #require(state["targets"]?.arrayValue).compactMap(\.objectValue)
        #expect(targets.map { $0["label"] } == ["1", "A", "2", "B", "3", "C", "4", "D", "5", "E", "6", "F", "7"].map { .string($0) })
        // Cell c sits at column c mod 4, row c div 4 of the 4 × 6 grid; its centre in board fractions.
        let cells = [4, 18, 5, 7, 16, 12, 6, 13, 19, 17, 2, 21, 9]
        #expect(targets.map { $0["x"] } == cells.map { .number((Double($0 % 4) + 0.5) / 4) })
        #expect(targets.map { $0["y"] } == cells.map { .number((Double($0 / 4) + 0.5) / 6) })
        #expect(targets[0]["x"] == .number(0.125) && targets[0]["y"] == .number(0.25))
        #expect(state["next"] == .int(0))
        let before = s
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 500, #"{"type": "tap", "target": 13}"#) }! == (.answer, "noSuchTarget"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 500, #"{"type": "key", "key": "1"}"#) }! == (.answer, "wrongInput"))
        #expect(s.current == before.current)
        for (at, target) in GameTests.trailTaps.prefix(2) { try tap(&s, clock, at: at, target) }
        #expect(game(s)?["next"] == .int(1))
        #expect(game(s)?["numberOfErrors"] == .int(1))
        for (at, target) in GameTests.trailTaps.dropFirst(2) { try tap(&s, clock, at: at, target) }
        #expect(s.currentStep?.identifier == "done")
        try checkTrailResult(result(s, step: "trail"))
    }

    @Test func trailmakingALabelsNumbersAndDefaultsToA() throws {
        let (s, _) = try open(#"{"type": "trailmaking", "identifier": "trail"}"#)
        let targets = try #require(game(s)?["targets"]?.arrayValue).compactMap(\.objectValue)
        #expect(targets.map { $0["label"] } == (1...13).map { .string(String($0)) })
        #expect(game(s)?["trailType"] == .string("A"))
        #expect(!problems(GameTests.task(#"{"type": "trailmaking", "identifier": "t", "trailType": "C"}"#)).isEmpty)
    }

    @Test func trailmakingRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.trailB)
        for (at, target) in GameTests.trailTaps.prefix(7) { try tap(&s, clock, at: at, target) }
        var back = try savedAndRestored(s, clock)
        for (at, target) in GameTests.trailTaps.dropFirst(7) {
            try tap(&back, clock, at: at, target)
            try tap(&s, clock, at: at, target)
        }
        try checkTrailResult(result(back, step: "trail"))
        #expect(result(back, step: "trail") == result(s, step: "trail"))
    }
}
