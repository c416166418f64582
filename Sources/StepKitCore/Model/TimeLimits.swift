import StepKitBase

/// `timeLimit` on the task and on steps, in milliseconds of the session's clock (SurveyJS's
/// `timeLimit` and `timeLimitPerPage`). Counted like an active step's timer: time counts while
/// the session runs and not while it is saved away (`Session+TimeLimits.swift`).
struct TimeLimits: Sendable {
    /// The task's limit: when it runs out, the task ends with the reason `timedOut`.
    var task: Int64?
    /// Each step's limit and what happens when it runs out.
    var steps = IndexTable<StepTimeLimit>()

    var isEmpty: Bool { task == nil && steps.isEmpty }

    /// The longest limit a definition may give: a week (a longer one is a mistake of units).
    static let maximumSeconds: Double = 7 * 24 * 3600
}

struct StepTimeLimit: Sendable {
    let milliseconds: Int64
    /// `onTimeLimit: "endTask"`: the task ends (`timedOut`); otherwise (`"next"`, the default)
    /// the step is left forward as it stands, its required answers or not.
    let endsTask: Bool
}

extension TaskCompiler {
    /// The task's and the steps' `timeLimit` (seconds, more than 0, at most a week) and
    /// `onTimeLimit`, read from the definition once every step is known.
    static func compileTimeLimits(_ r: FieldReader, _ b: Builder) -> TimeLimits {
        var limits = TimeLimits()
        if let value = r.value("timeLimit") {
            limits.task = milliseconds(value, at: .root.key("timeLimit"), b.d)
        }
        for (index, step) in b.steps.enumerated() {
            let action = step.presentation["onTimeLimit"]
            var endsTask = false
            if let action {
                switch action.stringValue {
                case "next"?: break
                case "endTask"?: endsTask = true
                default:
                    b.d.error("invalidValue", "\"onTimeLimit\" is \"next\" or \"endTask\".", at: step.definitionPath.key("onTimeLimit"))
                }
            }
            guard let value = step.presentation["timeLimit"] else {
                if action != nil {
                    b.d.error("invalidValue", "\"onTimeLimit\" needs a \"timeLimit\" on the same step.", at: step.definitionPath.key("onTimeLimit"))
                }
                continue
            }
            if let ms = milliseconds(value, at: step.definitionPath.key("timeLimit"), b.d) {
                limits.steps[index] = StepTimeLimit(milliseconds: ms, endsTask: endsTask)
            }
        }
        return limits
    }

    private static func milliseconds(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> Int64? {
        guard let seconds = value.numericValue else {
            d.error("wrongType", "\"timeLimit\" is a number of seconds, found \(value.typeName).", at: path)
            return nil
        }
        guard seconds > 0, seconds <= TimeLimits.maximumSeconds, seconds.isFinite else {
            d.error("outOfRange", "\"timeLimit\" must be more than 0 and at most \(Int(TimeLimits.maximumSeconds)) seconds (a week), found \(JSONWriter.string(value)).", at: path)
            return nil
        }
        let ms = (seconds * 1000).rounded()
        return ms >= 1 ? Int64(ms) : 1
    }
}
