import StepKitBase

/// One input event a host hands a game (`stepkit_session_input`): a tap on a target, a key, a
/// drag from one place to another, a motion sample, or a touch at a place in the game's view (with
/// how long it lasted and how far the finger turned what it held), at a moment of the step's own
/// time.
///
/// The host gives the moment on the session's clock (`time`, milliseconds since the epoch, the
/// clock's time when left out); the game reads it as the step's own running time (`at`), which
/// is what a saved game keeps, so a game restored on another clock replays the same.
struct GameInput: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable { case tap, key, drag, sample, touch }

    let kind: Kind
    /// Milliseconds of the step's own running time.
    let at: Int64
    var target: Int = 0
    var key: String = ""
    var from: Int = 0
    var to: Int = 0
    var x: Double = 0
    var y: Double = 0
    var z: Double = 0
    /// A sample's fourth component: with it, the sample is an attitude quaternion (x, y, z, w);
    /// without it (nil), three values such as an acceleration or angles.
    var w: Double? = nil
    /// A touch's: milliseconds the finger stayed, and the turn (degrees) of what it held.
    var duration: Int64 = 0
    var rotation: Double = 0

    /// The largest target, tower or tile number an input may name.
    static let maximumIndex = 1_000_000

    /// Reads a host's input (without its time, which the session converts) or a saved one
    /// (`saved`: with `at`). Every problem is reported; nothing is accepted half.
    static func parse(_ value: JSON, at time: Int64?, saved: Bool) throws(StepKitError) -> GameInput {
        let d = Diagnostics()
        guard let r = FieldReader(value, at: .root, d, what: "an input") else {
            throw StepKitError(saved ? .restore : .invalidArgument, problems: d.problems)
        }
        let kind = r.choice("type", of: Kind.allCases.map(\.rawValue), required: true).flatMap(Kind.init(rawValue:))
        let savedAt = saved ? r.integer("at", required: true, in: 0...Int(Int64(1) << 52)) : nil
        if !saved { _ = r.number("time") }
        var input = GameInput(kind: kind ?? .tap, at: savedAt.map(Int64.init) ?? time ?? 0)
        switch kind {
        case .tap?:
            input.target = r.integer("target", required: true, in: 0...maximumIndex) ?? 0
        case .key?:
            let key = r.string("key", required: true, nonEmpty: true) ?? ""
            if key.utf8.count > 64 { d.error("outOfRange", "\"key\" is at most 64 bytes long.", at: .root.key("key")) }
            input.key = key
        case .drag?:
            input.from = r.integer("from", required: true, in: 0...maximumIndex) ?? 0
            input.to = r.integer("to", required: true, in: 0...maximumIndex) ?? 0
        case .sample?:
            input.x = r.number("x", required: true) ?? 0
            input.y = r.number("y", required: true) ?? 0
            input.z = r.number("z", required: true) ?? 0
            input.w = r.number("w")
        case .touch?:
            input.x = r.number("x", required: true) ?? 0
            input.y = r.number("y", required: true) ?? 0
            input.duration = Int64(r.integer("duration", in: 0...86_400_000) ?? 0)
            input.rotation = r.number("rotation") ?? 0
        case nil:
            break
        }
        r.finish()
        guard d.problems.isEmpty, kind != nil else { throw StepKitError(saved ? .restore : .invalidArgument, problems: d.problems) }
        return input
    }

    /// The input as a saved game keeps it (and the audit trail records it).
    var json: JSON {
        var o = JSONObject(["type": .string(kind.rawValue), "at": .int(at)])
        switch kind {
        case .tap: o["target"] = .int(Int64(target))
        case .key: o["key"] = .string(key)
        case .drag:
            o["from"] = .int(Int64(from))
            o["to"] = .int(Int64(to))
        case .sample:
            o["x"] = .number(x)
            o["y"] = .number(y)
            o["z"] = .number(z)
            if let w { o["w"] = .number(w) }
        case .touch:
            o["x"] = .number(x)
            o["y"] = .number(y)
            o["duration"] = .int(duration)
            o["rotation"] = .number(rotation)
        }
        return .object(o)
    }

    /// Seconds, as ResearchKit's results give times.
    static func seconds(_ ms: Int64) -> JSON { .number(Double(ms) / 1000) }

    /// A refusal of an input the game does not take now (nothing changes).
    static func refused(_ code: String, _ message: String) -> StepKitError {
        StepKitError(.answer, code: code, message: message)
    }
}
