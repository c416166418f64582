import StepKitBase

/// ResearchKit's `ORKTrailmakingStep` parameter: the trail, `A` (numbers 1 to 13) or `B`
/// (numbers and letters alternating, 1-A-2-B … 6-F-7).
struct TrailmakingSettings: Sendable, Equatable {
    var trailType = "A"

    static func parse(_ r: FieldReader) -> TrailmakingSettings? {
        TrailmakingSettings(trailType: r.choice("trailType", of: ["A", "B"]) ?? "A")
    }
}

/// The trail making test (docs/active-tasks.md): 13 targets, labelled in the trail's order, are
/// laid out on the board from the seed; the participant taps them in that order. A tap on the
/// target that comes next connects it; a tap on any other target is an error (recorded, counted,
/// and the trail waits for the right one). The test is over when the last target is connected.
struct TrailmakingGame: GameRules {
    struct Tap: Sendable, Equatable {
        let at: Int64
        let index: Int
        let incorrect: Bool
    }

    static let count = 13
    /// The board's grid: the targets sit at the centres of 13 of its cells.
    static let columns = 4
    static let rows = 6

    let settings: TrailmakingSettings
    /// For each target in the trail's order, the cell it sits in (row by row from 0).
    let cells: [Int]
    private(set) var taps: [Tap] = []
    /// The target to tap next (0 …); `count` once over.
    private(set) var next = 0
    private(set) var errors = 0

    /// The stream `step#trailmaking`: the seeded order of the grid's 24 cells (`PCG32.order`,
    /// Fisher–Yates from the last with the unbiased bounded draw); target k sits in the k-th.
    static func streamName(step: String) -> String { step + "#trailmaking" }

    init(settings: TrailmakingSettings, seed: UInt64, step: String) {
        self.settings = settings
        let order = PCG32.order(count: TrailmakingGame.columns * TrailmakingGame.rows, pinned: [], seed: seed,
                                name: TrailmakingGame.streamName(step: step))
        cells = Array(order.prefix(TrailmakingGame.count))
    }

    /// Target k's label: trail A numbers them 1 … 13; trail B alternates numbers and letters.
    static func label(_ k: Int, trailType: String) -> String {
        if trailType == "A" { return String(k + 1) }
        if k % 2 == 0 { return String(k / 2 + 1) }
        let letters = Array("ABCDEF".unicodeScalars)
        return String(Character(letters[k / 2]))
    }

    var isOver: Bool { next >= TrailmakingGame.count }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .tap else { throw GameInput.refused("wrongInput", "The trail making test takes taps on targets.") }
        guard input.target < TrailmakingGame.count else {
            throw GameInput.refused("noSuchTarget", "There is no target \(input.target); the trail has \(TrailmakingGame.count) (0 to \(TrailmakingGame.count - 1)).")
        }
        let incorrect = input.target != next
        taps.append(Tap(at: input.at, index: input.target, incorrect: incorrect))
        if incorrect { errors += 1 } else { next += 1 }
    }

    var stateJSON: JSONObject {
        JSONObject([
            "type": .string("trailmaking"),
            "trailType": .string(settings.trailType),
            "columns": .int(Int64(TrailmakingGame.columns)),
            "rows": .int(Int64(TrailmakingGame.rows)),
            "targets": .array(cells.enumerated().map { (k, cell) in
                .object([
                    "label": .string(TrailmakingGame.label(k, trailType: settings.trailType)),
                    "x": .number((Double(cell % TrailmakingGame.columns) + 0.5) / Double(TrailmakingGame.columns)),
                    "y": .number((Double(cell / TrailmakingGame.columns) + 0.5) / Double(TrailmakingGame.rows)),
                ])
            }),
            "next": .int(Int64(next)),
            "numberOfErrors": .int(Int64(errors)),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        JSONObject([
            "trailType": .string(settings.trailType),
            "numberOfErrors": .int(Int64(errors)),
            "taps": .array(taps.map { t in
                .object(["timestamp": GameInput.seconds(t.at), "index": .int(Int64(t.index)), "incorrect": .bool(t.incorrect)])
            }),
        ])
    }
}
