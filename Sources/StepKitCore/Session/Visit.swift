import StepKitBase

/// One presentation of a step on the session's path. A step visited twice (a loop, or after
/// going back and forward again) has two visits; going back removes the last one.
struct Visit: Sendable, Equatable {
    let stepIndex: Int
    var startDate: Int64
    /// Set when the visit is left going forward (or the task finishes on it).
    var endDate: Int64?
    /// The answer as it was when the visit was left, so each visit's result keeps its own
    /// answer even when a later visit of the same step changes it. Nil while current.
    var answer: JSON?
    /// Left with `skip`: its result records no answer.
    var skipped: Bool = false
    /// The form items hidden by their `visibleWhen` when the visit was left: not in its result.
    var hiddenItems: [String] = []
    /// Whether the step's modifier applied when the step was reached.
    var modified: Bool = false
    /// For an active step: its timer, prompts and recorders.
    var active: ActiveRun?
    /// How navigation got here: the rule, branch and skip rules involved (for authors debugging
    /// a task).
    var arrival: Arrival = .saved(.null)
    /// The time counted on this visit (milliseconds; while it is the current one, up to
    /// `TimeCount.since`): the result's `timeSpent` and the step's time limit.
    var spent: Int64 = 0
}

/// Why a task run ended (ResearchKit's `ORKTaskFinishReason`).
package enum FinishReason: String, Sendable, CaseIterable {
    case completed, saved, discarded, failed, earlyTermination
    /// A time limit ran out (`timeLimit`; `Session+TimeLimits.swift`).
    case timedOut
}

/// The reasons a host may finish a run with (`stepkit_session_finish`): every reason but
/// `timedOut`, which only the session's own time limits give.
package enum HostFinishReason: String, Sendable, CaseIterable {
    case completed, saved, discarded, failed, earlyTermination

    package var reason: FinishReason { FinishReason(rawValue: rawValue) ?? .failed }
}
