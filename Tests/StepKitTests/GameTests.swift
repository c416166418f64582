import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The predefined active tasks' games (docs/active-tasks.md), driven from recorded inputs. Every
/// expected value is worked out by hand from the documented rules; the seeded sequences are those
/// a second implementation of the generator (bindings/python/tests/test_games.py, written from
/// docs/randomization.md and docs/active-tasks.md) draws for seed 7.
@Suite struct GameTests {
    static let t0: Int64 = 1_767_225_600_000

    static func task(_ game: String) -> String {
        """
        {"identifier": "games", "steps": [
          {"type": "instruction", "identifier": "intro"},
          \(game),
          {"type": "completion", "identifier": "done"}]}
        """
    }

    func open(_ game: String, seed: UInt64 = 7) throws -> (Session, ManualClock) {
        let clock = ManualClock(GameTests.t0)
        var options = SessionOptions()
        options.seed = seed
        var s = Session(task: try compile(GameTests.task(game)), options: options, clock: clock.clock)
        try s.goForward()
        return (s, clock)
    }

    /// One input at `offset` ms after the game's start, on the clock.
    func send(_ s: inout Session, _ clock: ManualClock, at offset: Int64, _ input: String) throws(StepKitError) {
        clock.now = GameTests.t0 + offset
        let value: JSON
        do { value = try json(input) } catch { throw StepKitError(.parse, code: "test", message: "bad test input") }
        try s.input(value)
    }

    func tap(_ s: inout Session, _ clock: ManualClock, at offset: Int64, _ target: Int) throws {
        try send(&s, clock, at: offset, #"{"type": "tap", "target": \#(target)}"#)
    }

    func refusal(_ body: () throws(StepKitError) -> Void) -> (Status, String)? {
        do { try body() } catch { return (error.status, error.problems.first?.code ?? "") }
        return nil
    }

    func game(_ s: Session) -> JSONObject? { s.stateJSON().objectValue?["active"]?.objectValue?["game"]?.objectValue }

    /// The game's result in the result; the result as the one-pass writer writes it
    /// (`stepkit_session_result`) is the tree's, game included.
    func result(_ s: Session, step: String) -> JSONObject? {
        var output = JSONOutput()
        s.writeResult(to: &output)
        #expect(String(decoding: output.finishBytes(), as: UTF8.self) == JSONWriter.string(s.resultJSON()))
        guard let steps = s.resultJSON().objectValue?["results"]?.arrayValue else { return nil }
        let stepResult = steps.last { $0.objectValue?["identifier"] == .string(step) }
        return stepResult?.objectValue?["results"]?.arrayValue?.first { $0.objectValue?["type"] != .string("file") }?.objectValue
    }

    static let span = #"{"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 3, "minimumSpan": 2, "maximumSpan": 5, "maximumTests": 4, "maximumConsecutiveFailures": 2}"#

    /// Games 1–4 of seed 7 (spans 3, 4, 3, 4 on a 3 × 3 board): success, failure, success,
    /// failure, then the fourth test ends the game.
    func playSpan(_ s: inout Session, _ clock: ManualClock, from: Int = 0) throws {
        let taps: [(Int64, Int)] = [(3500, 4), (4000, 3), (4500, 5),   // game 1 [4 3 5], shown 0–3 s: success
                                    (9000, 5), (9500, 1),              // game 2 [5 0 2 7], shown 4.5–8.5 s: 1 is wrong
                                    (13000, 7), (13500, 5), (14000, 6), // game 3 [7 5 6], shown 9.5–12.5 s: success
                                    (18500, 3)]                        // game 4 [0 1 4 5], shown 14–18 s: 3 is wrong
        for (at, target) in taps.dropFirst(from) { try tap(&s, clock, at: at, target) }
    }

    func checkSpanResult(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("spatialSpanMemory"))
        // ResearchKit's score: (round(log2 k) + 1) × 5 for the k-th right tap, the same for a
        // whole sequence of k: game 1 5 + 10 + 15 + 15 = 45, game 2 (one right tap) 5, game 3 45.
        #expect(r["score"] == .int(95))
        #expect(r["numberOfGames"] == .int(4))
        #expect(r["numberOfFailures"] == .int(2))
        let records = try #require(r["gameRecords"]?.arrayValue).compactMap(\.objectValue)
        #expect(records.map { $0["sequence"] } == [[4, 3, 5], [5, 0, 2, 7], [7, 5, 6], [0, 1, 4, 5]].map { .array($0.map { .int($0) }) })
        #expect(records.map { $0["gameStatus"] } == ["success", "failure", "success", "failure"].map { .string($0) })
        #expect(records.map { $0["score"] } == [45, 5, 45, 0].map { .int($0) })
        #expect(records.map { $0["gameSize"] } == [9, 9, 9, 9].map { .int($0) })
        #expect(records.map { $0["seed"] } == Array(repeating: .int(7), count: 4))
        #expect(records.map { $0["stream"] } == (1...4).map { .string("span#game\($0)") })
        let second = try #require(records[1]["touchSamples"]?.arrayValue)
        #expect(second == [.object(["timestamp": .number(9), "targetIndex": .int(5), "correct": .bool(true)]),
                           .object(["timestamp": .number(9.5), "targetIndex": .int(1), "correct": .bool(false)])])
    }

    @Test func spatialSpanPlaysFromRecordedTaps() throws {
        var (s, clock) = try open(GameTests.span)
        let state = try #require(game(s))
        #expect(state["sequence"] == .array([4, 3, 5].map { .int($0) }))
        #expect(state["rows"] == .int(3))
        #expect(state["tapsFrom"] == .number(3))
        // Taps before the sequence has been shown, on no tile, or of another kind are refused
        // and change nothing.
        let before = s
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 2999, #"{"type": "tap", "target": 4}"#) }! == (.answer, "sequencePlaying"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 3000, #"{"type": "tap", "target": 9}"#) }! == (.answer, "noSuchTarget"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 3000, #"{"type": "key", "key": "a"}"#) }! == (.answer, "wrongInput"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 3000, #"{"type": "tap", "target": 4, "extra": 1}"#) }!.0 == .invalidArgument)
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 3000, #"{"type": "tap", "target": 4, "time": \#(GameTests.t0 + 5000)}"#) }! == (.invalidArgument, "inputTime"))
        #expect(s.current == before.current)
        try playSpan(&s, clock)
        // Over after maximumTests: the step finished at the last tap and the task moved on.
        #expect(s.currentStep?.identifier == "done")
        try checkSpanResult(result(s, step: "span"))
    }

    @Test func spatialSpanStopsAfterConsecutiveFailuresAndSpanGoesDown() throws {
        var (s, clock) = try open(GameTests.span)
        try tap(&s, clock, at: 3000, 0)            // game 1 [4 3 5]: wrong; span 3 → 2
        #expect(game(s)?["sequence"] == .array([0, 2].map { .int($0) }))
        #expect(game(s)?["rows"] == .int(2))      // span 2: 2 × 2 ≥ 4
        try tap(&s, clock, at: 5000, 2)            // game 2 [0 2], shown 3–5 s: wrong; 2 failures in a row
        #expect(s.currentStep?.identifier == "done")
        let r = try #require(result(s, step: "span"))
        #expect(r["score"] == .int(0))
        #expect(r["numberOfGames"] == .int(2))
        #expect(r["numberOfFailures"] == .int(2))
    }

    @Test func spatialSpanReversedIsTappedBackwards() throws {
        var (s, clock) = try open(#"{"type": "spatialSpanMemory", "identifier": "span", "requireReversal": true, "maximumTests": 1}"#)
        for (i, target) in [5, 3, 4].enumerated() { try tap(&s, clock, at: 3000 + Int64(i) * 100, target) }
        let r = try #require(result(s, step: "span"))
        #expect(r["score"] == .int(45))
        #expect(r["numberOfFailures"] == .int(0))
    }

    /// ResearchKit's points for the k-th right tap, (round(log2 k) + 1) × 5, worked out by hand
    /// from log2 1 … 12 = 0, 1, 1.58, 2, 2.32, 2.58, 2.81, 3, 3.17, 3.32, 3.46, 3.58.
    @Test func spatialSpanPointsFollowResearchKit() {
        #expect((1...12).map(SpatialSpanGame.points) == [5, 10, 15, 15, 15, 20, 20, 20, 20, 20, 20, 25])
    }

    /// A tap on a tile already tapped right is recorded and passed over; 20 s without a right
    /// tap ends a sequence as a timeout (a failure: the span goes down).
    @Test func spatialSpanRetapIsPassedOverAndInactivityTimesOut() throws {
        var (s, clock) = try open(GameTests.span)
        #expect(s.nextDeadline == GameTests.t0 + 23_000)          // shown 0–3 s, then 20 s
        try tap(&s, clock, at: 3500, 4)                               // game 1 [4 3 5]: right
        try tap(&s, clock, at: 3600, 4)                               // again: passed over
        #expect(game(s)?["tapped"] == .int(1))
        #expect(game(s)?["score"] == .int(5))
        #expect(s.nextDeadline == GameTests.t0 + 23_500)
        clock.now = GameTests.t0 + 23_500
        s.tick()                                                      // game 1 timed out; game 2 (span 2) from 23.5 s
        #expect(game(s)?["gameNumber"] == .int(2))
        #expect(game(s)?["span"] == .int(2))
        #expect(game(s)?["showFrom"] == .number(23.5))
        clock.now = GameTests.t0 + 60_000
        s.tick()                                                      // game 2 timed out at 45.5 s: 2 failures in a row
        #expect(s.currentStep?.identifier == "done")
        let r = try #require(result(s, step: "span"))
        #expect(r["numberOfGames"] == .int(2))
        #expect(r["numberOfFailures"] == .int(2))
        #expect(r["score"] == .int(5))
        let records = try #require(r["gameRecords"]?.arrayValue).compactMap(\.objectValue)
        #expect(records.map { $0["gameStatus"] } == [.string("timeout"), .string("timeout")])
        #expect(records[0]["touchSamples"] == .array([
            .object(["timestamp": .number(3.5), "targetIndex": .int(4), "correct": .bool(true)]),
            .object(["timestamp": .number(3.6), "targetIndex": .int(4), "correct": .bool(false)]),
        ]))
    }

    /// Restoration data saved before the scoring followed ResearchKit's (no "rules") replays and
    /// is rescored, not refused; data naming another revision is damaged.
    @Test func aGameSavedUnderTheFirstRulesIsRescored() throws {
        var (t, clock) = try open(GameTests.span)
        for (at, target) in [(3500, 4), (4000, 3), (4500, 5)] as [(Int64, Int)] { try tap(&t, clock, at: at, target) }
        for (rules, restores) in [(JSON?.none, true), (JSON.int(7), false)] {
            guard case .object(var document) = Restoration.save(t) else { Issue.record("no save"); return }
            document["integrity"] = nil
            guard case .array(var path)? = document["path"],
                  let at = path.lastIndex(where: { $0.objectValue?["active"]?.objectValue?["game"] != nil }),
                  case .object(var visit) = path[at], case .object(var active)? = visit["active"],
                  case .object(var savedGame)? = active["game"] else {
                Issue.record("no saved game"); return
            }
            savedGame["rules"] = rules
            savedGame["result"] = .object(["score": .int(3)])   // revision 1's score of the first game
            active["game"] = .object(savedGame); visit["active"] = .object(active); path[at] = .object(visit)
            document["path"] = .array(path)
            let unsigned = JSONWriter.string(.object(document))
            guard case .object(var signed) = try json(unsigned) else { return }
            signed["integrity"] = .object(["algorithm": .string("SHA-256"), "digest": .string(try Digest.sha256(unsigned))])
            let text = JSONWriter.string(.object(signed))
            let back = text.withCString { p in
                Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: t.task, options: t.options, clock: clock.clock) }
            }
            switch back {
            case .success(let session):
                #expect(restores)
                #expect(session.stateJSON() == t.stateJSON())
            case .failure(let error):
                #expect(!restores)
                #expect(error.problems.first?.code == "damaged")
            }
        }
    }

    /// Saved after game 2's first tap and restored: the restored game is the same, and finishing
    /// both gives the same result, the one worked out by hand.
    @Test func spatialSpanRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.span)
        try playSpan(&s, clock, from: 0)
        let whole = s.resultJSON()
        var (t, clock2) = try open(GameTests.span)
        for (at, target) in [(3500, 4), (4000, 3), (4500, 5), (9000, 5)] as [(Int64, Int)] { try tap(&t, clock2, at: at, target) }
        let text = JSONWriter.string(Restoration.save(t))
        var back = try text.withCString { p in
            try Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: t.task, options: t.options, clock: clock2.clock) }.get()
        }
        #expect(back.current?.active?.game == t.current?.active?.game)
        #expect(back.stateJSON() == t.stateJSON())
        for (at, target) in [(9500, 1), (13000, 7), (13500, 5), (14000, 6), (18500, 3)] as [(Int64, Int)] { try tap(&back, clock2, at: at, target) }
        try checkSpanResult(result(back, step: "span"))
        #expect(result(back, step: "span") == result(s, step: "span"))
        _ = whole
    }

    /// A saved game whose inputs were changed (and the data signed again) does not replay to its
    /// saved result: refused.
    @Test func anEditedSavedGameIsRefused() throws {
        var (t, clock) = try open(GameTests.span)
        for (at, target) in [(3500, 4), (4000, 3)] as [(Int64, Int)] { try tap(&t, clock, at: at, target) }
        guard case .object(var document) = Restoration.save(t) else { Issue.record("no save"); return }
        document["integrity"] = nil
        var text = JSONWriter.string(.object(document))
        text = text.replacingFirst(#""target":3"#, with: #""target":8"#)
        let digest = try Digest.sha256(text)
        guard case .object(var edited) = try json(text) else { return }
        edited["integrity"] = .object(["algorithm": .string("SHA-256"), "digest": .string(digest)])
        let signed = JSONWriter.string(.object(edited))
        let outcome = signed.withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: t.task, options: t.options, clock: clock.clock) }
        }
        guard case .failure(let error) = outcome else { Issue.record("restored an edited game"); return }
        #expect(error.status == .restore)
        #expect(error.problems.first?.code == "gameMismatch")
    }

    @Test func towerOfHanoiTakesLegalMovesAndIsSolvedOnTheLastTower() throws {
        var (s, clock) = try open(#"{"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 2}"#)
        #expect(game(s)?["towers"] == .array([.array([.int(2), .int(1)]), .array([]), .array([])]))
        try send(&s, clock, at: 1000, #"{"type": "drag", "from": 0, "to": 1}"#)
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 1500, #"{"type": "drag", "from": 0, "to": 1}"#) }! == (.answer, "illegalMove"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 1500, #"{"type": "drag", "from": 2, "to": 1}"#) }! == (.answer, "illegalMove"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 1500, #"{"type": "drag", "from": 1, "to": 3}"#) }! == (.answer, "illegalMove"))
        try send(&s, clock, at: 2000, #"{"type": "drag", "from": 0, "to": 2}"#)
        try send(&s, clock, at: 3000, #"{"type": "drag", "from": 1, "to": 2}"#)
        #expect(s.currentStep?.identifier == "done")
        let r = try #require(result(s, step: "hanoi"))
        #expect(r["puzzleWasSolved"] == .bool(true))
        #expect(r["moves"] == .array([(1.0, 0, 1), (2.0, 0, 2), (3.0, 1, 2)].map { m in
            .object(["timestamp": .number(m.0), "donorTowerIndex": .int(Int64(m.1)), "recipientTowerIndex": .int(Int64(m.2))])
        }))
    }

    @Test func towerOfHanoiGivenUpIsNotSolved() throws {
        var (s, clock) = try open(#"{"type": "towerOfHanoi", "identifier": "hanoi", "numberOfDisks": 3}"#)
        try send(&s, clock, at: 1000, #"{"type": "drag", "from": 0, "to": 2}"#)
        try s.activeOperation(.finish)
        let r = try #require(result(s, step: "hanoi"))
        #expect(r["puzzleWasSolved"] == .bool(false))
        #expect(r["moves"]?.arrayValue?.count == 1)
    }

    @Test func stroopRecordsEachAttempt() throws {
        var (s, clock) = try open(#"{"type": "stroop", "identifier": "stroop", "numberOfAttempts": 3}"#)
        // Seed 7: (text, colour) = (red, blue), (yellow, blue), (red, yellow).
        #expect(game(s)?["text"] == .string("red"))
        #expect(game(s)?["color"] == .string("blue"))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 500, #"{"type": "key", "key": "purple"}"#) }! == (.answer, "wrongInput"))
        try send(&s, clock, at: 1000, #"{"type": "key", "key": "blue"}"#)
        try send(&s, clock, at: 2500, #"{"type": "tap", "target": 0}"#)
        try send(&s, clock, at: 4000, #"{"type": "key", "key": "Y"}"#)
        #expect(s.currentStep?.identifier == "done")
        let r = try #require(result(s, step: "stroop"))
        #expect(r["numberOfAttempts"] == .int(3))
        #expect(r["totalCorrect"] == .int(2))
        func attempt(_ start: Double, _ end: Double, _ color: String, _ text: String, _ selected: String, _ correct: Bool) -> JSON {
            .object(["startTime": .number(start), "endTime": .number(end), "color": .string(color), "text": .string(text),
                     "colorSelected": .string(selected), "correct": .bool(correct)])
        }
        #expect(r["attempts"] == .array([attempt(0, 1, "blue", "red", "blue", true), attempt(1, 2.5, "blue", "yellow", "red", false),
                                         attempt(2.5, 4, "yellow", "red", "yellow", true)]))
    }

    static let psat = #"{"type": "psat", "identifier": "psat", "presentationMode": "visual", "interStimulusInterval": 2, "seriesLength": 4}"#

    /// Seed 7's digits: 9 (initial), 2, 9, 2, 8, presented at 0, 2, 4, 6, 8 s.
    @Test func psatScoresAnswersWindowsAndDyads() throws {
        var (s, clock) = try open(GameTests.psat)
        #expect(game(s)?["digits"] == .array([9, 2, 9, 2, 8].map { .int($0) }))
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 1500, #"{"type": "key", "key": "11"}"#) }! == (.answer, "notYet"))
        try send(&s, clock, at: 2600, #"{"type": "key", "key": "11"}"#)       // 9 + 2: correct, 0.6 s
        // A second answer while digit 1 is still the last shown is refused.
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 3000, #"{"type": "key", "key": "11"}"#) }! == (.answer, "notYet"))
        #expect(s.nextDeadline == GameTests.t0 + 6000)                       // digit 2's window closes at 6 s
        clock.now = GameTests.t0 + 6000
        s.tick()                                                             // digit 2 (2 + 9) missed
        try send(&s, clock, at: 6400, #"{"type": "key", "key": "11"}"#)       // 9 + 2: correct, 0.4 s
        try send(&s, clock, at: 8300, #"{"type": "tap", "target": 10}"#)      // 2 + 8: correct, 0.3 s; the last digit
        #expect(s.currentStep?.identifier == "done")
        let r = try #require(result(s, step: "psat"))
        #expect(r["presentationMode"] == .string("visual"))
        #expect(r["interStimulusInterval"] == .number(2))
        #expect(r["stimulusDuration"] == .number(1))
        #expect(r["length"] == .int(4))
        #expect(r["initialDigit"] == .int(9))
        #expect(r["totalCorrect"] == .int(3))
        #expect(r["totalDyad"] == .int(1))                                   // answers 3 and 4
        // ResearchKit's totalTime: every sample's time, an unanswered digit its whole interval:
        // 0.6 + 2 + 0.4 + 0.3.
        #expect(r["totalTime"] == .number(3.3))
        #expect(r["samples"] == .array([
            .object(["correct": .bool(true), "digit": .int(2), "answer": .int(11), "time": .number(0.6)]),
            .object(["correct": .bool(false), "digit": .int(9), "answer": .int(-1), "time": .number(2)]),
            .object(["correct": .bool(true), "digit": .int(2), "answer": .int(11), "time": .number(0.4)]),
            .object(["correct": .bool(true), "digit": .int(8), "answer": .int(10), "time": .number(0.3)]),
        ]))
    }

    /// No answers: one tick long after the end closes every window and ends the step when the
    /// last one closed (10 s), not when the host asked.
    @Test func psatUnansweredEndsWhenTheLastWindowCloses() throws {
        var (s, clock) = try open(GameTests.psat)
        _ = s.takeEvents()
        clock.now = GameTests.t0 + 60_000
        s.tick()
        #expect(s.currentStep?.identifier == "done")
        let over = s.takeEvents().first { $0.objectValue?["type"] == .string("gameOver") }
        #expect(over?.objectValue?["date"] == .string(CivilTime.iso8601(milliseconds: GameTests.t0 + 10_000)))
        let r = try #require(result(s, step: "psat"))
        #expect(r["totalCorrect"] == .int(0))
        #expect(r["samples"]?.arrayValue?.count == 4)
    }

    @Test func psatRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.psat)
        try send(&s, clock, at: 2600, #"{"type": "key", "key": "11"}"#)
        clock.now = GameTests.t0 + 6000
        s.tick()
        let text = JSONWriter.string(Restoration.save(s))
        var back = try text.withCString { p in
            try Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: clock.clock) }.get()
        }
        #expect(back.stateJSON() == s.stateJSON())
        for session in [0, 1] {
            var t = session == 0 ? s : back
            try send(&t, clock, at: 6400, #"{"type": "key", "key": "11"}"#)
            try send(&t, clock, at: 8300, #"{"type": "tap", "target": 10}"#)
            let r = try #require(result(t, step: "psat"))
            #expect(r["totalCorrect"] == .int(3))
            #expect(r["totalDyad"] == .int(1))
            #expect(r["totalTime"] == .number(3.3))
        }
    }

    @Test func inputOutsideAGameIsAStateError() throws {
        let clock = ManualClock(GameTests.t0)
        var s = Session(task: try compile(GameTests.task(GameTests.span)), options: SessionOptions(), clock: clock.clock)
        let tapJSON = try json(#"{"type": "tap", "target": 1}"#)
        #expect(refusal { () throws(StepKitError) in try s.input(tapJSON) }! == (.state, "notAGame"))
        // A task with a game that draws draws a seed when opened without one.
        #expect(s.seed != nil)
    }

    @Test func badParametersAreDefinitionErrors() {
        let found = problems(GameTests.task(#"{"type": "spatialSpanMemory", "identifier": "span", "initialSpan": 1, "playSpeed": 0.1}"#))
        #expect(found.map(\.path.description).contains("steps[1].initialSpan"))
        #expect(found.map(\.path.description).contains("steps[1].playSpeed"))
        #expect(!problems(GameTests.task(#"{"type": "psat", "identifier": "p", "presentationMode": "smell"}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "towerOfHanoi", "identifier": "h", "numberOfDisks": 9}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "stroop", "identifier": "s", "colour": 1}"#)).isEmpty)
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        let me = Array(utf8), t = Array(target.utf8)
        guard t.count <= me.count else { return self }
        for i in 0...(me.count - t.count) where Array(me[i..<i + t.count]) == t {
            return String(decoding: me[..<i] + Array(replacement.utf8) + me[(i + t.count)...], as: UTF8.self)
        }
        return self
    }
}
