import StepKitBase

/// The time a run has counted, for time limits and the result's `timeSpent`: like an active
/// step's timer, a sum of time already counted and the moment counting last started, so a run
/// saved away and restored later goes on with exactly the time it had (the time between is not
/// counted), and a new clock carries it on. Each visit counts its own share (`Visit.spent`).
struct TimeCount: Sendable, Equatable {
    /// The task's time counted before `since` (milliseconds).
    var taskBefore: Int64 = 0
    /// When counting last started on the session's clock; nil once the run has ended.
    var since: Int64?

    /// The task's time at `time`.
    func task(at time: Int64) -> Int64 {
        guard let since else { return taskBefore }
        return taskBefore.addingSaturated(max(time.subtractingSaturated(since), 0))
    }

    /// A visit's time at `time`, `before` being what it counted before `since`.
    func visit(_ before: Int64, at time: Int64, isCurrent: Bool) -> Int64 {
        guard isCurrent, let since else { return before }
        return before.addingSaturated(max(time.subtractingSaturated(since), 0))
    }

    /// Debug builds only: counted time is never negative.
    func _checkInvariants() {
        #if DEBUG
        precondition(taskBefore >= 0, "counted time is never negative")
        #endif
    }
}
