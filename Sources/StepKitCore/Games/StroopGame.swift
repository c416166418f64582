import StepKitBase

/// ResearchKit's `ORKStroopStep` parameter: how many words are shown (default 15).
struct StroopSettings: Sendable, Equatable {
    var numberOfAttempts = 15

    static func parse(_ r: FieldReader) -> StroopSettings? {
        StroopSettings(numberOfAttempts: r.integer("numberOfAttempts", in: 1...200) ?? 15)
    }
}

/// The Stroop test (docs/active-tasks.md): each attempt shows a colour word (`text`) printed in a
/// colour (`color`), both drawn from red, green, blue and yellow; the participant picks the
/// colour of the print, by key (`"red"` … or its initial `"R"` …) or by tapping button 0–3 in
/// that order. The next word is shown at once; the test ends after `numberOfAttempts` answers.
struct StroopGame: GameRules {
    static let colors = ["red", "green", "blue", "yellow"]

    struct Attempt: Sendable, Equatable {
        let text: Int
        let color: Int
        var start: Int64 = 0
        var end: Int64?
        var selected: Int?
    }

    let settings: StroopSettings
    let step: String
    private(set) var attempts: [Attempt]
    private(set) var answered = 0

    /// The stream `step#stroop`: for each attempt in turn, the word (a number below 4) and then
    /// the print colour (a number below 4), independent unbiased draws.
    static func streamName(step: String) -> String { step + "#stroop" }

    init(settings: StroopSettings, seed: UInt64, step: String) {
        self.settings = settings
        self.step = step
        var generator = PCG32(seed: seed, sequence: PCG32.sequence(named: StroopGame.streamName(step: step)))
        var attempts: [Attempt] = []
        for _ in 0..<settings.numberOfAttempts {
            let text = Int(generator.next(below: 4))
            let color = Int(generator.next(below: 4))
            attempts.append(Attempt(text: text, color: color))
        }
        self.attempts = attempts
    }

    var isOver: Bool { answered >= attempts.count }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    static func colorIndex(_ input: GameInput) -> Int? {
        switch input.kind {
        case .tap: return input.target < colors.count ? input.target : nil
        case .key:
            let key = input.key.lowercased()
            return colors.firstIndex { $0 == key || String($0.prefix(1)) == key }
        case .drag, .sample, .touch: return nil
        }
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard let selected = StroopGame.colorIndex(input) else {
            throw GameInput.refused("wrongInput", "The Stroop test takes a colour: a key red, green, blue or yellow (or R, G, B, Y), or a tap on button 0 to 3.")
        }
        attempts[answered].end = input.at
        attempts[answered].selected = selected
        answered += 1
        if answered < attempts.count { attempts[answered].start = input.at }
    }

    var stateJSON: JSONObject {
        var o = JSONObject([
            "type": .string("stroop"),
            "attempt": .int(Int64(min(answered + 1, attempts.count))),
            "numberOfAttempts": .int(Int64(attempts.count)),
            "colors": .array(StroopGame.colors.map { .string($0) }),
            "over": .bool(isOver),
        ])
        if !isOver {
            o["text"] = .string(StroopGame.colors[attempts[answered].text])
            o["color"] = .string(StroopGame.colors[attempts[answered].color])
        }
        return o
    }

    var resultJSON: JSONObject {
        let done = attempts.prefix(answered)
        return JSONObject([
            "numberOfAttempts": .int(Int64(done.count)),
            "totalCorrect": .int(Int64(done.filter { $0.selected == $0.color }.count)),
            "attempts": .array(done.map { a in
                .object([
                    "startTime": GameInput.seconds(a.start),
                    "endTime": GameInput.seconds(a.end ?? a.start),
                    "color": .string(StroopGame.colors[a.color]),
                    "text": .string(StroopGame.colors[a.text]),
                    "colorSelected": .string(a.selected.map { StroopGame.colors[$0] } ?? ""),
                    "correct": .bool(a.selected == a.color),
                ])
            }),
        ])
    }
}
