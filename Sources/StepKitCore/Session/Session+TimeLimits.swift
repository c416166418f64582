import StepKitBase

/// Time limits (`timeLimit` on the task and on steps) on the session's clock, and the time
/// counted for them and for the result (`TimeCount`). Like active steps, nothing runs by itself:
/// the state gives the deadline (`nextDeadline`), and `tick` processes what came due, dated when
/// it came due.
extension Session {
    /// Adds the time since counting last started to the task and the current visit, and starts
    /// counting again at `time`. Every change of what counts (a move, the end, a new clock)
    /// folds first.
    mutating func foldTime(at time: Int64) {
        guard let since = timing.since else { return }
        let elapsed = max(time.subtractingSaturated(since), 0)
        timing.taskBefore = timing.taskBefore.addingSaturated(elapsed)
        if current?.endDate == nil { updateCurrent { $0.spent = $0.spent.addingSaturated(elapsed) } }
        timing.since = max(time, since)
    }

    /// Stops counting (the run ended).
    mutating func stopTime(at time: Int64) {
        foldTime(at: time)
        timing.since = nil
    }

    /// The task's time so far.
    func taskTimeSpent(at time: Int64) -> Int64 { timing.task(at: time) }

    /// The current visit's time so far (0 when there is none).
    func stepTimeSpent(at time: Int64) -> Int64 {
        guard let visit = current else { return 0 }
        return timing.visit(visit.spent, at: time, isCurrent: visit.endDate == nil && !isFinished)
    }

    /// The current step's limit, if it has one.
    private var stepLimit: StepTimeLimit? {
        currentIndex.flatMap { task.rules.timeLimits.steps[$0] }
    }

    /// When the task's or the current step's limit runs out (milliseconds since the epoch).
    var timeLimitDeadline: Int64? {
        guard !isFinished, let since = timing.since else { return nil }
        var deadline: Int64?
        if let limit = task.rules.timeLimits.task {
            deadline = since.addingSaturated(limit.subtractingSaturated(timing.taskBefore))
        }
        if let limit = stepLimit, let visit = current {
            let step = since.addingSaturated(limit.milliseconds.subtractingSaturated(visit.spent))
            deadline = min(deadline ?? step, step)
        }
        return deadline
    }

    /// Processes the limits that ran out by `clockNow`, in the order they ran out: the task's
    /// ends the task (`timedOut`); a step's leaves the step forward as it stands, or ends the task
    /// (`onTimeLimit: "endTask"`). Returns whether any did.
    mutating func processTimeLimits(at clockNow: Int64, budget: inout Int) -> Bool {
        var fired = false
        while budget > 0, !isFinished, let since = timing.since {
            budget -= 1
            let taskLeft = task.rules.timeLimits.task.map { $0.subtractingSaturated(taskTimeSpent(at: clockNow)) }
            let limit = stepLimit
            let stepLeft = limit.map { $0.milliseconds.subtractingSaturated(stepTimeSpent(at: clockNow)) }
            let left = min(taskLeft ?? .max, stepLeft ?? .max)
            guard left <= 0 else { break }
            fired = true
            // When it ran out: `-left` before now, never before counting last started nor before
            // an event the host was already told of (a call after the deadline, before this tick).
            let due = max(clockNow.addingSaturated(left), since, events.latestDate)
            clock.override = due
            let step = currentStep?.identifier
            let stepIndex = currentIndex
            if let taskLeft, taskLeft == left {
                emit("timeLimitReached", ["scope": .string("task"), "step": .string(step)], at: due)
                closeCurrent(at: due, skipped: false)
                endRun(.timedOut, at: due)
                if audit.isOn { audit.record(.finish, at: due, step: stepIndex, detail: FinishReason.timedOut.rawValue) }
            } else if limit?.endsTask == true {
                emit("timeLimitReached", ["scope": .string("step"), "step": .string(step), "action": .string("endTask")], at: due)
                closeCurrent(at: due, skipped: false)
                endRun(.timedOut, at: due)
                if audit.isOn { audit.record(.finish, at: due, step: stepIndex, detail: FinishReason.timedOut.rawValue) }
            } else {
                emit("timeLimitReached", ["scope": .string("step"), "step": .string(step), "action": .string("next")], at: due)
                leaveCurrent(skipped: false)
                // The audit trail records the move the time limit made, as a move the host made.
                if audit.isOn { audit.record(.forward, at: due, step: stepIndex, to: isFinished ? nil : currentIndex, detail: "timeLimit") }
            }
            clock.override = nil
        }
        return fired
    }

    /// The state's `timeLimits`: for the task and the current step, the limit, the time left
    /// and the deadline (seconds; an ISO 8601 date); null when neither has a limit.
    func timeLimitsJSON() -> JSON {
        let limits = task.rules.timeLimits
        guard !limits.isEmpty else { return .null }
        let time = now
        func entry(_ limit: Int64, spent: Int64, extra: KeyValuePairs<String, JSON> = [:]) -> JSON {
            let left = max(limit.subtractingSaturated(spent), 0)
            var object = JSONObject([
                "limit": .number(Double(limit) / 1000),
                "spent": .number(Double(spent) / 1000),
                "remaining": .number(Double(left) / 1000),
                "deadline": isFinished ? .null : .string(CivilTime.iso8601(milliseconds: time.addingSaturated(left))),
            ])
            for (key, value) in extra { object[key] = value }
            return .object(object)
        }
        let taskEntry = limits.task.map { entry($0, spent: taskTimeSpent(at: time)) } ?? .null
        var stepEntry = JSON.null
        if !isFinished, let limit = stepLimit {
            stepEntry = entry(limit.milliseconds, spent: stepTimeSpent(at: time), extra: ["onTimeLimit": .string(limit.endsTask ? "endTask" : "next")])
        }
        return .object(["task": taskEntry, "step": stepEntry])
    }
}
