import StepKitBase

/// Active steps without threads (ResearchKit's `ORKActiveStepViewController`): the host starts,
/// suspends, resumes and finishes them, or they start and finish by themselves; the engine only
/// works out, whenever it is asked (`tick`), what came due, and says when the next thing will.
extension Session {
    package enum ActiveOperation: String, CaseIterable {
        case start, suspend, resume, finish, suspendTask, resumeTask
    }

    private var activeSettings: ActiveStepSettings? { isFinished ? nil : currentStep?.active }

    private mutating func updateRun(_ change: (inout ActiveRun) -> Void) {
        updateCurrent { visit in
            guard var run = visit.active else { return }
            change(&run)
            visit.active = run
        }
    }

    // MARK: Lifecycle

    /// A new active step is prepared; a zero-length one with nothing to record starts finished; one
    /// that starts automatically starts now (unless the task is suspended).
    mutating func prepareActiveStep(at time: Int64) {
        // Asked of the step where the task keeps it first: most steps are not active, and
        // `activeSettings` copies the settings out of the step on every arrival.
        guard currentStep?.isActive == true, let settings = activeSettings else { return }
        var run = ActiveRun()
        if settings.kind == .active && settings.duration == 0 && settings.recorders.isEmpty && settings.game == nil {
            run.status = .finished
            run.finishDate = time
        }
        updateCurrent { $0.active = run }
        if run.status == .prepared && (settings.startsAutomatically || settings.kind == .wait) && !actions.taskSuspended {
            startActive(at: time)
        }
    }

    package mutating func activeOperation(_ operation: ActiveOperation) throws(StepKitError) {
        try requireInProgress()
        let time = now
        let acted = currentIndex
        switch operation {
        case .suspendTask:
            guard !actions.taskSuspended else { throw stateError("taskSuspended", "The task is already suspended.") }
            actions.taskSuspended = true
            if current?.active?.status == .running { suspendActive(at: time) }
            emit("taskSuspended", at: time)
        case .resumeTask:
            guard actions.taskSuspended else { throw stateError("taskNotSuspended", "The task is not suspended.") }
            actions.taskSuspended = false
            emit("taskResumed", at: time)
            if let run = current?.active, let settings = activeSettings {
                if run.status == .suspended {
                    resumeActive(at: time)
                } else if run.status == .prepared && (settings.startsAutomatically || settings.kind == .wait) {
                    startActive(at: time)
                }
            }
        case .start, .suspend, .resume, .finish:
            guard let settings = activeSettings, let run = current?.active else {
                throw stateError("notActive", "The current step is not an active step.")
            }
            switch (operation, run.status) {
            case (.start, .prepared):
                guard !actions.taskSuspended else { throw stateError("taskSuspended", "The task is suspended; resume it first.") }
                startActive(at: time)
            case (.suspend, .running):
                suspendActive(at: time)
            case (.resume, .suspended):
                guard !actions.taskSuspended else { throw stateError("taskSuspended", "The task is suspended; resume it first.") }
                resumeActive(at: time)
            case (.finish, .prepared), (.finish, .running), (.finish, .suspended):
                guard !actions.taskSuspended else { throw stateError("taskSuspended", "The task is suspended; resume it first.") }
                finishActive(at: time, settings: settings)
            default:
                throw stateError("activeState", "Cannot \(operation.rawValue) an active step that is \(run.status.rawValue).")
            }
        }
        clock.touched = true
        if audit.isOn {
            let kind: AuditTrail.Kind
            switch operation {
            case .suspend, .suspendTask: kind = .suspended
            case .resume, .resumeTask: kind = .resumed
            case .start, .finish: kind = .control
            }
            audit.record(kind, at: time, step: acted, detail: operation.rawValue)
        }
        _checkInvariants()
    }

    private mutating func startActive(at time: Int64) {
        guard let settings = activeSettings, let step = currentStep else { return }
        updateRun { run in
            run.status = .running
            run.runningSince = time
            run.startDate = time
        }
        startGame(settings, step: step)
        emit("activeStepStarted", ["step": .string(step.identifier)], at: time)
        if let text = settings.spokenInstruction {
            emit("speak", ["step": .string(step.identifier), "kind": .string("spokenInstruction"), "text": .string(text)], at: time)
        }
        if settings.soundOnStart { emit("playSound", ["step": .string(step.identifier), "kind": .string("start")], at: time) }
        if settings.vibrateOnStart { emit("vibrate", ["step": .string(step.identifier), "kind": .string("start")], at: time) }
        for recorder in settings.recorders {
            let started = startRecorder(recorder, at: time)
            updateRun { $0.recorders.append(started) }
            announceStart(recorder, started, at: time)
            if started.status == .failed { recorderFailed(started, lost: 0, at: time) }
        }
    }

    private mutating func suspendActive(at time: Int64) {
        updateRun { run in
            run.elapsedBefore = run.elapsed(at: time)
            run.runningSince = nil
            run.status = .suspended
        }
        let step = currentStep?.identifier ?? ""
        emit("activeStepSuspended", ["step": .string(step)], at: time)
    }

    private mutating func resumeActive(at time: Int64) {
        updateRun { run in
            run.status = .running
            run.runningSince = time
        }
        let step = currentStep?.identifier ?? ""
        emit("activeStepResumed", ["step": .string(step)], at: time)
    }

    /// Finishes the active step (its time is up, or the host says so): the recorders stop, the
    /// finish prompts play, and the task moves on if the step continues on finish.
    mutating func finishActive(at time: Int64, settings: ActiveStepSettings) {
        guard let step = currentStep else { return }
        updateRun { run in
            run.elapsedBefore = run.elapsed(at: time)
            run.runningSince = nil
            run.status = .finished
            run.finishDate = time
        }
        stopActiveRecorders(at: time)
        if let text = settings.finishedSpokenInstruction {
            emit("speak", ["step": .string(step.identifier), "kind": .string("finishedSpokenInstruction"), "text": .string(text)], at: time)
        }
        if settings.soundOnFinish { emit("playSound", ["step": .string(step.identifier), "kind": .string("finish")], at: time) }
        if settings.vibrateOnFinish { emit("vibrate", ["step": .string(step.identifier), "kind": .string("finish")], at: time) }
        emit("activeStepFinished", ["step": .string(step.identifier)], at: time)
        if settings.continuesOnFinish && !isFinished {
            leaveCurrent(skipped: false)
        }
    }

    /// Why an active step keeps the participant from going forward ([] when it does not).
    func activeProblems() -> [Problem] {
        guard let settings = activeSettings, settings.kind != .wait, let run = current?.active, run.status != .finished else { return [] }
        return [Problem(code: "activeStepNotFinished", text: Message("active.notFinished"), path: .root)]
    }

    // MARK: Time

    /// Processes everything due at the clock's time: prompts, the end of the step, moving on and
    /// the next step's start, each dated when it came due.
    ///
    /// A tick that finds nothing due changes nothing: it does not count as something having
    /// happened, so a clock set afterwards still restarts an untouched run (`setClock`).
    package mutating func tick() {
        var budget = task.steps.count * 8 + 64
        // The session's time: the clock's, never before the run's latest date.
        let clockNow = now
        var fired = false
        while budget > 0, let settings = activeSettings, let run = current?.active, run.status == .running {
            budget -= 1
            let marks = settings.marks
            guard run.marksFired < marks.count else { break }
            let mark = marks[run.marksFired]
            let elapsed = run.elapsed(at: clockNow)
            guard mark.at <= elapsed else { break }
            fired = true
            let due = Session.dueTime(of: mark.at, elapsed: elapsed, now: clockNow, runningSince: run.runningSince)
            clock.override = due
            updateRun { $0.marksFired += 1 }
            let step = currentStep?.identifier ?? ""
            switch mark.kind {
            case .halfway:
                emit("speak", ["step": .string(step), "kind": .string("halfway"),
                               "text": .string(Session.remainingText(settings.duration.subtractingSaturated(mark.at)))], at: due)
            case .countDown(let seconds):
                emit("speak", ["step": .string(step), "kind": .string("countDown"), "text": .string(String(seconds))], at: due)
            case .end:
                finishActive(at: due, settings: settings)
            }
            clock.override = nil
        }
        clock.override = nil
        if advanceGame(at: clockNow) { fired = true }
        if processTimeLimits(at: clockNow, budget: &budget) { fired = true }
        if fired { clock.touched = true }
        _checkInvariants()
    }

    /// When a mark at `at` of the step's own time came due on the clock: `elapsed - at` before
    /// `now`, but never after `now` nor before the run last resumed on this clock (a mark that was
    /// already due then, e.g. after a restore or a clock jump, is dated at the resume). Total for
    /// any clock values: the arithmetic saturates.
    static func dueTime(of at: Int64, elapsed: Int64, now: Int64, runningSince: Int64?) -> Int64 {
        let due = now.subtractingSaturated(elapsed.subtractingSaturated(at))
        return due.clamped(min(runningSince ?? now, now), now)
    }

    /// When something next comes due (milliseconds since the epoch), or nil. Saturates at the
    /// ends of the clock's range.
    var nextDeadline: Int64? {
        guard let limit = timeLimitDeadline else { return activeDeadline }
        return min(activeDeadline ?? limit, limit)
    }

    /// When the running active step's next prompt or end comes due.
    private var activeDeadline: Int64? {
        guard let settings = activeSettings, let run = current?.active, run.status == .running,
              let since = run.runningSince else { return nil }
        let marks = settings.marks
        let game = run.game?.board.nextDue.map { since.addingSaturated($0.subtractingSaturated(run.elapsedBefore)) }
        guard marks.indices.contains(run.marksFired) else { return game }
        let mark = since.addingSaturated(marks[run.marksFired].at.subtractingSaturated(run.elapsedBefore))
        return min(mark, game ?? mark)
    }

    /// "3 minutes remaining", "20 seconds remaining".
    static func remainingText(_ ms: Int64) -> String {
        let seconds = ms.addingSaturated(500) / 1000
        if seconds >= 60 && seconds % 60 == 0 {
            let minutes = seconds / 60
            return "\(minutes) minute\(minutes == 1 ? "" : "s") remaining"
        }
        return "\(seconds) second\(seconds == 1 ? "" : "s") remaining"
    }

    /// The state's `active` member.
    func activeJSON() -> JSON {
        guard let settings = activeSettings, let run = current?.active else { return .null }
        let time = now
        let elapsed = run.elapsed(at: time)
        var fields = JSONObject([
            "kind": .string(settings.kind.rawValue),
            "status": .string(run.status.rawValue),
            "duration": .number(Double(settings.duration) / 1000),
            "elapsed": .number(Double(elapsed) / 1000),
            "remaining": settings.duration > 0 ? .number(Double(max(settings.duration.subtractingSaturated(elapsed), 0)) / 1000) : .null,
            "recorders": .array(run.recorders.map { r in
                .object(["identifier": .string(r.identifier), "type": .string(r.type), "status": .string(r.status.rawValue),
                         "samples": .int(Int64(r.samples))])
            }),
        ])
        // A game step's game: what the host draws or plays now (`Games/`).
        if let game = run.game { fields["game"] = .object(game.board.stateJSON) }
        return .object(fields)
    }
}
