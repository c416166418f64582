import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Verify recomputes a game's result from the inputs it records (issue 35, docs/active-tasks.md,
/// docs/verify.md): the genuine result verifies; a field that is not what replaying the recorded
/// inputs from the seed gives is a `gameMismatch` naming the field. The games are played with
/// `GameTests`' helpers; the expected divergences follow from the documented rules.
extension GameTests {
    func verify(_ result: JSON, _ s: Session) throws -> (verified: Bool, divergences: [(code: String, path: String)], result: JSON?) {
        let report = try #require(try Verification.verify(result, task: s.task, options: VerifyOptions()).objectValue)
        let list = (report["divergences"]?.arrayValue ?? []).compactMap(\.objectValue).map {
            (code: $0["code"]?.stringValue ?? "", path: $0["path"]?.stringValue ?? "")
        }
        return (report["verified"] == .bool(true), list, report["result"])
    }

    /// `result` with the game's result (the first step result's first entry; the game step is
    /// after the instruction here: `results[1]`) changed by `change`.
    func forged(_ result: JSON, _ change: (inout JSONObject) -> Void) throws -> JSON {
        var top = try #require(result.objectValue)
        var steps = try #require(top["results"]?.arrayValue)
        var step = try #require(steps[1].objectValue)
        var entries = try #require(step["results"]?.arrayValue)
        var game = try #require(entries[0].objectValue)
        change(&game)
        entries[0] = .object(game)
        step["results"] = .array(entries)
        steps[1] = .object(step)
        top["results"] = .array(steps)
        return .object(top)
    }

    @Test func verifyRecomputesASpatialSpanGame() throws {
        var (s, clock) = try open(GameTests.span)
        try playSpan(&s, clock)
        let result = s.resultJSON()
        let game = try #require(self.result(s, step: "span"))
        #expect(game["recorded"]?.objectValue?["inputs"]?.arrayValue?.count == 9)
        let genuine = try verify(result, s)
        #expect(genuine.verified, "\(genuine.divergences)")
        // The report's result holds the recomputed game: the same as the session's.
        #expect(genuine.result == result)

        let score = try verify(try forged(result) { $0["score"] = .int(9) }, s)
        #expect(!score.verified)
        #expect(score.divergences.map(\.code) == ["gameMismatch"])
        #expect(score.divergences.map(\.path) == ["results[1].results[0].score"])
    }

    /// PSAT's windows close with time: the step time the game reached is recorded too, and a
    /// recording cut short (its time moved back) no longer gives the closed windows.
    @Test func verifyRecomputesPSATWithItsTime() throws {
        var (s, clock) = try open(GameTests.psat)
        clock.now = GameTests.t0 + 60_000
        s.tick()                                                             // every window closed, unanswered
        let result = s.resultJSON()
        let game = try #require(self.result(s, step: "psat"))
        #expect(game["recorded"] == .object(["inputs": .array([]), "time": .int(10_000)]))
        let genuine = try verify(result, s)
        #expect(genuine.verified, "\(genuine.divergences)")

        // At 5 s only digit 1's window (2–4 s) has closed: one sample, not four, and the total
        // time adds the samples' times (a missed window's whole length).
        let cut = try verify(try forged(result) { g in g["recorded"] = .object(["inputs": .array([]), "time": .int(5000)]) }, s)
        #expect(cut.divergences.map(\.code) == ["gameMismatch", "gameMismatch"])
        #expect(cut.divergences.map(\.path) == ["results[1].results[0].totalTime", "results[1].results[0].samples"])

        let dyads = try verify(try forged(result) { $0["totalDyad"] = .int(1) }, s)
        #expect(dyads.divergences.map(\.path) == ["results[1].results[0].totalDyad"])
        let extra = try verify(try forged(result) { $0["bonus"] = .int(1) }, s)
        #expect(extra.divergences.map(\.code) == ["gameMismatch"])
        #expect(extra.divergences.map(\.path) == ["results[1].results[0].bonus"])
        let shape = try verify(try forged(result) { $0["recorded"] = .object(["inputs": .int(0), "time": .int(0)]) }, s)
        #expect(shape.divergences.map(\.code) == ["wrongType"])
    }
}
