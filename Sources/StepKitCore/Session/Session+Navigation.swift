import StepKitBase

/// Moving through the task: forward, back, skip, finish.
extension Session {
    /// Where going forward from the current step would lead now (nil: the task would end).
    func routeForward() -> Navigator.Route? {
        guard let index = currentIndex else { return nil }
        let route = Navigator(task).route(leaving: index, in: self)
        return task.rules.stepBlocks.isEmpty ? route : instanceRoute(route, leaving: index)
    }

    /// Ends the run: every recorder stops, an active step's timer stops, the host hears why.
    mutating func endRun(_ reason: FinishReason, at time: Int64) {
        stopTime(at: time)
        stopActiveRecorders(at: time)
        stopAsyncActions(leaving: nil, time: time)
        stopActiveTimer(at: time)
        finishClock(reason, at: time)
        reviewReturn = nil
        emit("taskFinished", ["reason": .string(reason.rawValue)], at: time)
    }

    /// Whatever the reason the run ends for, an active step still running when it ends stops
    /// running then, as its recorders do. Only `completed` used to leave no timer running (it is
    /// reached by going forward, which needs the step finished); a run that ended `failed`,
    /// `discarded`, `saved` or `earlyTermination` on a running step kept its timer going, so
    /// every later save counted the time since as the step's (issue 26, item 12).
    private mutating func stopActiveTimer(at time: Int64) {
        updateCurrent { visit in
            guard var run = visit.active, run.status == .running else { return }
            run.elapsedBefore = run.elapsed(at: time)
            run.runningSince = nil
            run.status = .finished
            run.finishDate = time
            visit.active = run
        }
    }

    package mutating func goForward() throws(StepKitError) {
        try requireInProgress()
        // Worked out once: what the step requires and the visit it closes read the same items.
        var hidden: [String] = []
        if let index = currentIndex { hidden = hiddenItems(step: index) }
        let problems = forwardProblems(hidden: hidden)
        guard problems.isEmpty else {
            throw stateError("answerRequired", "", problems: problems)
        }
        let left = currentIndex
        leaveCurrent(skipped: false, hidden: hidden)
        recordMove(.forward, from: left, at: latestDate)
        _checkInvariants()
    }

    /// Records a move that was made at `time`: from the step left to the current one (none: the
    /// run ended).
    private mutating func recordMove(_ kind: AuditTrail.Kind, from left: Int?, at time: Int64) {
        guard audit.isOn else { return }
        audit.record(kind, at: time, step: left, to: isFinished ? nil : currentIndex)
    }

    package mutating func goBackward() throws(StepKitError) {
        try requireInProgress()
        guard path.count > 1 else {
            throw stateError("firstStep", "This is the first step; there is no step to go back to.")
        }
        let leaving = currentIndex
        let time = now
        stopActiveRecorders(at: time)
        let previous = events.isRecording ? currentStep?.identifier : nil
        foldTime(at: time)
        popVisit()
        // Leaving a later visit of a step that an earlier visit still holds on the path (a
        // loop): the earlier visit's own answer comes back, and the later one waits to prefill
        // the step when navigation reaches it again.
        // A repeating section's step keeps its answer in its instance instead, and going back
        // into another instance brings that instance's answers (`Session+StepBlocks`).
        if let step = leaving, task.rules.blockOfStep[step] == nil,
           let earlier = path.latestPosition(of: step).flatMap({ path[ifPresent: $0] }) {
            answers.setAside(step: step, restoring: earlier.skipped ? nil : earlier.answer)
        }
        if let index = currentIndex, let n = task.rules.blockOfStep[index], let instance = current?.instance {
            switchInstance(n, to: instance)
        }
        updateCurrent { visit in
            visit.endDate = nil
            visit.answer = nil
            visit.skipped = false
        }
        clock.touched = true
        stepAppeared(previous: previous, at: time)
        recordMove(.backward, from: leaving, at: time)
        _checkInvariants()
    }

    package mutating func skip() throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, step.takesAnswers, step.optional else {
            throw stateError("notSkippable", "Only an optional question or form can be skipped.")
        }
        let left = currentIndex
        leaveCurrent(skipped: true)
        recordMove(.skip, from: left, at: latestDate)
        _checkInvariants()
    }

    package mutating func finish(_ reason: FinishReason) throws(StepKitError) {
        try requireInProgress()
        if reason == .completed {
            guard routeForward()?.step == nil else {
                throw stateError("notAtEnd", "The task can be completed only from its last step; go forward through the steps that remain.")
            }
            try goForward()
            return
        }
        let time = now
        closeCurrent(at: time, skipped: false)
        clock.touched = true
        endRun(reason, at: time)
        if audit.isOn { audit.record(.finish, at: time, step: currentIndex, detail: reason.rawValue) }
        _checkInvariants()
    }

    /// Ends the current visit and moves where navigation leads, or completes the task. `hidden`:
    /// the current step's `hiddenItems`, when the caller has them already.
    mutating func leaveCurrent(skipped: Bool, hidden: [String]? = nil) {
        let time = now
        closeCurrent(at: time, skipped: skipped, hidden: hidden)
        clock.touched = true
        // The route is decided after the visit is closed, so a skipped step reads as unanswered.
        if reviewReturn != nil {
            continueTowardReview(routeForward(), time: time)
            return
        }
        guard let route = routeForward(), let next = route.step else {
            endRun(.completed, at: time)
            return
        }
        arrive(at: next, time: time, route: route)
    }

    mutating func closeCurrent(at time: Int64, skipped: Bool, hidden known: [String]? = nil) {
        guard let index = currentIndex else { return }
        foldTime(at: time)
        stopActiveRecorders(at: time)
        stopAsyncActions(leaving: index, time: time)
        let hidden = known ?? hiddenItems(step: index)
        let kept = skipped ? nil : answers[index].map { Session.visibleAnswer($0, hiding: hidden) }
        updateCurrent { visit in
            visit.endDate = time
            visit.skipped = skipped
            visit.answer = kept
            visit.hiddenItems = hidden
        }
    }
}
