import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A game step in a small task, played on a manual clock: the harness of the sensed games' tests
/// (range of motion, Amsler grid, tone audiometry).
struct GamePlay {
    static let t0: Int64 = 1_767_225_600_000
    var session: Session
    let clock: ManualClock

    init(_ game: String, seed: UInt64 = 7) throws {
        clock = ManualClock(GamePlay.t0)
        var options = SessionOptions()
        options.seed = seed
        let text = #"{"identifier": "games", "steps": [{"type": "instruction", "identifier": "intro"}, "# + game
            + #", {"type": "completion", "identifier": "done"}]}"#
        session = Session(task: try compile(text), options: options, clock: clock.clock)
        try session.goForward()
    }

    /// One input `offset` ms after the game's start.
    mutating func send(at offset: Int64, _ input: String) throws(StepKitError) {
        clock.now = GamePlay.t0 + offset
        let value: JSON
        do { value = try json(input) } catch { throw StepKitError(.parse, code: "test", message: "bad test input") }
        try session.input(value)
    }

    /// The status and code of `input`'s refusal (nil if taken); a refusal changes nothing.
    mutating func refusal(at offset: Int64, _ input: String) -> (Status, String)? {
        let before = session
        do { try send(at: offset, input) } catch {
            #expect(session.current == before.current)
            return (error.status, error.problems.first?.code ?? "")
        }
        return nil
    }

    mutating func tick(at offset: Int64) {
        clock.now = GamePlay.t0 + offset
        session.tick()
    }

    var game: JSONObject? { session.stateJSON().objectValue?["active"]?.objectValue?["game"]?.objectValue }

    /// The game's result; the one-pass writer's result is the tree's.
    func result(step: String) -> JSONObject? {
        var output = JSONOutput()
        session.writeResult(to: &output)
        #expect(String(decoding: output.finishBytes(), as: UTF8.self) == JSONWriter.string(session.resultJSON()))
        guard let steps = session.resultJSON().objectValue?["results"]?.arrayValue else { return nil }
        let stepResult = steps.last { $0.objectValue?["identifier"] == .string(step) }
        return stepResult?.objectValue?["results"]?.arrayValue?.first { $0.objectValue?["type"] != .string("file") }?.objectValue
    }

    /// Saved and restored on the same clock: the restored game must be the saved one.
    mutating func saveAndRestore() throws {
        let text = JSONWriter.string(Restoration.save(session))
        let (task, options, clock) = (session.task, session.options, self.clock)
        let back = try text.withCString { p in
            try Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: task, options: options, clock: clock.clock) }.get()
        }
        #expect(back.current?.active?.game == session.current?.active?.game)
        #expect(back.stateJSON() == session.stateJSON())
        session = back
    }
}

func near(_ value: JSON?, _ expected: Double, _ tolerance: Double = 1e-9) -> Bool {
    switch value {
    case .int(let i)?: return abs(Double(i) - expected) <= tolerance
    case .double(let d)?: return abs(d - expected) <= tolerance
    default: return false
    }
}

@Suite struct RangeOfMotionTests {
    static let knee = #"{"type": "rangeOfMotion", "identifier": "rom", "joint": "knee", "limbOption": "right"}"#
    /// atan(24/7) in degrees: the quaternion (0.6, 0, 0, 0.8) gives atan2(2 × 0.8 × 0.6, 1 − 2 × 0.36).
    static let atan24over7 = atan2(24.0, 7.0) * 180 / Double.pi

    /// Seven samples: 80°, 60°, the quaternion (½, ½, ½, ½) — atan2(2(¼ + ¼), 1 − 2(¼ + ¼)) =
    /// atan2(1, 0) = 90° —, 10°, −5°, the quaternion 0.9 × (0.6, 0, 0, 0.8) (normalized first:
    /// atan(24/7) ≈ 73.74°), and 5°; then the tap at 4 s.
    static let samples = [#"{"type": "sample", "x": 80, "y": 3, "z": -2}"#,
                          #"{"type": "sample", "x": 60, "y": 0, "z": 0}"#,
                          #"{"type": "sample", "x": 0.5, "y": 0.5, "z": 0.5, "w": 0.5}"#,
                          #"{"type": "sample", "x": 10, "y": 0, "z": 0}"#,
                          #"{"type": "sample", "x": -5, "y": 0, "z": 0}"#,
                          #"{"type": "sample", "x": 0.54, "y": 0, "z": 0, "w": 0.72}"#,
                          #"{"type": "sample", "x": 5, "y": 0, "z": 0}"#]

    func play(_ p: inout GamePlay, _ range: Range<Int>) throws {
        for i in range { try p.send(at: 500 + Int64(i) * 500, RangeOfMotionTests.samples[i]) }
    }

    func checkKnee(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("rangeOfMotion"))
        #expect(r["joint"] == .string("knee"))
        #expect(r["limbOption"] == .string("right"))
        #expect(r["numberOfSamples"] == .int(7))
        #expect(r["start"] == .int(80))
        #expect(r["finish"] == .int(5))
        #expect(r["minimum"] == .int(-5))
        #expect(near(r["maximum"], 90))
        #expect(near(r["range"], 95))
        // The knee starts bent and ends stretched.
        #expect(r["flexed"] == .int(80))
        #expect(r["extended"] == .int(5))
        #expect(r["finished"] == .bool(true))
        #expect(r["finishTime"] == .int(4))
    }

    @Test func kneeAnglesFromSamplesAndTheFinishingTap() throws {
        var p = try GamePlay(RangeOfMotionTests.knee)
        #expect(p.refusal(at: 100, #"{"type": "tap", "target": 0}"#)! == (.answer, "notYet"))
        try play(&p, 0..<6)
        #expect(near(p.game?["angle"], RangeOfMotionTests.atan24over7))
        #expect(p.game?["start"] == .int(80))
        #expect(p.game?["samples"] == .int(6))
        #expect(p.refusal(at: 3600, #"{"type": "key", "key": "a"}"#)! == (.answer, "wrongInput"))
        #expect(p.refusal(at: 3600, #"{"type": "sample", "x": 400, "y": 0, "z": 0}"#)! == (.answer, "outOfRange"))
        #expect(p.refusal(at: 3600, #"{"type": "sample", "x": 2, "y": 0, "z": 0, "w": 0.1}"#)! == (.answer, "outOfRange"))
        #expect(p.refusal(at: 3600, #"{"type": "sample", "x": 0, "y": 0, "z": 0, "w": 0}"#)! == (.answer, "outOfRange"))
        try play(&p, 6..<7)
        try p.send(at: 4000, #"{"type": "tap", "target": 0}"#)
        #expect(p.session.currentStep?.identifier == "done")
        try checkKnee(p.result(step: "rom"))
    }

    /// Angles are unwrapped: 170° then −170° is a movement of 20°, not 340°. The shoulder starts
    /// with the arm down (extended) and ends raised (flexed).
    @Test func shoulderAnglesUnwrapThroughOneEighty() throws {
        var p = try GamePlay(#"{"type": "rangeOfMotion", "identifier": "rom", "joint": "shoulder"}"#)
        for (i, x) in [170, -170, -175].enumerated() { try p.send(at: Int64(i) * 100, #"{"type": "sample", "x": \#(x), "y": 0, "z": 0}"#) }
        try p.send(at: 1000, #"{"type": "tap", "target": 3}"#)
        let r = try #require(p.result(step: "rom"))
        #expect(r["limbOption"] == .string("left"))
        #expect(r["start"] == .int(170))
        #expect(r["finish"] == .int(185))
        #expect(r["maximum"] == .int(190))
        #expect(r["minimum"] == .int(170))
        #expect(r["range"] == .int(20))
        #expect(r["extended"] == .int(170))
        #expect(r["flexed"] == .int(185))
    }

    @Test func restoresMidTestAndFinishesTheSame() throws {
        var p = try GamePlay(RangeOfMotionTests.knee)
        try play(&p, 0..<3)
        try p.saveAndRestore()
        try play(&p, 3..<7)
        try p.saveAndRestore()
        try p.send(at: 4000, #"{"type": "tap", "target": 0}"#)
        try checkKnee(p.result(step: "rom"))
    }

    @Test func finishedEarlyWithoutSamplesHasNoAngles() throws {
        var p = try GamePlay(RangeOfMotionTests.knee)
        try p.session.activeOperation(.finish)
        let r = try #require(p.result(step: "rom"))
        #expect(r["numberOfSamples"] == .int(0))
        #expect(r["start"] == .null)
        #expect(r["range"] == .null)
        #expect(r["finished"] == .bool(false))
    }

    @Test func badParametersAreDefinitionErrors() {
        #expect(throws: (any Error).self) { try compile(GamePlay.taskText(#"{"type": "rangeOfMotion", "identifier": "r", "joint": "hip"}"#)) }
        #expect(throws: (any Error).self) { try compile(GamePlay.taskText(#"{"type": "rangeOfMotion", "identifier": "r", "limbOption": "both"}"#)) }
    }
}

extension GamePlay {
    static func taskText(_ game: String) -> String {
        #"{"identifier": "games", "steps": ["# + game + "]}"
    }
}
