import StepKitBase

/// Restore's second check: restoration data may describe only a run the task allows.
///
/// The integrity member shows that data was not damaged; without an `integrityKey` it is a plain
/// SHA-256 that anyone can compute again after editing the data, so it proves nothing about who
/// wrote it. Restore therefore does not trust the saved run's shape: it replays the saved path
/// through the task's own navigation (the `Navigator` the session moves with), with every visit's
/// answer as it was when the visit was left, and refuses the data (code `notAllowed`, naming the
/// first problem and where it is) unless every visit is where navigation led from the one before,
/// every visit left going forward had what `go_forward` requires (or was skipped where `skip` is
/// allowed), a run finished `completed` ends where navigation ends, and the dates are in order.
///
/// The replay is one session grown visit by visit, so it costs one navigation decision per
/// visit; it creates nothing the host can see.
extension Restoration {
    static func checkAllowed(_ s: Session, savedAnswers: IndexTable<JSON>) throws(StepKitError) {
        try checkDates(s)
        let visits = s.path
        var replay = Session(task: s.task, options: s.options, clock: s.clock.source, taskRunUUID: s.taskRunUUID, startDate: s.startDate,
                             endDate: nil, finishReason: nil, visits: [], answers: AnswerStore(), touched: true, actions: AsyncActions())
        let start = Navigator(s.task).arrive(at: s.task.steps.isEmpty ? nil : replay.stepOrder.step(at: 0), from: nil, notes: [], in: replay)
        guard let first = visits.first else {
            guard s.finishReason == .completed, start.step == nil else {
                throw notAllowed("The saved path is empty, but the task shows a first step.", .root.key("path"))
            }
            return
        }
        if let problem = arrivalProblem(start, at: first, task: s.task, from: nil) {
            throw notAllowed(problem, .root.key("path").index(0))
        }
        for (i, visit) in visits.enumerated() {
            let path = JSONPath.root.key("path").index(i)
            guard let step = s.task.step(at: visit.stepIndex) else { throw notAllowed("A visit names no step of the task.", path) }
            // A run that ended as its last step appeared (an async action's recorder failed, say)
            // never prepared that step's timer.
            let endedOnArrival = i == visits.count - 1 && s.isFinished && s.finishReason != .completed
            if step.active != nil && visit.active == nil && !endedOnArrival {
                throw notAllowed("The visit of the active step \"\(step.identifier)\" carries no active-step state.", path.key("active"))
            }
            let next = visits[ifPresent: i + 1]
            // Only visits left going forward were decided by navigation: the current one and the
            // last one of a run that ended otherwise (saved, discarded, failed) were not left.
            guard next != nil || s.finishReason == .completed else { break }
            var open = visit
            open.endDate = nil
            open.answer = nil
            open.skipped = false
            replay.pushVisit(open)
            // A repeating section's instances as saved (how many were made), the replay in the
            // visit's instance; each visit's answer is set below (`Session+StepBlocks`).
            if !s.task.rules.stepBlocks.isEmpty {
                if i == 0 { replay.stepInstances = s.stepInstances.madeOnly }
                replay.followInstance(of: visit)
            }
            // The answer the run held when it left the visit: the visit's own (a form's hidden
            // items are not in it, and read as unanswered anyway), or the step's latest answer,
            // which still has them, or the visit's own with the hidden items' stored values
            // taken from the latest (another item's visibleWhen may read them).
            var candidates: [JSON?] = [visit.skipped ? nil : visit.answer]
            if !visit.skipped, let latest = savedAnswers[visit.stepIndex], latest != visit.answer {
                candidates.append(latest)
                if case .object(var merged)? = visit.answer, let stored = latest.objectValue, !visit.hiddenItems.isEmpty {
                    for item in visit.hiddenItems { if let value = stored[item] { merged[item] = value } }
                    if JSON.object(merged) != visit.answer { candidates.append(.object(merged)) }
                }
            }
            var firstProblem: (message: String, atNext: Bool)?
            for live in candidates {
                replay.updateCurrent { $0 = open }
                replay.answers[visit.stepIndex] = live
                if let problem = leavingProblem(&replay, visit: visit, step: step, next: next) {
                    firstProblem = firstProblem ?? problem
                    continue
                }
                firstProblem = nil
                break
            }
            if let firstProblem { throw notAllowed(firstProblem.message, firstProblem.atNext ? .root.key("path").index(i + 1) : path) }
        }
    }

    private static func notAllowed(_ problem: String, _ path: JSONPath) -> StepKitError {
        StepKitError(.restore, code: "notAllowed", message: "The restoration data describes a run the task does not allow: " + problem, path: path)
    }

    /// Why leaving `visit` (the replay's current visit, holding the answer the run held) going
    /// forward to `next` (nil: completing the task) is not what the task does, or nil.
    private static func leavingProblem(_ replay: inout Session, visit: Visit, step: Step, next: Visit?) -> (message: String, atNext: Bool)? {
        if let problem = leftProblem(&replay, visit: visit, step: step) { return (problem, false) }
        guard let route = replay.routeForward() else { return ("the step \"\(step.identifier)\" has no route.", false) }
        guard let next else {
            guard route.step == nil else {
                let onward = replay.task.step(at: route.step ?? -1)?.identifier ?? "?"
                return ("the run is saved as completed at \"\(step.identifier)\", but the task goes on to \"\(onward)\".", false)
            }
            return nil
        }
        return arrivalProblem(route, at: next, task: replay.task, from: step.identifier).map { ($0, true) }
    }

    /// Why `visit` could not have been left as saved (skipped, or with what it requires), or nil;
    /// on nil the replay's current visit is the saved, closed one.
    private static func leftProblem(_ replay: inout Session, visit: Visit, step: Step) -> String? {
        let name = "\"\(step.identifier)\""
        if visit.skipped {
            guard step.takesAnswers, step.optional else { return "the step \(name) is saved as skipped, but it cannot be skipped." }
            guard visit.answer == nil else { return "the skipped step \(name) is saved with an answer." }
        } else {
            // A step whose time limit ran out was left as it stood, its required answers or not
            // (`Session+TimeLimits.swift`): what it requires holds only for a step left in time.
            let timeRanOut = replay.task.rules.timeLimits.steps[visit.stepIndex].map { visit.spent >= $0.milliseconds } ?? false
            if !timeRanOut, let problem = replay.forwardProblems().first {
                return "the step \(name) was left without what it requires (\(problem.message))."
            }
            let kept = replay.answers[visit.stepIndex].map { replay.visibleAnswer($0, step: visit.stepIndex) }
            guard kept.map({ visit.answer?.sameValue(as: $0) ?? false }) ?? (visit.answer == nil) else {
                return "the answer saved with the visit of \(name) is not the answer the step had."
            }
            guard replay.hiddenItems(step: visit.stepIndex) == visit.hiddenItems else {
                return "the hidden items saved with the visit of \(name) are not the ones its rules hide."
            }
        }
        replay.updateCurrent { $0 = visit }
        return nil
    }

    /// Why `visit` is not where `route` arrives (its step, its modifier, its explanation), or nil.
    private static func arrivalProblem(_ route: Navigator.Route, at visit: Visit, task: Task, from: String?) -> String? {
        let saved = task.step(at: visit.stepIndex)?.identifier ?? "?"
        let origin = from.map { "from \"\($0)\"" } ?? "at the start"
        guard let reached = route.step else {
            return "navigation \(origin) ends the task, but the saved path goes on to \"\(saved)\"."
        }
        guard reached == visit.stepIndex else {
            let expected = task.step(at: reached)?.identifier ?? "?"
            return "navigation \(origin) leads to \"\(expected)\", not to \"\(saved)\"."
        }
        guard route.modified == visit.modified else {
            return "the step modifier of \"\(saved)\" is saved as \(visit.modified ? "" : "not ")applied, but its rule says otherwise."
        }
        guard Arrival.notes(route.notes).json(in: task).sameValue(as: visit.arrival.json(in: task)) else {
            return "the arrival saved with \"\(saved)\" is not how navigation reached it."
        }
        return nil
    }

    /// The dates of a run follow each other: the run starts before its first visit, each visit
    /// ends after it starts and before the next one starts, and the run ends after its last visit.
    /// Every visit but the current one was left; a run in progress has no end.
    private static func checkDates(_ s: Session) throws(StepKitError) {
        let visits = s.path
        var previousEnd = s.startDate
        var previousName = "the run's start"
        for (i, visit) in visits.enumerated() {
            let path = JSONPath.root.key("path").index(i)
            guard visit.startDate >= previousEnd else {
                throw notAllowed("a visit starts (\(visit.startDate)) before \(previousName) (\(previousEnd)).", path.key("startDate"))
            }
            previousEnd = visit.startDate
            previousName = "the start of the visit before it"
            if let end = visit.endDate {
                guard end >= visit.startDate else {
                    throw notAllowed("a visit ends (\(end)) before it starts (\(visit.startDate)).", path.key("endDate"))
                }
                previousEnd = end
                previousName = "the end of the visit before it"
            } else {
                guard i == visits.count - 1 else {
                    throw notAllowed("a visit before the last one was never left.", path.key("endDate"))
                }
            }
        }
        guard let reason = s.finishReason else {
            guard s.endDate == nil else { throw notAllowed("a run in progress has an end date.", .root.key("endDate")) }
            if let last = visits.last, last.endDate != nil || last.answer != nil || last.skipped {
                throw notAllowed("the current visit of a run in progress is saved as left.", .root.key("path").index(visits.count - 1))
            }
            return
        }
        guard let end = s.endDate else { throw notAllowed("a finished run has no end date.", .root.key("endDate")) }
        guard end >= previousEnd else {
            throw notAllowed("the run ends (\(end)) before \(visits.isEmpty ? "it starts" : "its last visit") (\(previousEnd)).", .root.key("endDate"))
        }
        if reason == .completed, let last = visits.last, last.endDate == nil {
            throw notAllowed("a run completed on a visit that was never left.", .root.key("path").index(visits.count - 1).key("endDate"))
        }
    }
}
