import StepKitBase

/// ResearchKit's `ORKSpatialSpanMemoryStep` parameters, with the predefined task's defaults.
struct SpatialSpanSettings: Sendable, Equatable {
    var initialSpan = 3
    var minimumSpan = 2
    var maximumSpan = 15
    /// Milliseconds per tile as the sequence is shown (`playSpeed`, seconds, default 1).
    var playSpeed: Int64 = 1000
    var maximumTests = 12
    var maximumConsecutiveFailures = 3
    /// Tap the sequence in reverse order.
    var requireReversal = false

    static func parse(_ r: FieldReader, at path: JSONPath) -> SpatialSpanSettings? {
        var s = SpatialSpanSettings()
        s.initialSpan = r.integer("initialSpan", in: 2...20) ?? s.initialSpan
        s.minimumSpan = r.integer("minimumSpan", in: 2...20) ?? s.minimumSpan
        s.maximumSpan = r.integer("maximumSpan", in: 2...20) ?? s.maximumSpan
        if let speed = r.number("playSpeed") {
            if speed >= 0.5 && speed <= 20 { s.playSpeed = Int64((speed * 1000).rounded()) } else {
                r.diagnostics.error("outOfRange", "\"playSpeed\" must be between 0.5 and 20 seconds.", at: path.key("playSpeed"))
            }
        }
        s.maximumTests = r.integer("maximumTests", in: 1...100) ?? s.maximumTests
        s.maximumConsecutiveFailures = r.integer("maximumConsecutiveFailures", in: 1...100) ?? s.maximumConsecutiveFailures
        s.requireReversal = r.bool("requireReversal") ?? false
        // Fewer tests than the failures allowed in a row: the tests end the game first.
        if !r.has("maximumConsecutiveFailures") { s.maximumConsecutiveFailures = min(s.maximumConsecutiveFailures, s.maximumTests) }
        _ = r.string("customTargetPluralName")
        _ = r.string("customTargetImage")
        if !(s.minimumSpan <= s.initialSpan && s.initialSpan <= s.maximumSpan) {
            r.diagnostics.error("outOfRange", "Spans must keep minimumSpan ≤ initialSpan ≤ maximumSpan.", at: path.key("initialSpan"))
        }
        if r.has("maximumConsecutiveFailures"), s.maximumConsecutiveFailures > s.maximumTests {
            r.diagnostics.error("outOfRange", "\"maximumConsecutiveFailures\" must not exceed \"maximumTests\".", at: path.key("maximumConsecutiveFailures"))
        }
        return s
    }
}

/// The spatial span memory game (docs/active-tasks.md): a sequence of distinct tiles is shown one
/// tile per `playSpeed`; the participant taps it back (reversed with `requireReversal`). A
/// sequence recalled whole is a success and the next is one tile longer (up to `maximumSpan`); a
/// wrong tap, or 20 s without a right one, ends the sequence as a failure (`failure`, `timeout`)
/// and the next is one shorter (down to `minimumSpan`). The game ends after `maximumTests`
/// sequences or `maximumConsecutiveFailures` failures in a row. Scoring is ResearchKit's: each
/// right tap earns (round(log2 k) + 1) × 5 points, k the right taps so far in the sequence, and a
/// sequence recalled whole earns (round(log2 span) + 1) × 5 more.
struct SpatialSpanGame: GameRules {
    struct Touch: Sendable, Equatable {
        let at: Int64
        let target: Int
        let correct: Bool
    }

    struct Record: Sendable, Equatable {
        let sequence: [Int]
        let side: Int
        /// When the sequence starts to be shown (step time).
        let start: Int64
        var touches: [Touch] = []
        /// "success", "failure" or "timeout" once over.
        var status: String?
        /// The points this sequence earned.
        var points = 0
        /// Right taps so far.
        var right = 0
        /// When the last right tap was taken (step time), nil before the first.
        var lastRight: Int64?
        var tiles: Int { side * side }
    }

    let settings: SpatialSpanSettings
    let seed: UInt64
    let step: String
    private(set) var span: Int
    private(set) var records: [Record] = []
    private(set) var consecutiveFailures = 0
    private(set) var score = 0
    private(set) var isOver = false

    init(settings: SpatialSpanSettings, seed: UInt64, step: String) {
        self.settings = settings
        self.seed = seed
        self.step = step
        span = settings.initialSpan
        records = [SpatialSpanGame.record(number: 1, span: span, seed: seed, step: step, start: 0)]
    }

    /// The board's side for a span: the smallest n with n × n ≥ 2 × span, from 2 to 6 — room for
    /// the sequence and as many tiles again.
    static func side(for span: Int) -> Int {
        var n = 2
        while n < 6 && n * n < 2 * span { n += 1 }
        return n
    }

    /// The name of the PCG32 stream of game `number` of the step: `step#game<number>`.
    static func streamName(step: String, number: Int) -> String { step + "#game" + String(number) }

    /// Game `number`'s sequence: the first `span` entries of the seeded order of all tiles
    /// (`PCG32.order`: Fisher–Yates with unbiased bounded draws), so no tile repeats.
    static func record(number: Int, span: Int, seed: UInt64, step: String, start: Int64) -> Record {
        let side = side(for: span)
        let order = PCG32.order(count: side * side, pinned: [], seed: seed, name: streamName(step: step, number: number))
        return Record(sequence: Array(order.prefix(span)), side: side, start: start)
    }

    /// ResearchKit's memory game ends a sequence as a timeout after 20 s without a right tap,
    /// counted from when taps are taken and from each right tap.
    static let activityTimeout: Int64 = 20_000

    /// ResearchKit's points for the k-th right tap of a sequence, and for a whole sequence of k
    /// tiles: (round(log2 k) + 1) × 5. round(log2 k) = n exactly when 2^(2n−1) ≤ k² < 2^(2n+1),
    /// so it is worked out on integers: n = (⌊log2 k²⌋ + 1) / 2 — no floating point, no ties.
    static func points(_ k: Int) -> Int {
        let square = UInt64(max(k, 1)) * UInt64(max(k, 1))
        let floorLog2 = UInt64.bitWidth - square.leadingZeroBitCount - 1
        return ((floorLog2 + 1) / 2 + 1) * 5
    }

    private func deadline(_ record: Record) -> Int64 {
        (record.lastRight ?? showUntil(record)).addingSaturated(SpatialSpanGame.activityTimeout)
    }

    mutating func advance(to time: Int64) {
        while !isOver, let current = records.last, current.status == nil, deadline(current) <= time {
            end(status: "timeout", at: deadline(current))
        }
    }

    var nextDue: Int64? {
        guard !isOver, let current = records.last, current.status == nil else { return nil }
        return deadline(current)
    }

    /// Ends the current sequence at `time` and starts the next unless the test is over.
    private mutating func end(status: String, at time: Int64) {
        guard var current = records.popLast() else { return }
        current.status = status
        if status == "success" {
            current.points += SpatialSpanGame.points(current.sequence.count)
            consecutiveFailures = 0
            span = min(span + 1, settings.maximumSpan)
        } else {
            consecutiveFailures += 1
            span = max(span - 1, settings.minimumSpan)
        }
        score += current.points
        records.append(current)
        if records.count >= settings.maximumTests || consecutiveFailures >= settings.maximumConsecutiveFailures {
            isOver = true
        } else {
            records.append(SpatialSpanGame.record(number: records.count + 1, span: span, seed: seed, step: step, start: time))
        }
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .tap else { throw GameInput.refused("wrongInput", "The spatial span game takes taps on tiles.") }
        guard var current = records.popLast() else { return }
        guard input.target < current.tiles else {
            records.append(current)
            throw GameInput.refused("noSuchTarget", "There is no tile \(input.target); the board has \(current.tiles) (0 to \(current.tiles - 1)).")
        }
        guard input.at >= showUntil(current) else {
            records.append(current)
            throw GameInput.refused("sequencePlaying", "The sequence is still being shown; taps are taken from \(showUntil(current)) ms of the step's time.")
        }
        let sequence = settings.requireReversal ? Array(current.sequence.reversed()) : current.sequence
        let correct = input.target == sequence[current.right]
        current.touches.append(Touch(at: input.at, target: input.target, correct: correct))
        // A tile already tapped right is passed over (recorded, as ResearchKit records it, and
        // otherwise ignored); any other wrong tile ends the sequence.
        let alreadyTapped = sequence.prefix(current.right).contains(input.target)
        if correct {
            current.right += 1
            current.lastRight = input.at
            current.points += SpatialSpanGame.points(current.right)
        }
        records.append(current)
        if correct && current.right == current.sequence.count {
            end(status: "success", at: input.at)
        } else if !correct && !alreadyTapped {
            end(status: "failure", at: input.at)
        }
    }

    /// When a sequence has been shown and taps are taken: one tile per `playSpeed` from its start.
    private func showUntil(_ record: Record) -> Int64 {
        record.start.addingSaturated(Int64(record.sequence.count).multipliedSaturated(by: settings.playSpeed))
    }

    var stateJSON: JSONObject {
        let current = records.last
        return JSONObject([
            "type": .string("spatialSpanMemory"),
            "gameNumber": .int(Int64(records.count)),
            "span": .int(Int64(current?.sequence.count ?? span)),
            "rows": .int(Int64(current?.side ?? 0)),
            "columns": .int(Int64(current?.side ?? 0)),
            "sequence": .array((current?.sequence ?? []).map { .int(Int64($0)) }),
            "reversed": .bool(settings.requireReversal),
            "playSpeed": GameInput.seconds(settings.playSpeed),
            "showFrom": GameInput.seconds(current?.start ?? 0),
            "tapsFrom": GameInput.seconds(current.map(showUntil) ?? 0),
            "tapped": .int(Int64(current?.right ?? 0)),
            // The running score, this sequence's right taps included, as ResearchKit shows it.
            "score": .int(Int64(score + (current?.status == nil ? current?.points ?? 0 : 0))),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        let finished = records.filter { $0.status != nil }
        return JSONObject([
            "score": .int(Int64(score)),
            "numberOfGames": .int(Int64(finished.count)),
            "numberOfFailures": .int(Int64(finished.filter { $0.status != "success" }.count)),
            "gameRecords": .array(finished.enumerated().map { (i, record) in
                .object([
                    "seed": .int(Int64(seed)),
                    "stream": .string(SpatialSpanGame.streamName(step: step, number: i + 1)),
                    "sequence": .array(record.sequence.map { .int(Int64($0)) }),
                    "gameSize": .int(Int64(record.tiles)),
                    "gameStatus": .string(record.status ?? ""),
                    "score": .int(Int64(record.points)),
                    "touchSamples": .array(record.touches.map { t in
                        .object(["timestamp": GameInput.seconds(t.at), "targetIndex": .int(Int64(t.target)), "correct": .bool(t.correct)])
                    }),
                ])
            }),
        ])
    }
}
