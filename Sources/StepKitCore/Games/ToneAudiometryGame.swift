import StepKitBase

/// ResearchKit's `ORKdBHLToneAudiometryStep` parameters with its defaults (docs/active-tasks.md);
/// levels in dB HL, times in milliseconds. `earPreference` `both` (StepKit's default) tests the
/// left ear and then the right; `maximumPresentations` is StepKit's bound on one frequency.
struct ToneAudiometrySettings: Sendable, Equatable {
    var frequencies: [Int] = [1000, 2000, 3000, 4000, 8000, 1000, 500, 250]
    var earPreference = "both"
    var initialLevel = 30
    var stepUp = 5
    var stepDown = 10
    var minimumLevel = -10
    var maximumLevel = 75
    var toneDuration: Int64 = 1000
    var maximumPreStimulusDelay: Int64 = 2000
    var postStimulusDelay: Int64 = 1000
    var maximumPresentations = 30

    var ears: [String] { earPreference == "both" ? ["left", "right"] : [earPreference] }

    static func parse(_ r: FieldReader, at path: JSONPath) -> ToneAudiometrySettings? {
        let d = r.diagnostics
        var s = ToneAudiometrySettings()
        if let list = r.array("frequencyList") {
            let values: [Int] = list.compactMap { value in
                guard case .int(let hz) = value, (125...16_000).contains(hz) else { return nil }
                return Int(hz)
            }
            if values.count != list.count || list.isEmpty || list.count > 20 {
                d.error("outOfRange", "\"frequencyList\" lists 1 to 20 frequencies, whole numbers of hertz from 125 to 16000.", at: path.key("frequencyList"))
            } else {
                s.frequencies = values
            }
        }
        s.earPreference = r.choice("earPreference", of: ["left", "right", "both"]) ?? s.earPreference
        s.minimumLevel = r.integer("dBHLMinimumThreshold", in: -20...120) ?? s.minimumLevel
        s.maximumLevel = r.integer("dBHLMaximumThreshold", in: -20...120) ?? s.maximumLevel
        s.initialLevel = r.integer("initialdBHLValue", in: -20...120) ?? s.initialLevel
        s.stepUp = r.integer("dBHLStepUpSize", in: 1...20) ?? s.stepUp
        s.stepDown = r.integer("dBHLStepDownSize", in: 1...40) ?? s.stepDown
        s.maximumPresentations = r.integer("maximumPresentations", in: 2...100) ?? s.maximumPresentations
        if !(s.minimumLevel...max(s.minimumLevel, s.maximumLevel)).contains(s.initialLevel) || s.minimumLevel >= s.maximumLevel {
            d.error("outOfRange", "The levels must keep dBHLMinimumThreshold ≤ initialdBHLValue ≤ dBHLMaximumThreshold, the minimum below the maximum.", at: path.key("initialdBHLValue"))
        }
        func seconds(_ key: String, _ range: ClosedRange<Double>, _ value: inout Int64) {
            guard let v = r.number(key) else { return }
            if range.contains(v) { value = Int64((v * 1000).rounded()) } else {
                d.error("outOfRange", "\"\(key)\" must be from \(range.lowerBound) to \(range.upperBound) seconds.", at: path.key(key))
            }
        }
        seconds("toneDuration", 0.1...10, &s.toneDuration)
        seconds("maxRandomPreStimulusDelay", 0...10, &s.maximumPreStimulusDelay)
        seconds("postStimulusDelay", 0.1...10, &s.postStimulusDelay)
        return s
    }
}

/// Tone audiometry (docs/active-tasks.md): for each ear and each frequency, a modified
/// Hughson–Westlake staircase. The host plays each tone when the state says (`toneAt`, for
/// `toneDuration`, in `ear` at `level` dB HL) and sends a `tap` when the participant hears it.
/// A tap from the tone's start until `postStimulusDelay` after its end is a response; the window
/// closing without one is a miss (`tick`). After a response the level goes down `stepDown`, after
/// a miss up `stepUp` (a presentation after a miss is "ascending"). The threshold is the first
/// level to get two responses among its first three ascending presentations. A miss at the
/// maximum level, or `maximumPresentations` at one frequency, ends the frequency without one.
/// Each trial starts when the last one ended and waits a random pre-stimulus delay first.
struct ToneAudiometryGame: GameRules {
    struct Unit: Sendable, Equatable {
        let level: Int
        let start: Int64
        let delay: Int64
        let ascending: Bool
        /// The tap's time, or nil for a miss.
        var tap: Int64?
    }

    struct Run: Sendable, Equatable {
        let ear: String
        let frequency: Int
        var units: [Unit] = []
        var threshold: Int?
        var over = false
        /// Per level, its ascending presentations and responses (levels are −20…120).
        var ascending: [Int: (presented: Int, responded: Int)] = [:]

        static func == (a: Run, b: Run) -> Bool {
            a.ear == b.ear && a.frequency == b.frequency && a.units == b.units && a.threshold == b.threshold && a.over == b.over
                && a.ascending.count == b.ascending.count
                && a.ascending.allSatisfy { key, value in b.ascending[key].map { $0 == value } ?? false }
        }
    }

    /// The delays' generator: its state is a function of the seed, the stream and the draws so
    /// far, so two games are equal when those are.
    struct Delays: Sendable, Equatable {
        var generator: PCG32
        let seed: UInt64
        var drawn = 0
        static func == (a: Delays, b: Delays) -> Bool { a.seed == b.seed && a.drawn == b.drawn }

        mutating func next(upTo maximum: Int64) -> Int64 {
            drawn += 1
            return Int64(generator.next(below: UInt32(maximum + 1)))
        }
    }

    let settings: ToneAudiometrySettings
    let step: String
    private(set) var runs: [Run] = []
    /// The trial being played: its level, whether it is ascending, when it started and its delay.
    private(set) var level: Int
    private(set) var ascending = false
    private(set) var start: Int64 = 0
    private(set) var delay: Int64 = 0
    private var delays: Delays

    /// The stream `step#audiometry`: each trial's pre-stimulus delay in turn, in milliseconds, a
    /// number below maxRandomPreStimulusDelay + 1.
    static func streamName(step: String) -> String { step + "#audiometry" }

    init(settings: ToneAudiometrySettings, seed: UInt64, step: String) {
        self.settings = settings
        self.step = step
        delays = Delays(generator: PCG32(seed: seed, sequence: PCG32.sequence(named: ToneAudiometryGame.streamName(step: step))), seed: seed)
        level = settings.initialLevel
        for ear in settings.ears {
            for frequency in settings.frequencies { runs.append(Run(ear: ear, frequency: frequency)) }
        }
        delay = delays.next(upTo: settings.maximumPreStimulusDelay)
    }

    /// The frequency being tested (its run's index), past the end once over.
    private var current: Int { runs.firstIndex { !$0.over } ?? runs.count }
    var isOver: Bool { current >= runs.count }
    private var toneAt: Int64 { start.addingSaturated(delay) }
    private var windowEnd: Int64 { toneAt.addingSaturated(settings.toneDuration).addingSaturated(settings.postStimulusDelay) }
    var nextDue: Int64? { isOver ? nil : windowEnd }

    mutating func advance(to time: Int64) {
        while !isOver && windowEnd <= time { conclude(tap: nil, at: windowEnd) }
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .tap else {
            throw GameInput.refused("wrongInput", "Tone audiometry takes a tap when the participant hears the tone.")
        }
        guard input.at >= toneAt else {
            throw GameInput.refused("notYet", "The tone starts at \(toneAt) ms of the step's time; a tap before it is not a response.")
        }
        conclude(tap: input.at, at: input.at)
    }

    /// Ends the trial (a response at `tap`, or a miss), moves the staircase and starts the next
    /// trial at `time`.
    private mutating func conclude(tap: Int64?, at time: Int64) {
        let r = current
        let responded = tap != nil
        runs[r].units.append(Unit(level: level, start: start, delay: delay, ascending: ascending, tap: tap))
        // Ascending presentations are tallied; at the minimum level every one is (nothing below
        // to ascend from).
        if ascending || level == settings.minimumLevel {
            var tally = runs[r].ascending[level] ?? (0, 0)
            tally.presented += 1
            if responded { tally.responded += 1 }
            runs[r].ascending[level] = tally
            if responded && tally.responded == 2 && tally.presented <= 3 {
                runs[r].threshold = level
                runs[r].over = true
            }
        }
        if !runs[r].over {
            if responded {
                level = max(level - settings.stepDown, settings.minimumLevel)
                ascending = false
            } else if level >= settings.maximumLevel {
                runs[r].over = true
            } else {
                level = min(level + settings.stepUp, settings.maximumLevel)
                ascending = true
            }
        }
        if !runs[r].over && runs[r].units.count >= settings.maximumPresentations { runs[r].over = true }
        if runs[r].over {
            level = settings.initialLevel
            ascending = false
        }
        start = time
        if !isOver { delay = delays.next(upTo: settings.maximumPreStimulusDelay) }
    }

    var stateJSON: JSONObject {
        var o = JSONObject([
            "type": .string("toneAudiometry"),
            "frequencies": .int(Int64(runs.count)),
            "over": .bool(isOver),
        ])
        if !isOver {
            let run = runs[current]
            o["index"] = .int(Int64(current))
            o["ear"] = .string(run.ear)
            o["frequency"] = .int(Int64(run.frequency))
            o["level"] = .int(Int64(level))
            o["trial"] = .int(Int64(run.units.count + 1))
            o["startedAt"] = GameInput.seconds(start)
            o["toneAt"] = GameInput.seconds(toneAt)
            o["toneDuration"] = GameInput.seconds(settings.toneDuration)
            o["respondBy"] = GameInput.seconds(windowEnd)
        }
        return o
    }

    var resultJSON: JSONObject {
        JSONObject([
            "toneDuration": GameInput.seconds(settings.toneDuration),
            "maxRandomPreStimulusDelay": GameInput.seconds(settings.maximumPreStimulusDelay),
            "postStimulusDelay": GameInput.seconds(settings.postStimulusDelay),
            "samples": .array(runs.filter { !$0.units.isEmpty }.map { run in
                .object([
                    "channel": .string(run.ear),
                    "frequency": .int(Int64(run.frequency)),
                    "calculatedThreshold": run.threshold.map { .int(Int64($0)) } ?? .null,
                    "units": .array(run.units.map { u in
                        .object([
                            "dBHLValue": .int(Int64(u.level)),
                            "startOfUnitTimeStamp": GameInput.seconds(u.start),
                            "preStimulusDelay": GameInput.seconds(u.delay),
                            "ascending": .bool(u.ascending),
                            "responded": .bool(u.tap != nil),
                            "userTapTimeStamp": u.tap.map(GameInput.seconds) ?? .null,
                            "timeoutTimeStamp": u.tap == nil ? GameInput.seconds(u.start + u.delay + settings.toneDuration + settings.postStimulusDelay) : .null,
                        ])
                    }),
                ])
            }),
        ])
    }
}
