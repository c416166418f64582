import StepKitBase

/// ResearchKit's `ORKReactionTimeStep` parameters: the stimulus comes a random time between the
/// minimum and maximum interval after an attempt's wait begins; a motion sample whose
/// acceleration reaches `thresholdAcceleration` (in g) is the response, taken until `timeout`
/// after the stimulus; `numberOfAttempts` attempts; the system sounds the host plays on a
/// response, a timeout and a movement before the stimulus (0: none). ResearchKit's predefined
/// task takes every one of them as an argument; the defaults here are StepKit's
/// (docs/active-tasks.md).
struct ReactionTimeSettings: Sendable, Equatable {
    var minimumStimulusInterval: Int64 = 4000
    var maximumStimulusInterval: Int64 = 10_000
    var thresholdAcceleration = 0.5
    var numberOfAttempts = 3
    var timeout: Int64 = 3000
    var successSound: Int64 = 0
    var timeoutSound: Int64 = 0
    var failureSound: Int64 = 0

    static func parse(_ r: FieldReader, at path: JSONPath) -> ReactionTimeSettings? {
        var s = ReactionTimeSettings()
        let d = r.diagnostics
        func milliseconds(_ key: String, _ range: ClosedRange<Double>, _ what: String) -> Int64? {
            guard let seconds = r.number(key) else { return nil }
            guard range.contains(seconds) else {
                d.error("outOfRange", "\"\(key)\" must be \(what).", at: path.key(key))
                return nil
            }
            return Int64((seconds * 1000).rounded())
        }
        s.minimumStimulusInterval = milliseconds("minimumStimulusInterval", 0...3600, "from 0 to 3600 seconds") ?? s.minimumStimulusInterval
        s.maximumStimulusInterval = milliseconds("maximumStimulusInterval", 0...3600, "from 0 to 3600 seconds") ?? s.maximumStimulusInterval
        s.timeout = milliseconds("timeout", 0.1...600, "from 0.1 to 600 seconds") ?? s.timeout
        if let threshold = r.number("thresholdAcceleration") {
            if threshold > 0 && threshold <= 100 { s.thresholdAcceleration = threshold } else {
                d.error("outOfRange", "\"thresholdAcceleration\" must be more than 0 and at most 100 (g).", at: path.key("thresholdAcceleration"))
            }
        }
        s.numberOfAttempts = r.integer("numberOfAttempts", in: 1...100) ?? s.numberOfAttempts
        s.successSound = Int64(r.integer("successSound", in: 0...Int(UInt32.max)) ?? 0)
        s.timeoutSound = Int64(r.integer("timeoutSound", in: 0...Int(UInt32.max)) ?? 0)
        s.failureSound = Int64(r.integer("failureSound", in: 0...Int(UInt32.max)) ?? 0)
        if s.minimumStimulusInterval > s.maximumStimulusInterval {
            d.error("outOfRange", "\"minimumStimulusInterval\" must not exceed \"maximumStimulusInterval\".", at: path.key("minimumStimulusInterval"))
        }
        return s
    }
}

/// The reaction time test (docs/active-tasks.md). Each attempt begins with a wait: the stimulus
/// comes at the wait's start plus a delay drawn from the seed. A motion sample at or over the
/// threshold before the stimulus is an early response: the wait starts again from that sample,
/// with a new delay. The first such sample from the stimulus on is the response (its time after
/// the stimulus is the reaction time); none by `timeout` after the stimulus is a timeout. Either
/// ends the attempt, and the next attempt's wait begins at that moment. The test is over after
/// `numberOfAttempts` attempts.
struct ReactionTimeGame: GameRules {
    struct Attempt: Sendable, Equatable {
        /// When the current wait began, the drawn delay, and so the stimulus (step time, ms).
        var waitStart: Int64
        var delay: Int64
        var earlyResponses = 0
        /// Milliseconds from the stimulus to the response, once responded.
        var responseTime: Int64?
        var timedOut = false
        var stimulus: Int64 { waitStart.addingSaturated(delay) }
        var isOver: Bool { responseTime != nil || timedOut }
    }

    /// The delays' generator, compared by what identifies its place in the stream (the seed is
    /// the game's; the stream its step's), so games compare as values.
    struct Delays: Sendable, Equatable {
        var generator: PCG32
        let seed: UInt64
        var drawn = 0
        static func == (a: Delays, b: Delays) -> Bool { a.seed == b.seed && a.drawn == b.drawn }
    }

    let settings: ReactionTimeSettings
    private var delays: Delays
    private(set) var attempts: [Attempt] = []
    /// The latest moment the game has seen (an input's or a due moment's), step time.
    private(set) var time: Int64 = 0
    /// The last thing that happened, for the host's feedback: what, when, the sound to play.
    private(set) var lastOutcome: (kind: String, at: Int64)?

    /// The stream `step#reactionTime`: each wait's delay, in milliseconds, is the minimum
    /// interval plus a number below (maximum − minimum + 1); nothing is drawn when they are equal.
    static func streamName(step: String) -> String { step + "#reactionTime" }

    init(settings: ReactionTimeSettings, seed: UInt64, step: String) {
        self.settings = settings
        delays = Delays(generator: PCG32(seed: seed, sequence: PCG32.sequence(named: ReactionTimeGame.streamName(step: step))), seed: seed)
        attempts = [Attempt(waitStart: 0, delay: nextDelay())]
    }

    static func == (a: ReactionTimeGame, b: ReactionTimeGame) -> Bool {
        a.settings == b.settings && a.delays == b.delays && a.attempts == b.attempts && a.time == b.time
            && a.lastOutcome?.kind == b.lastOutcome?.kind && a.lastOutcome?.at == b.lastOutcome?.at
    }

    private mutating func nextDelay() -> Int64 {
        let span = settings.maximumStimulusInterval - settings.minimumStimulusInterval
        guard span > 0 else { return settings.minimumStimulusInterval }
        delays.drawn += 1
        return settings.minimumStimulusInterval + Int64(delays.generator.next(below: UInt32(span + 1)))
    }

    var isOver: Bool { attempts.count >= settings.numberOfAttempts && attempts.last?.isOver == true }

    var nextDue: Int64? {
        guard !isOver, let current = attempts.last else { return nil }
        return time < current.stimulus ? current.stimulus : current.stimulus.addingSaturated(settings.timeout)
    }

    /// Ends the current attempt at `at` and begins the next one's wait there.
    private mutating func endAttempt(at: Int64) {
        guard attempts.count < settings.numberOfAttempts else { return }
        attempts.append(Attempt(waitStart: at, delay: nextDelay()))
    }

    mutating func advance(to time: Int64) {
        self.time = max(self.time, time)
        while !isOver, let current = attempts.last, current.stimulus.addingSaturated(settings.timeout) <= self.time {
            let end = current.stimulus.addingSaturated(settings.timeout)
            attempts[attempts.count - 1].timedOut = true
            lastOutcome = ("timeout", end)
            endAttempt(at: end)
        }
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .sample else {
            throw GameInput.refused("wrongInput", "The reaction time test takes motion samples (acceleration in g).")
        }
        // Due moments before the input have been processed (`GameRun.take`): the current attempt
        // has not timed out by the input's time.
        time = max(time, input.at)
        let threshold = settings.thresholdAcceleration
        guard input.x * input.x + input.y * input.y + input.z * input.z >= threshold * threshold,
              let current = attempts.last else { return }
        let i = attempts.count - 1
        if input.at < current.stimulus {
            attempts[i].earlyResponses += 1
            attempts[i].waitStart = input.at
            attempts[i].delay = nextDelay()
            lastOutcome = ("early", input.at)
        } else {
            attempts[i].responseTime = input.at - current.stimulus
            lastOutcome = ("success", input.at)
            endAttempt(at: input.at)
        }
    }

    private func sound(_ kind: String) -> Int64 {
        switch kind {
        case "success": return settings.successSound
        case "timeout": return settings.timeoutSound
        default: return settings.failureSound
        }
    }

    var stateJSON: JSONObject {
        var o = JSONObject([
            "type": .string("reactionTime"),
            "attempt": .int(Int64(attempts.count)),
            "numberOfAttempts": .int(Int64(settings.numberOfAttempts)),
            "thresholdAcceleration": .number(settings.thresholdAcceleration),
            "over": .bool(isOver),
        ])
        if !isOver, let current = attempts.last {
            o["stimulusAt"] = GameInput.seconds(current.stimulus)
            o["timeoutAt"] = GameInput.seconds(current.stimulus.addingSaturated(settings.timeout))
            o["stimulus"] = .bool(time >= current.stimulus)
        }
        if let last = lastOutcome {
            o["lastOutcome"] = .object(["outcome": .string(last.kind), "at": GameInput.seconds(last.at), "sound": .int(sound(last.kind))])
        }
        return o
    }

    var resultJSON: JSONObject {
        let done = attempts.filter(\.isOver)
        return JSONObject([
            "numberOfAttempts": .int(Int64(done.count)),
            "numberOfTimeouts": .int(Int64(done.filter(\.timedOut).count)),
            "attempts": .array(done.map { a in
                .object([
                    "timestamp": GameInput.seconds(a.stimulus),
                    "stimulusDelay": GameInput.seconds(a.delay),
                    "responseTime": a.responseTime.map(GameInput.seconds) ?? .null,
                    "timedOut": .bool(a.timedOut),
                    "earlyResponses": .int(Int64(a.earlyResponses)),
                ])
            }),
        ])
    }
}
