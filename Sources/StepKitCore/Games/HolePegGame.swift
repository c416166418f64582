import StepKitBase

/// ResearchKit's `ORKHolePegTestPlaceStep` and `ORKHolePegTestRemoveStep` parameters, with the
/// predefined task's defaults: which way the peg moves (`left` or `right`), whether the
/// dominant hand is tested (for the host's instruction and the result), how many pegs (9), the
/// tolerance (`threshold`, 0.2) and whether the hole is turned so the peg must be rotated.
struct HolePegSettings: Sendable, Equatable {
    var remove = false
    var movingDirection = "left"
    var dominantHand = true
    var numberOfPegs = 9
    var threshold = 0.2
    var rotated = false

    static func parse(_ r: FieldReader, at path: JSONPath, remove: Bool) -> HolePegSettings? {
        var s = HolePegSettings(remove: remove)
        s.movingDirection = r.choice("movingDirection", of: ["left", "right"]) ?? s.movingDirection
        s.dominantHand = r.bool("dominantHand") ?? s.dominantHand
        s.numberOfPegs = r.integer("numberOfPegs", in: 1...50) ?? s.numberOfPegs
        if let threshold = r.number("threshold") {
            if threshold > 0 && threshold <= 1 { s.threshold = threshold } else {
                r.diagnostics.error("outOfRange", "\"threshold\" must be more than 0 and at most 1.", at: path.key("threshold"))
            }
        }
        s.rotated = r.bool("rotated") ?? s.rotated
        return s
    }
}

/// The nine-hole peg test (docs/active-tasks.md), one hand, one phase: in `place` a peg goes
/// from its spot into the hole, in `remove` from the hole to the spot, on a square board one
/// unit wide. The host reports where the participant let go of the peg (a `touch`, with the
/// peg's rotation); a drop within `threshold` of the destination (and, placing into a turned
/// hole, a rotation within `threshold` × 90° of the hole's 90°) is a success and the next peg
/// starts from the same spot; any other drop is a failure and the peg goes back. The test is
/// over after `numberOfPegs` successes.
struct HolePegGame: GameRules {
    struct Sample: Sendable, Equatable {
        /// Milliseconds from the end of the last success (or the start) to this one.
        let time: Int64
        /// Board units from the peg's spot to where it was dropped.
        let distance: Double
    }

    let settings: HolePegSettings
    private(set) var samples: [Sample] = []
    private(set) var failures = 0
    /// When the current peg became available (step time).
    private(set) var pegSince: Int64 = 0

    init(settings: HolePegSettings) { self.settings = settings }

    /// The two places on the board: moving left, from (0.75, 0.5) to (0.25, 0.5); right, the other way.
    var from: (x: Double, y: Double) { settings.movingDirection == "left" ? (0.75, 0.5) : (0.25, 0.5) }
    var to: (x: Double, y: Double) { settings.movingDirection == "left" ? (0.25, 0.5) : (0.75, 0.5) }
    var hole: (x: Double, y: Double) { settings.remove ? from : to }
    /// The hole's turn in degrees (placing into a turned hole only).
    var holeAngle: Double { settings.rotated && !settings.remove ? 90 : 0 }

    var isOver: Bool { samples.count >= settings.numberOfPegs }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    static func distance(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    /// The smallest angle between two turns, in degrees (0 … 180).
    static func angleBetween(_ a: Double, _ b: Double) -> Double {
        var d = (a - b).truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return min(d, 360 - d)
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .touch else {
            throw GameInput.refused("wrongInput", "The hole peg test takes drops: {\"type\": \"touch\", \"x\", \"y\", \"rotation\"} in board units.")
        }
        let drop = (x: input.x, y: input.y)
        let near = HolePegGame.distance(drop, to) <= settings.threshold
        let turned = holeAngle == 0 || HolePegGame.angleBetween(input.rotation, holeAngle) <= settings.threshold * 90
        guard near && turned else {
            failures += 1
            return
        }
        samples.append(Sample(time: input.at - pegSince, distance: HolePegGame.distance(from, drop)))
        pegSince = input.at
    }

    private var totalTime: Int64 { samples.reduce(Int64(0)) { $0.addingSaturated($1.time) } }
    private var totalDistance: Double { samples.reduce(0) { $0 + $1.distance } }
    private static func point(_ p: (x: Double, y: Double)) -> JSON { .object(["x": .number(p.x), "y": .number(p.y)]) }

    var stateJSON: JSONObject {
        JSONObject([
            "type": .string(settings.remove ? "holePegTestRemove" : "holePegTestPlace"),
            "movingDirection": .string(settings.movingDirection),
            "dominantHand": .bool(settings.dominantHand),
            "numberOfPegs": .int(Int64(settings.numberOfPegs)),
            "threshold": .number(settings.threshold),
            "rotated": .bool(settings.rotated),
            "from": HolePegGame.point(from),
            "to": HolePegGame.point(to),
            "hole": HolePegGame.point(hole),
            "holeAngle": .number(holeAngle),
            "peg": .int(Int64(min(samples.count + 1, settings.numberOfPegs))),
            "totalSuccesses": .int(Int64(samples.count)),
            "totalFailures": .int(Int64(failures)),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        JSONObject([
            "movingDirection": .string(settings.movingDirection),
            "dominantHand": .bool(settings.dominantHand),
            "numberOfPegs": .int(Int64(settings.numberOfPegs)),
            "threshold": .number(settings.threshold),
            "rotated": .bool(settings.rotated),
            "totalSuccesses": .int(Int64(samples.count)),
            "totalFailures": .int(Int64(failures)),
            "totalTime": GameInput.seconds(totalTime),
            "totalDistance": .number(totalDistance),
            "samples": .array(samples.map { s in .object(["time": GameInput.seconds(s.time), "distance": .number(s.distance)]) }),
        ])
    }
}
