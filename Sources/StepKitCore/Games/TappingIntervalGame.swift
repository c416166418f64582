import StepKitBase

/// ResearchKit's `ORKTappingIntervalStep` (two-finger tapping): how long the test runs once the
/// first button is tapped (ResearchKit's predefined task takes it as an argument; StepKit's
/// default is 20 seconds) and which hand taps (`left`, `right`; for the host's instruction).
struct TappingIntervalSettings: Sendable, Equatable {
    var duration: Int64 = 20_000
    var hand: String?

    static func parse(_ r: FieldReader, at path: JSONPath) -> TappingIntervalSettings? {
        var s = TappingIntervalSettings()
        if let seconds = r.number("duration") {
            if seconds >= 1 && seconds <= 600 { s.duration = Int64((seconds * 1000).rounded()) } else {
                r.diagnostics.error("outOfRange", "\"duration\" must be from 1 to 600 seconds.", at: path.key("duration"))
            }
        }
        s.hand = r.choice("hand", of: ["left", "right"])
        return s
    }
}

/// Two-finger tapping (docs/active-tasks.md): two buttons, left and right, in a view of the
/// engine's own size (the host scales it to its screen); the host reports every touch with its
/// place, and the engine decides which button it hit. The test starts with the first touch on a
/// button and ends `duration` later; every touch from the first on a button is a sample.
struct TappingIntervalGame: GameRules {
    struct Rect: Sendable, Equatable {
        let x: Double, y: Double, width: Double, height: Double
        /// As `CGRectContainsPoint`: the left and top edges in, the right and bottom out.
        func contains(_ px: Double, _ py: Double) -> Bool { px >= x && px < x + width && py >= y && py < y + height }
        var json: JSON { .object(["x": .number(x), "y": .number(y), "width": .number(width), "height": .number(height)]) }
    }

    struct Sample: Sendable, Equatable {
        let at: Int64
        let duration: Int64
        let x: Double
        let y: Double
        /// 0 none, 1 left, 2 right, as ResearchKit's `ORKTappingButtonIdentifier`.
        let button: Int
    }

    /// The view and the two buttons (StepKit's layout, in points of the view).
    static let viewWidth = 375.0
    static let viewHeight = 667.0
    static let buttons = [Rect(x: 50, y: 517, width: 100, height: 100), Rect(x: 225, y: 517, width: 100, height: 100)]
    static let buttonNames = ["none", "left", "right"]

    let settings: TappingIntervalSettings
    private(set) var samples: [Sample] = []
    /// When the first touch on a button came (step time): the test runs from then.
    private(set) var startedAt: Int64?
    private(set) var time: Int64 = 0

    init(settings: TappingIntervalSettings) { self.settings = settings }

    private var endsAt: Int64? { startedAt?.addingSaturated(settings.duration) }
    var isOver: Bool { endsAt.map { time >= $0 } ?? false }
    var nextDue: Int64? { isOver ? nil : endsAt }
    mutating func advance(to time: Int64) { self.time = max(self.time, time) }

    static func button(_ x: Double, _ y: Double) -> Int {
        if buttons[0].contains(x, y) { return 1 }
        if buttons[1].contains(x, y) { return 2 }
        return 0
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .touch else {
            throw GameInput.refused("wrongInput", "The tapping test takes touches: {\"type\": \"touch\", \"x\", \"y\"} in the view's points.")
        }
        time = max(time, input.at)
        let button = TappingIntervalGame.button(input.x, input.y)
        if startedAt == nil {
            guard button != 0 else { return }
            startedAt = input.at
        }
        samples.append(Sample(at: input.at, duration: input.duration, x: input.x, y: input.y, button: button))
    }

    private func count(_ button: Int) -> Int { samples.filter { $0.button == button }.count }

    var stateJSON: JSONObject {
        var o = JSONObject([
            "type": .string("tappingInterval"),
            "stepViewSize": .object(["width": .number(TappingIntervalGame.viewWidth), "height": .number(TappingIntervalGame.viewHeight)]),
            "buttonRect1": TappingIntervalGame.buttons[0].json,
            "buttonRect2": TappingIntervalGame.buttons[1].json,
            "duration": GameInput.seconds(settings.duration),
            "started": .bool(startedAt != nil),
            "totalTaps": .int(Int64(count(1) + count(2))),
            "over": .bool(isOver),
        ])
        if let hand = settings.hand { o["hand"] = .string(hand) }
        if let endsAt { o["endsAt"] = GameInput.seconds(endsAt) }
        return o
    }

    var resultJSON: JSONObject {
        JSONObject([
            "stepViewSize": .object(["width": .number(TappingIntervalGame.viewWidth), "height": .number(TappingIntervalGame.viewHeight)]),
            "buttonRect1": TappingIntervalGame.buttons[0].json,
            "buttonRect2": TappingIntervalGame.buttons[1].json,
            "totalTaps": .int(Int64(count(1) + count(2))),
            "leftTaps": .int(Int64(count(1))),
            "rightTaps": .int(Int64(count(2))),
            "samples": .array(samples.map { s in
                .object([
                    "timestamp": GameInput.seconds(s.at),
                    "duration": GameInput.seconds(s.duration),
                    "buttonIdentifier": .string(TappingIntervalGame.buttonNames[s.button]),
                    "location": .object(["x": .number(s.x), "y": .number(s.y)]),
                ])
            }),
        ])
    }
}
