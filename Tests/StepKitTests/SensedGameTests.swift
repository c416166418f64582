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

@Suite struct AmslerGridTests {
    static let grid = #"{"type": "amslerGrid", "identifier": "amsler", "eyeSide": "right", "gridSize": 10}"#

    /// A point drawn and cleared; the square (0.2, 0.2)–(0.6, 0.6) drawn round and lifted; a
    /// point off the grid refused; two points at the top right corner, then the finishing tap.
    static let script: [(Int64, String, String?)] = [
        (1000, #"{"type": "sample", "x": 0.5, "y": 0.5, "z": 0}"#, nil),
        (1500, #"{"type": "key", "key": "clear"}"#, nil),
        (1600, #"{"type": "key", "key": "lift"}"#, "noPath"),
        (2000, #"{"type": "sample", "x": 0.2, "y": 0.2, "z": 0}"#, nil),
        (2100, #"{"type": "sample", "x": 0.6, "y": 0.2, "z": 0}"#, nil),
        (2200, #"{"type": "sample", "x": 0.6, "y": 0.6, "z": 0}"#, nil),
        (2300, #"{"type": "sample", "x": 0.2, "y": 0.6, "z": 0}"#, nil),
        (2400, #"{"type": "key", "key": "lift"}"#, nil),
        (2500, #"{"type": "sample", "x": 1.2, "y": 0.5, "z": 0}"#, "outOfGrid"),
        (2600, #"{"type": "drag", "from": 0, "to": 1}"#, "wrongInput"),
        (3000, #"{"type": "sample", "x": 0.95, "y": 0.05, "z": 0}"#, nil),
        (3100, #"{"type": "sample", "x": 1, "y": 0, "z": 0}"#, nil),
        (3500, #"{"type": "tap", "target": 0}"#, nil),
    ]

    func play(_ p: inout GamePlay, _ range: Range<Int>) throws {
        for (at, input, refused) in AmslerGridTests.script[range] {
            if let refused {
                #expect(p.refusal(at: at, input)?.1 == refused)
            } else {
                try p.send(at: at, input)
            }
        }
    }

    static func cells(_ pairs: [(Int, Int)]) -> JSON { .array(pairs.map { .array([.int(Int64($0.0)), .int(Int64($0.1))]) }) }

    /// On a 10 × 10 grid a point (x, y) lies in column ⌊10x⌋ and row ⌊10y⌋ (at most 9). The
    /// square's corners mark (2, 2), (6, 2), (6, 6) and (2, 6); the squares whose centres
    /// ((c + ½) / 10) lie inside it are columns and rows 2–5: 16, of which (2, 2) is a corner's,
    /// so 19 in all. The corner path's two points both lie in (9, 0).
    func check(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("amslerGrid"))
        #expect(r["eyeSide"] == .string("right"))
        #expect(r["gridSize"] == .int(10))
        #expect(r["numberOfAreas"] == .int(2))
        #expect(r["cleared"] == .int(1))
        #expect(r["finished"] == .bool(true))
        var square: [(Int, Int)] = (2...6).map { ($0, 2) }
        for row in 3...5 { square += (2...5).map { ($0, row) } }
        square += [(2, 6), (6, 6)]
        let areas = try #require(r["areas"]?.arrayValue).compactMap(\.objectValue)
        #expect(areas.count == 2)
        #expect(areas[0]["cells"] == AmslerGridTests.cells(square))
        #expect(areas[0]["startTime"] == .int(2))
        #expect(areas[0]["endTime"] == .number(2.3))
        #expect(areas[0]["bounds"] == .object(["minX": .number(0.2), "minY": .number(0.2), "maxX": .number(0.6), "maxY": .number(0.6)]))
        #expect(areas[0]["points"] == .array([(0.2, 0.2), (0.6, 0.2), (0.6, 0.6), (0.2, 0.6)].map { .array([.number($0.0), .number($0.1)]) }))
        #expect(areas[1]["cells"] == AmslerGridTests.cells([(9, 0)]))
        #expect(areas[1]["endTime"] == .number(3.1))
        #expect(r["markedCells"] == AmslerGridTests.cells([(9, 0)] + square))
    }

    @Test func drawnAreasFromRecordedPoints() throws {
        var p = try GamePlay(AmslerGridTests.grid)
        try play(&p, 0..<AmslerGridTests.script.count)
        #expect(p.session.currentStep?.identifier == "done")
        try check(p.result(step: "amsler"))
    }

    @Test func restoresWhileAPathIsDrawnAndFinishesTheSame() throws {
        var p = try GamePlay(AmslerGridTests.grid)
        try play(&p, 0..<6)
        #expect(p.game?["drawing"] == .bool(true))
        #expect(p.game?["points"] == .int(3))
        try p.saveAndRestore()
        try play(&p, 6..<AmslerGridTests.script.count)
        try check(p.result(step: "amsler"))
    }

    @Test func badParametersAreDefinitionErrors() {
        #expect(throws: (any Error).self) { try compile(GamePlay.taskText(#"{"type": "amslerGrid", "identifier": "a", "eyeSide": "both"}"#)) }
        #expect(throws: (any Error).self) { try compile(GamePlay.taskText(#"{"type": "amslerGrid", "identifier": "a", "gridSize": 1}"#)) }
    }
}

@Suite struct ToneAudiometryTests {
    /// One ear, one frequency, no pre-stimulus delay: each trial's window is [start, start + 2 s).
    static let plain = #"{"type": "toneAudiometry", "identifier": "hear", "earPreference": "left", "frequencyList": [1000], "maxRandomPreStimulusDelay": 0}"#

    /// The staircase worked by hand (30 dB HL to start, down 10 after a response, up 5 after a
    /// miss; "asc": the presentation follows a miss, and is tallied):
    ///   1: 30 heard → 20;  2: 20 heard → 10;  3: 10 missed → 15;  4: 15 asc missed (15: 0/1) → 20;
    ///   5: 20 asc heard (20: 1/1) → 10;  6: 10 missed → 15;  7: 15 asc heard (15: 1/2) → 5;
    ///   8: 5 missed → 10;  9: 10 asc missed (10: 0/1) → 15;  10: 15 asc heard (15: 2/3): threshold 15.
    /// Times: a response's tap starts the next trial; a miss's window closes 2 s after its start.
    static let units: [(level: Int, start: Double, ascending: Bool, tap: Double?)] = [
        (30, 0, false, 0.5), (20, 0.5, false, 1), (10, 1, false, nil), (15, 3, true, nil), (20, 5, true, 5.6),
        (10, 5.6, false, nil), (15, 7.6, true, 8), (5, 8, false, nil), (10, 10, true, nil), (15, 12, true, 12.3),
    ]

    func play(_ p: inout GamePlay, _ range: Range<Int>) throws {
        for u in ToneAudiometryTests.units[range] {
            if let tap = u.tap {
                try p.send(at: Int64(tap * 1000), #"{"type": "tap", "target": 0}"#)
            } else {
                p.tick(at: Int64(u.start * 1000) + 2000)
            }
        }
    }

    func check(_ r: JSONObject?) throws {
        let r = try #require(r)
        #expect(r["type"] == .string("toneAudiometry"))
        #expect(r["toneDuration"] == .int(1))
        #expect(r["postStimulusDelay"] == .int(1))
        let samples = try #require(r["samples"]?.arrayValue).compactMap(\.objectValue)
        #expect(samples.count == 1)
        #expect(samples[0]["channel"] == .string("left"))
        #expect(samples[0]["frequency"] == .int(1000))
        #expect(samples[0]["calculatedThreshold"] == .int(15))
        let expected: [JSON] = ToneAudiometryTests.units.map { u in
            .object([
                "dBHLValue": .int(Int64(u.level)),
                "startOfUnitTimeStamp": .number(u.start),
                "preStimulusDelay": .int(0),
                "ascending": .bool(u.ascending),
                "responded": .bool(u.tap != nil),
                "userTapTimeStamp": u.tap.map { .number($0) } ?? .null,
                "timeoutTimeStamp": u.tap == nil ? .number(u.start + 2) : .null,
            ])
        }
        #expect(samples[0]["units"] == .array(expected))
    }

    @Test func hughsonWestlakeFromRecordedResponses() throws {
        var p = try GamePlay(ToneAudiometryTests.plain)
        #expect(p.game?["level"] == .int(30))
        #expect(p.game?["ear"] == .string("left"))
        #expect(p.game?["respondBy"] == .int(2))
        #expect(p.refusal(at: 100, #"{"type": "key", "key": "y"}"#)?.1 == "wrongInput")
        try play(&p, 0..<ToneAudiometryTests.units.count)
        #expect(p.session.currentStep?.identifier == "done")
        try check(p.result(step: "hear"))
    }

    @Test func restoresMidStaircaseAndFinishesTheSame() throws {
        var p = try GamePlay(ToneAudiometryTests.plain)
        try play(&p, 0..<6)
        try p.saveAndRestore()
        #expect(p.game?["level"] == .int(15))
        #expect(p.game?["startedAt"] == .number(7.6))
        try play(&p, 6..<ToneAudiometryTests.units.count)
        try check(p.result(step: "hear"))
    }

    /// Seed 7's delays on the stream "hear#audiometry", a number below 2001 each (drawn by
    /// bindings/python/tests/pcg32.py): 350, 855, 861 ms. A tap before the tone is refused.
    @Test func preStimulusDelaysAreSeeded() throws {
        var p = try GamePlay(#"{"type": "toneAudiometry", "identifier": "hear", "earPreference": "right", "frequencyList": [1000, 2000], "initialdBHLValue": 70}"#)
        #expect(p.game?["toneAt"] == .number(0.35))
        #expect(p.game?["respondBy"] == .number(2.35))
        #expect(p.refusal(at: 349, #"{"type": "tap", "target": 0}"#)?.1 == "notYet")
        p.tick(at: 2350)                                  // 70 missed → 75
        #expect(p.game?["level"] == .int(75))
        #expect(p.game?["toneAt"] == .number(2.35 + 0.855))
        p.tick(at: 2350 + 855 + 2000)                     // missed at the maximum: no threshold
        #expect(p.game?["frequency"] == .int(2000))
        #expect(p.game?["level"] == .int(70))
        #expect(p.game?["toneAt"] == .number(5.205 + 0.861))
        let r = try #require(p.result(step: "hear"))
        let first = try #require(r["samples"]?.arrayValue?.first?.objectValue)
        #expect(first["channel"] == .string("right"))
        #expect(first["calculatedThreshold"] == .null)
        #expect(first["units"]?.arrayValue?.compactMap { $0.objectValue?["preStimulusDelay"] } == [.number(0.35), .number(0.855)])
    }

    @Test func badParametersAreDefinitionErrors() {
        for bad in [#""frequencyList": []"#, #""frequencyList": [50]"#, #""initialdBHLValue": 80"#, #""toneDuration": 0"#, #""earPreference": "none""#] {
            #expect(throws: (any Error).self) { try compile(GamePlay.taskText(#"{"type": "toneAudiometry", "identifier": "t", "# + bad + "}")) }
        }
    }
}

/// Saved games edited at random (a seeded PCG32 picks the edits; the data is signed again so the
/// edits reach the game decoder): each restore either refuses the data with a restore, parse or
/// argument error, or gives a session whose own save restores to the same state — never a trap.
@Suite struct SensedGameRestoreEditTests {
    static func saved(_ p: GamePlay) throws -> (body: [UInt8], gameStart: Int) {
        guard case .object(var document) = Restoration.save(p.session) else { throw StepKitError(.internal, code: "test", message: "no save") }
        document["integrity"] = nil
        let body = Array(JSONWriter.string(.object(document)).utf8)
        let marker = Array(#""game":"#.utf8)
        let start = (0...(body.count - marker.count)).first { Array(body[$0..<$0 + marker.count]) == marker } ?? 0
        return (body, start)
    }

    static func signed(_ body: [UInt8]) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let digest = try? Digest.sha256(text), body.last == UInt8(ascii: "}") else { return nil }
        return String(text.dropLast()) + #","integrity":{"algorithm":"SHA-256","digest":""# + digest + #""}}"#
    }

    func edit(_ p: GamePlay, rounds: Int, stream: String) throws {
        let (body, start) = try SensedGameRestoreEditTests.saved(p)
        #expect(start > 0)
        var generator = PCG32(seed: 7, sequence: PCG32.sequence(named: stream))
        let alphabet = Array(#"0123456789-.,:{}[]"ew "#.utf8)
        var refused = 0, restored = 0
        for _ in 0..<rounds {
            var edited = body
            for _ in 0...Int(generator.next(below: 3)) {
                let at = start + Int(generator.next(below: UInt32(edited.count - start - 1)))
                switch generator.next(below: 3) {
                case 0: edited[at] = alphabet[Int(generator.next(below: UInt32(alphabet.count)))]
                case 1: edited.remove(at: at)
                default: edited.insert(edited[at], at: at)
                }
            }
            guard let text = SensedGameRestoreEditTests.signed(edited) else { continue }
            let outcome = text.withCString { c in
                Result { () throws(StepKitError) -> Session in try Restoration.restore(c, task: p.session.task, options: p.session.options, clock: p.clock.clock) }
            }
            switch outcome {
            case .failure(let error):
                #expect([.restore, .parse, .invalidArgument].contains(error.status), "\(error.status) \(error.problems.first?.message ?? "")")
                refused += 1
            case .success(let session):
                let again = JSONWriter.string(Restoration.save(session))
                let back = try again.withCString { c in
                    try Result { () throws(StepKitError) -> Session in try Restoration.restore(c, task: p.session.task, options: p.session.options, clock: p.clock.clock) }.get()
                }
                #expect(back.stateJSON() == session.stateJSON())
                #expect(back.current?.active?.game == session.current?.active?.game)
                restored += 1
            }
        }
        // Both ends are reached: edits the game refuses, and edits it takes (in untested keys
        // of the data, or inputs that replay to the saved result).
        #expect(refused > 0 && restored > 0)
    }

    @Test func editedRangeOfMotionSaves() throws {
        var p = try GamePlay(RangeOfMotionTests.knee)
        try RangeOfMotionTests().play(&p, 0..<5)
        try edit(p, rounds: 150, stream: "rom-edits")
    }

    @Test func editedAmslerGridSaves() throws {
        var p = try GamePlay(AmslerGridTests.grid)
        try AmslerGridTests().play(&p, 0..<7)
        try edit(p, rounds: 150, stream: "amsler-edits")
    }

    @Test func editedToneAudiometrySaves() throws {
        var p = try GamePlay(ToneAudiometryTests.plain)
        try ToneAudiometryTests().play(&p, 0..<7)
        try edit(p, rounds: 150, stream: "tone-edits")
    }
}
