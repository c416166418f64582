import StepKitBase

/// ResearchKit's `ORKPSATStep` parameters, with the predefined task's defaults: the presentation
/// (auditory: PASAT, visual: PVSAT, both: PAVSAT), the inter-stimulus interval (3 s), how long a
/// visual digit stays (1 s) and the series' length (60 digits after the first).
struct PSATSettings: Sendable, Equatable {
    var presentationMode = "auditory"
    var interStimulusInterval: Int64 = 3000
    var stimulusDuration: Int64 = 1000
    var seriesLength = 60

    static let modes = ["auditory", "visual", "auditoryAndVisual"]

    static func parse(_ r: FieldReader, at path: JSONPath) -> PSATSettings? {
        var s = PSATSettings()
        s.presentationMode = r.choice("presentationMode", of: modes) ?? s.presentationMode
        if let isi = r.number("interStimulusInterval") {
            if isi >= 1 && isi <= 5 { s.interStimulusInterval = Int64((isi * 1000).rounded()) } else {
                r.diagnostics.error("outOfRange", "\"interStimulusInterval\" must be between 1 and 5 seconds.", at: path.key("interStimulusInterval"))
            }
        }
        if let duration = r.number("stimulusDuration") {
            if duration >= 0.2 && duration * 1000 <= Double(s.interStimulusInterval) { s.stimulusDuration = Int64((duration * 1000).rounded()) } else {
                r.diagnostics.error("outOfRange", "\"stimulusDuration\" must be from 0.2 seconds up to the inter-stimulus interval.", at: path.key("stimulusDuration"))
            }
        }
        s.seriesLength = r.integer("seriesLength", in: 1...120) ?? s.seriesLength
        return s
    }
}

/// The paced serial addition test (docs/active-tasks.md). Digit 0 (the initial digit) is
/// presented at 0 and digit k (1 … seriesLength) at k × interval of the step's time; digit k's
/// answer is the sum of digits k − 1 and k, taken while digit k is the last one presented (before
/// (k + 1) × interval); the first answer counts, a second is refused. A digit whose window closes
/// unanswered is a miss. Digits are 1–9, never the same twice in a row.
struct PSATGame: GameRules {
    struct Sample: Sendable, Equatable {
        let digit: Int
        /// Nil: no answer in the window.
        let answer: Int?
        /// Milliseconds from the digit's presentation to the answer; the whole interval when
        /// unanswered (ResearchKit's `ORKPSATSample.time`).
        let time: Int64
        let correct: Bool
    }

    let settings: PSATSettings
    let step: String
    /// The initial digit and then the series.
    let digits: [Int]
    private(set) var samples: [Sample] = []

    /// The stream `step#psat`: the initial digit is 1 + a number below 9; each next digit is
    /// r = 1 + a number below 8, and r + 1 instead when r is at least the previous digit (so it
    /// skips it: the eight other digits, equally likely).
    static func streamName(step: String) -> String { step + "#psat" }

    init(settings: PSATSettings, seed: UInt64, step: String) {
        self.settings = settings
        self.step = step
        var generator = PCG32(seed: seed, sequence: PCG32.sequence(named: PSATGame.streamName(step: step)))
        var digits = [1 + Int(generator.next(below: 9))]
        for _ in 0..<settings.seriesLength {
            let r = 1 + Int(generator.next(below: 8))
            digits.append(r >= (digits.last ?? 0) ? r + 1 : r)
        }
        self.digits = digits
    }

    /// The digit whose window is open next (1 …), past the end once over.
    private var current: Int { samples.count + 1 }
    var isOver: Bool { samples.count >= settings.seriesLength }
    private func presented(_ k: Int) -> Int64 { Int64(k).multipliedSaturated(by: settings.interStimulusInterval) }

    var nextDue: Int64? { isOver ? nil : presented(current + 1) }

    mutating func advance(to time: Int64) {
        while !isOver && presented(current + 1) <= time {
            samples.append(Sample(digit: digits[current], answer: nil, time: settings.interStimulusInterval, correct: false))
        }
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        let answer: Int
        switch input.kind {
        case .tap: answer = input.target
        case .key:
            guard let n = Int(input.key), n >= 0, n <= 99 else {
                throw GameInput.refused("wrongInput", "A PSAT answer is a number: a key such as \"12\", or a tap on the number.")
            }
            answer = n
        case .drag, .sample, .touch:
            throw GameInput.refused("wrongInput", "A PSAT answer is a number: a key such as \"12\", or a tap on the number.")
        }
        guard input.at >= presented(current) else {
            throw GameInput.refused("notYet", "The first digit to add is presented at \(presented(1)) ms of the step's time.")
        }
        let sum = digits[current - 1] + digits[current]
        samples.append(Sample(digit: digits[current], answer: answer, time: input.at.subtractingSaturated(presented(current)), correct: answer == sum))
    }

    var stateJSON: JSONObject {
        var o = JSONObject([
            "type": .string("psat"),
            "presentationMode": .string(settings.presentationMode),
            "interStimulusInterval": GameInput.seconds(settings.interStimulusInterval),
            "stimulusDuration": GameInput.seconds(settings.stimulusDuration),
            "length": .int(Int64(settings.seriesLength)),
            "digits": .array(digits.map { .int(Int64($0)) }),
            "answered": .int(Int64(samples.count)),
            "over": .bool(isOver),
        ])
        // The digit being answered, presented at `presentedAt` (the host shows each digit from
        // k × interval; answers before digit 1 are refused).
        if !isOver {
            o["digit"] = .int(Int64(current))
            o["presentedAt"] = GameInput.seconds(presented(current))
        }
        return o
    }

    var resultJSON: JSONObject {
        let correct = samples.filter(\.correct)
        var dyads = 0
        for i in samples.indices.dropFirst() where samples[i].correct && samples[i - 1].correct { dyads += 1 }
        // ResearchKit's totals: `totalTime` adds every sample's time, right, wrong or unanswered
        // (an unanswered digit counts its whole interval).
        let total = samples.reduce(Int64(0)) { $0.addingSaturated($1.time) }
        return JSONObject([
            "presentationMode": .string(settings.presentationMode),
            "interStimulusInterval": GameInput.seconds(settings.interStimulusInterval),
            "stimulusDuration": GameInput.seconds(settings.stimulusDuration),
            "length": .int(Int64(settings.seriesLength)),
            "totalCorrect": .int(Int64(correct.count)),
            "totalDyad": .int(Int64(dyads)),
            "totalTime": GameInput.seconds(total),
            "initialDigit": .int(Int64(digits[0])),
            "samples": .array(samples.map { s in
                .object([
                    "correct": .bool(s.correct),
                    "digit": .int(Int64(s.digit)),
                    "answer": .int(Int64(s.answer ?? -1)),
                    "time": GameInput.seconds(s.time),
                ])
            }),
        ])
    }
}
