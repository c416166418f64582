import StepKitBase

/// What holds between a session's parts after every operation, checked in debug builds (in the
/// style of swift-collections' `_checkInvariants`): each mutating entry point checks it before
/// it returns, and the tests call it after every call they make (`SessionInvariantTests`).
extension Session {
    /// Checks each part's own invariants and those that tie the parts together: the path's
    /// visits are of the task's steps; an empty path is a run that ended before showing a step;
    /// every visit but the last was left and, in a run in progress, the last was not; the dates
    /// follow each other from the run's start to its end. Debug builds only; the release build
    /// compiles it to nothing.
    func _checkInvariants() {
        #if DEBUG
        path._checkInvariants()
        answers._checkInvariants(stepCount: task.steps.count)
        events._checkInvariants()
        clock._checkInvariants()
        actions._checkInvariants(actions: task.asyncActions)
        audit._checkInvariants()
        timing._checkInvariants()
        instancesCursor._checkInvariants(task: task)
        stepInstances._checkInvariants(task: task)
        // A repeating section's step keeps no answers set aside (its instances keep them), and
        // every visit of one is in an instance the block has made.
        for (step, _) in answers.later { precondition(task.rules.blockOfStep[step] == nil, "step \(step) of a repeating section sets answers aside") }
        for visit in path {
            if let n = task.rules.blockOfStep[visit.stepIndex] {
                precondition(visit.instance >= 0 && visit.instance < max(stepInstances[block: n].made, 1) || visit.instance < stepInstanceCount(n),
                             "a visit in instance \(visit.instance) of block \(n), which it has not made")
            } else {
                precondition(visit.instance == 0, "a visit outside repeating sections is in instance 0")
            }
        }
        if let index = currentIndex, !isFinished, let n = task.rules.blockOfStep[index], let last = path.indices.last {
            precondition(path[last].instance == stepInstances[block: n].current, "the current visit is in its block's current instance")
        }
        precondition((timing.since == nil) == isFinished, "time counts exactly while the run is in progress")
        precondition(!path.isEmpty || isFinished, "only a run that has ended may have shown no step")
        var previous = clock.startDate
        for position in path.indices {
            let visit = path[position]
            precondition(task.step(at: visit.stepIndex) != nil, "visit \(position) is of one of the task's steps")
            precondition(visit.startDate >= previous, "visit \(position) starts no earlier than what comes before it")
            let isLast = position == path.count - 1
            if let end = visit.endDate {
                precondition(end >= visit.startDate, "visit \(position) ends no earlier than it starts")
                precondition(!isLast || isFinished, "the current visit of a run in progress is open")
                previous = end
            } else {
                precondition(isLast, "every visit before the last was left")
                previous = visit.startDate
            }
            if isLast && !isFinished {
                precondition(visit.answer == nil && !visit.skipped, "the current visit holds no closed answer")
            }
        }
        if let end = clock.endDate { precondition(end >= previous, "the run ends no earlier than its last visit") }
        if let plan = reviewReturn {
            precondition(!isFinished, "an edit from a review step goes on only in a run in progress")
            precondition(task.step(at: plan.review)?.isReview == true, "an edit returns to a review step")
        }
        #endif
    }
}
