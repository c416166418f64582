import StepKitBase

/// ResearchKit's predefined sensor tasks (`ORKOrderedTask+ORKPredefinedActiveTask`: short walk,
/// timed walk, fitness check, tremor, two-finger tapping, audio) and a six-minute walk, as
/// templates: a step `{"type": "sensorTask", "task": name, "identifier", …parameters}` is expanded
/// at compile time into a section of ordinary steps (instructions, countdowns, active steps with
/// recorders, a form, a completion), which the compiler then compiles like any other. So a
/// session, its results and its saved data know nothing of templates.
///
/// The steps' identifiers are the template's identifier, a dot, and ResearchKit's step
/// identifier (`walk.walking.outbound`); a recorder's is its step's, a dot, and ResearchKit's
/// recorder identifier (`walk.walking.outbound.accelerometer`), since recorder identifiers are
/// unique in a task. The structure, durations, recorders and their frequencies are the facts of
/// docs/active-tasks.md; the texts are StepKit's own wording (English; a task in other languages
/// writes its own steps).
enum SensorTaskTemplate {
    static let names = ["shortWalk", "timedWalk", "fitnessCheck", "sixMinuteWalk", "tremor", "tapping", "audio"]

    /// ResearchKit's `ORKPredefinedTaskOption` names a template takes in `options`.
    static let optionNames = ["excludeInstructions", "excludeConclusion", "excludeAccelerometer", "excludeDeviceMotion",
                              "excludePedometer", "excludeLocation", "excludeHeartRate", "excludeAudio"]

    /// The tremor test's five poses, in order: the option that leaves one out, ResearchKit's
    /// step name, and what the participant does.
    static let tremorPoses: [(option: String, name: String, text: @Sendable (String) -> String)] = [
        ("excludeHandInLap", "handInLap", { "Rest your \($0) hand, holding the phone, in your lap." }),
        ("excludeHandAtShoulderHeight", "handAtShoulderLength", { "Hold the phone in your \($0) hand with your arm stretched out at shoulder height." }),
        ("excludeHandAtShoulderHeightElbowBent", "handAtShoulderLengthWithElbowBent", { "Hold the phone in your \($0) hand at shoulder height with your elbow bent." }),
        ("excludeHandToNose", "handToNose", { "Holding the phone in your \($0) hand, touch your nose with it and stretch your arm out again, over and over." }),
        ("excludeQueenWave", "handQueenWave", { "Holding the phone in your \($0) hand, turn your wrist to and fro as if waving." }),
    ]

    /// The countdown before every active part: ResearchKit's `ORKCountdownStep` default, 5 s.
    static let countdownSeconds = 5
    /// Motion recorders sample at 100 Hz in every predefined sensor task.
    static let motionFrequency = 100
    /// The audio task's recording: 44.1 kHz.
    static let audioSampleRate = 44_100

    /// The section `value` (a `sensorTask` step) expands to, or nil with its problems reported.
    static func expand(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> JSON? {
        let before = d.problems.count
        guard let r = FieldReader(value, at: path, d, what: "a sensor task") else { return nil }
        _ = r.string("type")
        let identifier = r.string("identifier", required: true, nonEmpty: true) ?? ""
        let task = r.choice("task", of: names, required: true)
        var options = Set<String>()
        let allowed = optionNames + (task == "tremor" ? tremorPoses.map(\.option) : [])
        for (i, option) in (r.array("options") ?? []).enumerated() {
            if let name = option.stringValue, allowed.contains(name) { options.insert(name) } else {
                d.error("unknownOption", "\"options\" lists option names: " + allowed.joined(separator: ", ") + ".", at: path.key("options").index(i))
            }
        }
        // Shown or not as a whole, as a section is.
        let visibleWhen = r.value("visibleWhen")
        var b = Builder(prefix: identifier, options: options, purpose: r.string("intendedUseDescription"))
        switch task {
        case "shortWalk": shortWalk(r, path, &b)
        case "timedWalk": timedWalk(r, path, &b)
        case "fitnessCheck": fitnessCheck(r, path, &b)
        case "sixMinuteWalk": sixMinuteWalk(r, path, &b)
        case "tremor": tremor(r, path, &b)
        case "tapping": tapping(r, path, &b)
        case "audio": audio(r, path, &b)
        default: break
        }
        r.finish()
        guard d.problems.count == before, task != nil else { return nil }
        var section = JSONObject(["type": .string("section"), "identifier": .string(identifier), "steps": .array(b.steps)])
        if let visibleWhen { section["visibleWhen"] = visibleWhen }
        return .object(section)
    }

    /// A number of seconds from the template's parameters, with its default and bounds.
    private static func seconds(_ r: FieldReader, _ key: String, _ fallback: Double, _ range: ClosedRange<Double>, _ path: JSONPath) -> Double {
        guard let v = r.number(key) else { return fallback }
        guard range.contains(v) else {
            r.diagnostics.error("outOfRange", "\"\(key)\" must be from \(range.lowerBound) to \(range.upperBound) seconds.", at: path.key(key))
            return fallback
        }
        return v
    }

    private static func hands(_ r: FieldReader) -> [String] {
        switch r.choice("handOptions", of: ["both", "left", "right"]) ?? "both" {
        case "left": return ["left"]
        case "right": return ["right"]
        default: return ["left", "right"]
        }
    }

    // MARK: The templates

    private static func shortWalk(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let stepsPerLeg = r.integer("numberOfStepsPerLeg", in: 1...10_000) ?? 20
        let rest = seconds(r, "restDuration", 20, 0...3600, path)
        let leg = seconds(r, "legDuration", 100, 1...3600, path)
        b.instruction("instruction0", "Gait and balance", b.purpose ?? "This activity measures your gait and balance as you walk and stand still.",
                      detail: "Do not continue if you cannot safely walk without help.")
        b.instruction("instruction1", "Gait and balance", "Find a place where you can safely walk without help for about \(stepsPerLeg) steps in a straight line.",
                      detail: "Put the phone in a pocket or bag and follow the spoken instructions.")
        b.countdown()
        let walking: [Builder.Recorder] = [.accelerometer, .deviceMotion, .pedometer]
        b.active("walking.outbound", "Walk up to \(stepsPerLeg) steps in a straight line.", seconds: leg, walking)
        b.active("walking.return", "Turn around, and walk back to where you started.", seconds: leg, walking)
        if rest > 0 {
            b.active("walking.rest", "Turn around, and stand still for \(Builder.spoken(rest)).", seconds: rest, [.accelerometer, .deviceMotion])
        }
        b.conclusion()
    }

    private static func timedWalk(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let distance = r.number("distanceInMeters") ?? 100
        if !(1...10_000).contains(distance) {
            r.diagnostics.error("outOfRange", "\"distanceInMeters\" must be from 1 to 10000.", at: path.key("distanceInMeters"))
        }
        let limit = seconds(r, "timeLimit", 180, 1...3600, path)
        let turnAround = seconds(r, "turnAroundTimeLimit", 60, 0...3600, path)
        let form = r.bool("includeAssistiveDeviceForm") ?? true
        let metres = Builder.spoken(distance, unit: "metre")
        b.instruction("instruction0", "Timed walk", b.purpose ?? "This activity measures how long you take to walk a short distance.",
                      detail: "Do not continue if you cannot safely walk without help.")
        if form {
            b.steps.append(.object([
                "type": .string("form"), "identifier": .string(b.id("timed.walk.form")),
                "title": .string("Timed walk"), "text": .string("About the help you use to walk"),
                "formItems": .array([
                    .object(["identifier": .string("timed.walk.form.afo"), "text": .string("Do you wear an ankle-foot orthosis?"),
                             "answerFormat": .object(["type": .string("boolean")])]),
                    .object(["identifier": .string("timed.walk.form.assistance"), "text": .string("What do you use to help you walk?"),
                             "answerFormat": .object(["type": .string("textChoice"), "style": .string("singleChoice"),
                                                      "textChoices": .array(Builder.assistiveDevices.map { .object(["text": .string($0.1), "value": .string($0.0)]) })])]),
                ]),
            ]))
        }
        b.instruction("instruction1", "Timed walk", "Find a place, preferably outside, where you can walk \(metres) in a straight line.",
                      detail: "Walk as fast as you safely can; do not slow down until you are past the finish.")
        b.instruction("instruction2", "Timed walk", "Walk \(metres), turn around, and walk back the same way.")
        b.countdown()
        let recorders: [Builder.Recorder] = [.pedometer, .accelerometer, .deviceMotion, .location]
        b.active("timed.walk.trial1", "Walk up to \(metres).", seconds: limit, recorders)
        if turnAround > 0 {
            b.active("timed.walk.turn.around", "Turn around.", seconds: turnAround, recorders)
        }
        b.active("timed.walk.trial2", "Walk back \(metres) to where you started.", seconds: limit, recorders)
        b.conclusion()
    }

    private static func fitnessCheck(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let walk = seconds(r, "walkDuration", 360, 1...3600, path)
        let rest = seconds(r, "restDuration", 180, 0...3600, path)
        fitness(b.purpose ?? "This activity monitors your heart rate and measures how far you can walk in \(Builder.spoken(walk)).",
                walkStep: "fitness.walk", restStep: "fitness.rest", walk: walk, rest: rest, &b)
    }

    /// The six-minute walk test: six minutes by its definition (the American Thoracic Society's
    /// 2002 guideline), as the fitness check's walk, then an optional rest.
    private static func sixMinuteWalk(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let rest = seconds(r, "restDuration", 0, 0...3600, path)
        fitness(b.purpose ?? "This activity measures how far you walk in six minutes.",
                walkStep: "sixMinuteWalk.walk", restStep: "sixMinuteWalk.rest", walk: 360, rest: rest, &b)
    }

    private static func fitness(_ purpose: String, walkStep: String, restStep: String, walk: Double, rest: Double, _ b: inout Builder) {
        b.instruction("instruction0", "Fitness", purpose, detail: "Do not continue if you cannot safely walk without help.")
        b.instruction("instruction1", "Fitness", "Walk outdoors at your fastest possible pace for \(Builder.spoken(walk))."
                      + (rest > 0 ? " Then sit down and rest for \(Builder.spoken(rest))." : ""),
                      detail: "Put the phone in a pocket or bag and follow the spoken instructions.")
        b.countdown()
        b.active(walkStep, "Walk as fast as you can for \(Builder.spoken(walk)).", seconds: walk,
                 [.pedometer, .accelerometer, .deviceMotion, .location, .heartRate], halfway: true)
        if rest > 0 {
            b.active(restStep, "Sit down and rest comfortably for \(Builder.spoken(rest)).", seconds: rest,
                     [.accelerometer, .deviceMotion, .heartRate], halfway: true)
        }
        b.conclusion()
    }

    private static func tremor(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let duration = seconds(r, "activeStepDuration", 10, 1...120, path)
        let hands = hands(r)
        let poses = tremorPoses.filter { !b.options.contains($0.option) }
        if poses.isEmpty {
            r.diagnostics.error("noPoses", "The tremor test's options leave out every pose.", at: path.key("options"))
        }
        b.instruction("instruction0", "Tremor", b.purpose ?? "This activity measures the tremor of your hands in various positions.",
                      detail: "Find a place where you can sit comfortably for the test.")
        for hand in hands {
            b.instruction("instruction1.\(hand)", "Tremor", "Hold the phone in your \(hand) hand for the next steps.")
            for pose in poses {
                let step = "tremor.\(pose.name).\(hand)"
                b.instruction("\(step).instruction", "Tremor", pose.text(hand))
                b.countdown(named: "\(step).countdown")
                b.active(step, pose.text(hand), seconds: duration, [.accelerometer, .deviceMotion])
            }
        }
        b.conclusion()
    }

    private static func tapping(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let duration = seconds(r, "duration", 20, 1...300, path)
        let hands = hands(r)
        b.instruction("instruction0", "Tapping speed", b.purpose ?? "This activity measures your tapping speed.")
        for hand in hands {
            b.instruction("instruction1.\(hand)", "Tapping speed",
                          "Put the phone on a flat surface. Use two fingers of your \(hand) hand to tap the two buttons on the screen, one after the other, as fast as you can for \(Builder.spoken(duration)).")
            b.active("tapping.\(hand)", "Tap the buttons as fast as you can with two fingers of your \(hand) hand.", seconds: duration, [.accelerometer, .touch])
        }
        b.conclusion()
    }

    private static func audio(_ r: FieldReader, _ path: JSONPath, _ b: inout Builder) {
        let duration = seconds(r, "duration", 20, 1...600, path)
        let speech = r.string("speechInstruction")
        let short = r.string("shortSpeechInstruction")
        let checkLevel = r.bool("checkAudioLevel") ?? false
        b.instruction("instruction0", "Voice", b.purpose ?? "This activity records your voice.")
        b.instruction("instruction1", "Voice", speech ?? "Take a deep breath and say \"Aaaaah\" into the microphone for as long as you can, evenly.",
                      detail: "Find a quiet place first.")
        b.countdown(recorders: checkLevel && !b.options.contains("excludeAudio") ? [.audio] : [])
        b.active("audio", short ?? "Say \"Aaaaah\" into the microphone for as long as you can.", seconds: duration, [.audio])
        b.conclusion()
    }

    // MARK: Building steps

    struct Builder {
        enum Recorder: String {
            case accelerometer, deviceMotion, pedometer, location, heartRate, audio, touch

            /// The predefined-task option that leaves it out.
            var option: String? {
                switch self {
                case .accelerometer: return "excludeAccelerometer"
                case .deviceMotion: return "excludeDeviceMotion"
                case .pedometer: return "excludePedometer"
                case .location: return "excludeLocation"
                case .heartRate: return "excludeHeartRate"
                case .audio: return "excludeAudio"
                case .touch: return nil
                }
            }
        }

        /// ResearchKit's timed-walk assistive devices (values) with StepKit's texts.
        static let assistiveDevices = [("none", "None"), ("unilateralCane", "A cane in one hand"), ("unilateralCrutch", "A crutch on one side"),
                                       ("bilateralCane", "Two canes"), ("bilateralCrutch", "Two crutches"), ("walker", "A walker or rollator")]

        let prefix: String
        let options: Set<String>
        let purpose: String?
        var steps: [JSON] = []

        func id(_ name: String) -> String { prefix + "." + name }

        /// "20 seconds", "3 minutes", "100 metres".
        static func spoken(_ value: Double, unit: String = "second") -> String {
            var amount = value, unit = unit
            if unit == "second", value >= 60, value.truncatingRemainder(dividingBy: 60) == 0 {
                amount = value / 60
                unit = "minute"
            }
            let number = amount == amount.rounded() ? String(Int(amount)) : String(amount)
            return number + " " + unit + (amount == 1 ? "" : "s")
        }

        mutating func instruction(_ name: String, _ title: String, _ text: String, detail: String? = nil) {
            guard !options.contains("excludeInstructions") else { return }
            var o = JSONObject(["type": .string("instruction"), "identifier": .string(id(name)), "title": .string(title), "text": .string(text)])
            if let detail { o["detailText"] = .string(detail) }
            steps.append(.object(o))
        }

        mutating func countdown(named name: String = "countdown", recorders: [Recorder] = []) {
            var o = JSONObject(["type": .string("countdown"), "identifier": .string(id(name)), "stepDuration": .int(Int64(SensorTaskTemplate.countdownSeconds))])
            if !recorders.isEmpty { o["recorderConfigurations"] = configurations(recorders, step: id(name)) }
            steps.append(.object(o))
        }

        /// An active step that starts by itself, speaks its text, vibrates and sounds at its start
        /// and finish, and goes on when its time is up.
        mutating func active(_ name: String, _ text: String, seconds: Double, _ recorders: [Recorder], halfway: Bool = false) {
            steps.append(.object([
                "type": .string("active"), "identifier": .string(id(name)), "text": .string(text),
                "stepDuration": .number(seconds),
                "shouldStartTimerAutomatically": .bool(true), "shouldContinueOnFinish": .bool(true),
                "spokenInstruction": .string(text),
                "shouldSpeakCountDown": .bool(halfway), "shouldSpeakRemainingTimeAtHalfway": .bool(halfway),
                "shouldVibrateOnStart": .bool(true), "shouldPlaySoundOnStart": .bool(true),
                "shouldVibrateOnFinish": .bool(true), "shouldPlaySoundOnFinish": .bool(true),
                "recorderConfigurations": configurations(recorders, step: id(name)),
            ]))
        }

        func configurations(_ recorders: [Recorder], step: String) -> JSON {
            .array(recorders.filter { $0.option.map { !options.contains($0) } ?? true }.map { recorder in
                var o = JSONObject(["type": .string(recorder.rawValue), "identifier": .string(step + "." + recorder.rawValue)])
                switch recorder {
                case .accelerometer, .deviceMotion: o["frequency"] = .int(Int64(SensorTaskTemplate.motionFrequency))
                case .audio: o["sampleRate"] = .int(Int64(SensorTaskTemplate.audioSampleRate))
                case .pedometer, .location, .heartRate, .touch: break
                }
                return .object(o)
            })
        }

        mutating func conclusion() {
            guard !options.contains("excludeConclusion") else { return }
            steps.append(.object(["type": .string("completion"), "identifier": .string(id("conclusion")),
                                  "title": .string("Activity complete"), "text": .string("Thank you. Your data will be analysed.")]))
        }
    }
}
