/// Moving through the task: forward, back, skip, finish.
extension Session {
    /// The step that comes after the step at `index`, or nil when the task ends there.
    /// Ordered tasks go to the next step in order.
    func nextStepIndex(after index: Int) -> Int? {
        let next = index + 1
        return task.steps.indices.contains(next) ? next : nil
    }

    mutating func goForward() throws(StepKitError) {
        try requireInProgress()
        let problems = forwardProblems()
        guard problems.isEmpty else {
            throw stateError("answerRequired", "", problems: problems)
        }
        leaveCurrent(skipped: false)
    }

    mutating func goBackward() throws(StepKitError) {
        try requireInProgress()
        guard path.count > 1 else {
            throw stateError("firstStep", "This is the first step; there is no step to go back to.")
        }
        path.removeLast()
        if let last = path.indices.last {
            path[last].endDate = nil
            path[last].answer = nil
            path[last].skipped = false
        }
        touched = true
    }

    mutating func skip() throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, step.takesAnswers, step.optional else {
            throw stateError("notSkippable", "Only an optional question or form can be skipped.")
        }
        leaveCurrent(skipped: true)
    }

    mutating func finish(_ reason: FinishReason) throws(StepKitError) {
        try requireInProgress()
        if reason == .completed {
            guard nextStepIndex(after: current.stepIndex) == nil else {
                throw stateError("notAtEnd", "The task can be completed only from its last step; go forward through the steps that remain.")
            }
            try goForward()
            return
        }
        closeCurrent(at: now, skipped: false)
        endDate = path.last?.endDate ?? now
        finishReason = reason
        touched = true
    }

    /// Ends the current visit and moves to the next step, or completes the task.
    private mutating func leaveCurrent(skipped: Bool) {
        let time = now
        closeCurrent(at: time, skipped: skipped)
        touched = true
        if let next = nextStepIndex(after: current.stepIndex) {
            path.append(Visit(stepIndex: next, startDate: time))
        } else {
            endDate = time
            finishReason = .completed
        }
    }

    private mutating func closeCurrent(at time: Int64, skipped: Bool) {
        guard let last = path.indices.last else { return }
        path[last].endDate = time
        path[last].skipped = skipped
        path[last].answer = skipped ? nil : answers[path[last].stepIndex]
    }
}
