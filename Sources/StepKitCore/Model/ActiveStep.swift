import StepKitBase

/// What an active step does over time (ResearchKit's `ORKActiveStep`, `ORKCountdownStep` and
/// `ORKWaitStep`): its duration, whether it starts and continues by itself, what it speaks or
/// plays, and what it records. Times are in milliseconds.
struct ActiveStepSettings: Sendable {
    enum Kind: String, Sendable { case active, countdown, wait }

    let kind: Kind
    /// 0: the step has no timer (it starts finished, or for a wait step, the host finishes it).
    let duration: Int64
    /// Whether it starts by itself, and whether it goes on to the next step when it finishes.
    let startsAutomatically, continuesOnFinish: Bool
    /// What it says: the last three seconds counted down, the halfway prompt, its instructions.
    let speaksCountDown, speaksHalfway: Bool
    let spokenInstruction, finishedSpokenInstruction: String?
    /// The sounds and vibrations at its start and its finish.
    let soundOnStart, soundOnFinish, vibrateOnStart, vibrateOnFinish: Bool
    let recorders: [RecorderSettings]
    /// For a predefined active task's step (`spatialSpanMemory`, `psat` …): its game, which the
    /// host plays through `stepkit_session_input` (`Games/`).
    var game: GameSettings? = nil

    /// The moments, in milliseconds of the step's own time, at which something is due: the
    /// spoken countdown of the last three seconds, the halfway prompt, the end.
    var marks: [Mark] {
        guard duration > 0 else { return [] }
        var marks: [Mark] = []
        if speaksHalfway { marks.append(Mark(at: duration / 2, kind: .halfway)) }
        if speaksCountDown {
            for seconds in stride(from: 3, through: 1, by: -1) where Int64(seconds) * 1000 < duration {
                marks.append(Mark(at: duration - Int64(seconds) * 1000, kind: .countDown(seconds)))
            }
        }
        marks.append(Mark(at: duration, kind: .end))
        return marks.sorted { $0.at < $1.at }
    }

    struct Mark: Sendable, Equatable {
        enum Kind: Sendable, Equatable { case halfway, countDown(Int), end }
        let at: Int64
        let kind: Kind
    }

    /// Reads an active, countdown or wait step's fields, with ResearchKit's defaults for each.
    /// A game step (`game`) starts by itself and continues when its game is over, unless it says
    /// otherwise.
    static func parse(_ r: FieldReader, kind: Kind, path: JSONPath, seenRecorders: inout Set<String>, game: Bool = false) -> ActiveStepSettings? {
        let d = r.diagnostics
        let before = d.problems.count
        let durationSeconds: Double
        switch kind {
        case .countdown:
            durationSeconds = r.number("stepDuration") ?? 5
            if durationSeconds < 3 {
                d.error("outOfRange", "A countdown lasts at least 3 seconds.", at: path.key("stepDuration"))
            }
        case .active:
            durationSeconds = r.number("stepDuration") ?? 0
        case .wait:
            durationSeconds = 0
        }
        if durationSeconds < 0 || durationSeconds > 86_400 {
            d.error("outOfRange", "\"stepDuration\" must be between 0 and 86400 seconds.", at: path.key("stepDuration"))
        }
        // ResearchKit's defaults: a countdown starts and continues by itself; a wait step runs
        // until the host finishes it or goes forward; an active step waits for the host.
        let settings = ActiveStepSettings(
            kind: kind,
            duration: Int64((min(max(durationSeconds, 0), 86_400) * 1000).rounded()),
            startsAutomatically: r.bool("shouldStartTimerAutomatically") ?? (kind != .active || game),
            continuesOnFinish: r.bool("shouldContinueOnFinish") ?? (kind == .countdown || game),
            speaksCountDown: r.bool("shouldSpeakCountDown") ?? false,
            speaksHalfway: r.bool("shouldSpeakRemainingTimeAtHalfway") ?? false,
            spokenInstruction: r.string("spokenInstruction"),
            finishedSpokenInstruction: r.string("finishedSpokenInstruction"),
            soundOnStart: r.bool("shouldPlaySoundOnStart") ?? false,
            soundOnFinish: r.bool("shouldPlaySoundOnFinish") ?? false,
            vibrateOnStart: r.bool("shouldVibrateOnStart") ?? false,
            vibrateOnFinish: r.bool("shouldVibrateOnFinish") ?? false,
            recorders: RecorderSettings.parseList(r.array("recorderConfigurations") ?? [], at: path.key("recorderConfigurations"), d, seen: &seenRecorders)
        )
        _ = r.bool("shouldShowDefaultTimer")
        _ = r.bool("shouldUseNextAsSkipButton")
        _ = r.string("image")
        if kind == .wait { _ = r.choice("indicatorType", of: ["progressBar", "activityIndicator"]) }
        return d.problems.count == before ? settings : nil
    }
}

/// One recorder of an active step or an async action (ResearchKit's `ORKRecorderConfiguration`):
/// the host owns the sensor and pushes samples; the engine writes them and reports the files.
struct RecorderSettings: Sendable {
    let identifier: String
    let type: String
    /// What the host must ask the participant for before the recorder can run.
    let permission: String?
    /// The configuration as written (frequency etc.), passed on to the host in the state.
    let configuration: JSONObject

    static let permissions: [String: String?] = [
        "accelerometer": "motion", "deviceMotion": "motion", "pedometer": "motion", "gyroscope": "motion",
        "location": "location", "audio": "microphone", "healthQuantity": "health", "heartRate": "health",
        "touch": nil, "custom": nil,
    ]

    static func parseList(_ items: [JSON], at path: JSONPath, _ d: Diagnostics, seen: inout Set<String>) -> [RecorderSettings] {
        var recorders: [RecorderSettings] = []
        for (i, item) in items.enumerated() {
            let itemPath = path.index(i)
            guard let r = FieldReader(item, at: itemPath, d, what: "a recorder configuration") else { continue }
            if let recorder = parse(r, at: itemPath, seen: &seen) { recorders.append(recorder) }
            r.finish()
        }
        return recorders
    }

    /// Reads `type`, `identifier` and the type's settings from `r` (the caller finishes `r`).
    static func parse(_ r: FieldReader, at path: JSONPath, seen: inout Set<String>) -> RecorderSettings? {
        let d = r.diagnostics
        let type = r.choice("type", of: permissions.keys.sorted(), required: true)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        _ = r.number("frequency")
        _ = r.number("sampleRate")
        _ = r.string("quantityType")
        _ = r.string("unit")
        _ = r.bool("requiresBackgroundAudio")
        _ = r.bool("includeUserAccelerometer")
        if let frequency = r.object["frequency"]?.numericValue, frequency <= 0 || frequency > 1000 {
            d.error("outOfRange", "\"frequency\" must be above 0 and at most 1000 Hz.", at: path.key("frequency"))
        }
        guard let type, let identifier else { return nil }
        if !seen.insert(identifier).inserted {
            d.error("duplicateIdentifier", "Another recorder is already called \"\(identifier)\".", at: path.key("identifier"))
            return nil
        }
        return RecorderSettings(identifier: identifier, type: type, permission: permissions[type] ?? nil, configuration: r.object)
    }
}

/// SageResearch's async action: a recorder that starts at one step and stops after another,
/// across the steps between.
struct AsyncAction: Sendable {
    let recorder: RecorderSettings
    let startStep: Int
    /// Nil: records until the task ends.
    let stopStep: Int?
}
