import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Two-finger tapping (docs/active-tasks.md) from recorded touches: the engine's view is 375 ×
/// 667 points, the left button the rectangle x 50–150, y 517–617 and the right one x 225–325,
/// the same heights (left and top edges in, right and bottom out); the test runs `duration`
/// from the first touch on a button. Every result field is worked out by hand from those rules.
extension GameTests {
    static let tapping = #"{"type": "tappingInterval", "identifier": "tap", "duration": 2, "hand": "right"}"#

    func touch(_ s: inout Session, _ clock: ManualClock, at offset: Int64, _ x: Double, _ y: Double, duration: Int64? = nil) throws(StepKitError) {
        let extra = duration.map { #", "duration": \#($0)"# } ?? ""
        try send(&s, clock, at: offset, #"{"type": "touch", "x": \#(x), "y": \#(y)\#(extra)}"#)
    }

    /// Before the first touch on a button nothing counts; from 1 s the test runs to 3 s.
    static let tappingTouches: [(Int64, Double, Double, Int64?)] = [
        (500, 10, 10, nil),          // on no button, before the start: not a sample
        (1000, 60, 520, nil),        // left: the test starts, ends at 3 s
        (1200, 300, 600, 80),        // right, held 80 ms
        (1400, 150, 560, nil),       // x = 150 is the left button's right edge: out, "none"
        (1600, 50, 517, nil),        // the left button's top-left corner: in
        (2999, 324.5, 616.5, nil),   // right
    ]

    func checkTappingResult(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("tappingInterval"))
        #expect(r["stepViewSize"] == .object(["width": .number(375), "height": .number(667)]))
        #expect(r["buttonRect1"] == .object(["x": .number(50), "y": .number(517), "width": .number(100), "height": .number(100)]))
        #expect(r["buttonRect2"] == .object(["x": .number(225), "y": .number(517), "width": .number(100), "height": .number(100)]))
        #expect(r["totalTaps"] == .int(4))
        #expect(r["leftTaps"] == .int(2))
        #expect(r["rightTaps"] == .int(2))
        func sample(_ t: Double, _ d: Double, _ button: String, _ x: Double, _ y: Double) -> JSON {
            .object(["timestamp": .number(t), "duration": .number(d), "buttonIdentifier": .string(button),
                     "location": .object(["x": .number(x), "y": .number(y)])])
        }
        #expect(r["samples"] == .array([sample(1, 0, "left", 60, 520), sample(1.2, 0.08, "right", 300, 600), sample(1.4, 0, "none", 150, 560),
                                        sample(1.6, 0, "left", 50, 517), sample(2.999, 0, "right", 324.5, 616.5)]))
    }

    @Test func tappingCountsTouchesOnEachButtonForItsDuration() throws {
        var (s, clock) = try open(GameTests.tapping)
        #expect(game(s)?["hand"] == .string("right"))
        #expect(game(s)?["started"] == .bool(false))
        #expect(s.nextDeadline == nil)
        #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 100, #"{"type": "tap", "target": 1}"#) }! == (.answer, "wrongInput"))
        for (at, x, y, d) in GameTests.tappingTouches { try touch(&s, clock, at: at, x, y, duration: d) }
        #expect(game(s)?["endsAt"] == .number(3))
        #expect(game(s)?["totalTaps"] == .int(4))
        #expect(s.nextDeadline == GameTests.t0 + 3000)
        // A touch at the end is too late: the test was over by then.
        #expect(refusal { () throws(StepKitError) in try touch(&s, clock, at: 3000, 60, 520) }! == (.answer, "gameOver"))
        _ = s.takeEvents()
        tickAt(&s, clock, 3500)
        #expect(s.currentStep?.identifier == "done")
        let over = s.takeEvents().first { $0.objectValue?["type"] == .string("gameOver") }
        #expect(over?.objectValue?["date"] == .string(CivilTime.iso8601(milliseconds: GameTests.t0 + 3000)))
        try checkTappingResult(result(s, step: "tap"))
    }

    @Test func tappingRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.tapping)
        for (at, x, y, d) in GameTests.tappingTouches.prefix(3) { try touch(&s, clock, at: at, x, y, duration: d) }
        var back = try savedAndRestored(s, clock)
        for (at, x, y, d) in GameTests.tappingTouches.dropFirst(3) { try touch(&back, clock, at: at, x, y, duration: d) }
        tickAt(&back, clock, 3000)
        try checkTappingResult(result(back, step: "tap"))
    }

    @Test func touchInputsAreChecked() throws {
        var (s, clock) = try open(GameTests.tapping)
        for bad in [#"{"type": "touch", "x": 1}"#, #"{"type": "touch", "x": 1, "y": 2, "duration": -1}"#,
                    #"{"type": "touch", "x": 1, "y": 2, "duration": 1.5}"#, #"{"type": "touch", "x": 1, "y": 2, "target": 1}"#] {
            #expect(refusal { () throws(StepKitError) in try send(&s, clock, at: 100, bad) }!.0 == .invalidArgument)
        }
        #expect(!problems(GameTests.task(#"{"type": "tappingInterval", "identifier": "t", "duration": 0.5}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "tappingInterval", "identifier": "t", "hand": "both"}"#)).isEmpty)
    }

    // MARK: Hole peg

    /// Placing 3 pegs moving left, into a hole turned 90° (tolerance 0.2 board units and 0.2 ×
    /// 90° = 18°): the peg's spot (0.75, 0.5), the hole (0.25, 0.5).
    static let holePeg = #"{"type": "holePegTestPlace", "identifier": "peg", "numberOfPegs": 3, "rotated": true, "dominantHand": false}"#

    static let pegDrops: [(Int64, Double, Double, Double)] = [
        (1000, 0.25, 0.5, 90),      // in the hole, turned right: success; 1 s, 0.5 units
        (2500, 0.25, 0.75, 90),     // 0.25 from the hole: failure
        (3000, 0.375, 0.5, 30),     // near, but 60° off: failure
        (4000, 0.375, 0.5, 460),    // 460° is 100°, 10° off: success; 3 s since the last, 0.375 units
        (4500, 0.25, 0.5, -270),    // −270° is 90°: success; 0.5 s, 0.5 units
    ]

    func drop(_ s: inout Session, _ clock: ManualClock, _ d: (Int64, Double, Double, Double)) throws {
        try send(&s, clock, at: d.0, #"{"type": "touch", "x": \#(d.1), "y": \#(d.2), "rotation": \#(d.3)}"#)
    }

    func checkPegResult(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("holePegTestPlace"))
        #expect(r["movingDirection"] == .string("left"))
        #expect(r["dominantHand"] == .bool(false))
        #expect(r["numberOfPegs"] == .int(3))
        #expect(r["threshold"] == .number(0.2))
        #expect(r["rotated"] == .bool(true))
        #expect(r["totalSuccesses"] == .int(3))
        #expect(r["totalFailures"] == .int(2))
        #expect(r["totalTime"] == .number(4.5))
        #expect(r["totalDistance"] == .number(1.375))
        #expect(r["samples"] == .array([(1.0, 0.5), (3.0, 0.375), (0.5, 0.5)].map { .object(["time": .number($0.0), "distance": .number($0.1)]) }))
    }

    @Test func holePegPlacesPegsWithinTheThresholdAndTurn() throws {
        var (s, clock) = try open(GameTests.holePeg)
        #expect(game(s)?["hole"] == .object(["x": .number(0.25), "y": .number(0.5)]))
        #expect(game(s)?["from"] == .object(["x": .number(0.75), "y": .number(0.5)]))
        #expect(game(s)?["holeAngle"] == .number(90))
        for d in GameTests.pegDrops.prefix(3) { try drop(&s, clock, d) }
        #expect(game(s)?["peg"] == .int(2))
        #expect(game(s)?["totalFailures"] == .int(2))
        for d in GameTests.pegDrops.dropFirst(3) { try drop(&s, clock, d) }
        #expect(s.currentStep?.identifier == "done")
        try checkPegResult(result(s, step: "peg"))
    }

    @Test func holePegRestoresMidGameAndFinishesTheSame() throws {
        var (s, clock) = try open(GameTests.holePeg)
        for d in GameTests.pegDrops.prefix(2) { try drop(&s, clock, d) }
        var back = try savedAndRestored(s, clock)
        for d in GameTests.pegDrops.dropFirst(2) { try drop(&back, clock, d) }
        try checkPegResult(result(back, step: "peg"))
    }

    /// Removing, moving right: from the hole at (0.25, 0.5) to the spot (0.75, 0.5); the hole's
    /// turn does not matter when removing.
    @Test func holePegRemovesToTheSpot() throws {
        var (s, clock) = try open(#"{"type": "holePegTestRemove", "identifier": "peg", "numberOfPegs": 2, "movingDirection": "right", "rotated": true}"#)
        #expect(game(s)?["hole"] == .object(["x": .number(0.25), "y": .number(0.5)]))
        #expect(game(s)?["holeAngle"] == .number(0))
        try drop(&s, clock, (800, 0.5, 0.5, 0))       // 0.25 short of the spot: failure
        try drop(&s, clock, (1500, 0.75, 0.625, 45))  // 0.125 from the spot: success; 1.5 s
        try drop(&s, clock, (2000, 0.875, 0.5, 0))    // 0.125 past it: success; 0.5 s, 0.625 units
        let r = try #require(result(s, step: "peg"))
        #expect(r["type"] == .string("holePegTestRemove"))
        #expect(r["totalSuccesses"] == .int(2))
        #expect(r["totalFailures"] == .int(1))
        #expect(r["totalTime"] == .number(2))
        let first = (0.5 * 0.5 + 0.125 * 0.125).squareRoot()   // from (0.25, 0.5) to (0.75, 0.625)
        #expect(r["samples"] == .array([.object(["time": .number(1.5), "distance": .number(first)]),
                                        .object(["time": .number(0.5), "distance": .number(0.625)])]))
        #expect(r["totalDistance"] == .number(first + 0.625))
        #expect(!problems(GameTests.task(#"{"type": "holePegTestPlace", "identifier": "p", "threshold": 0}"#)).isEmpty)
        #expect(!problems(GameTests.task(#"{"type": "holePegTestPlace", "identifier": "p", "movingDirection": "up"}"#)).isEmpty)
    }
}
