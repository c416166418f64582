import StepKitBase

/// Reading restoration data back exactly: every field checked against the task before anything
/// is built, then the run replayed (`Restoration+Replay.swift`).
extension Restoration {
    /// The saved run, exactly: every field is checked against the task before anything is built.
    static func exact(_ d: JSONObject, task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        guard let uuid = d["taskRunUUID"]?.stringValue.flatMap(UUIDText.normalized),
              case .int(let startDate)? = d["startDate"],
              let touched = d["touched"]?.boolValue,
              let pathItems = d["path"]?.arrayValue,
              let savedAnswers = d["answers"]?.objectValue, d["laterAnswers"]?.objectValue != nil else {
            throw refuse("damaged", "The restoration data is missing the run's identity, dates, path or answers.")
        }
        let endDate = try optionalInt(d["endDate"], .root.key("endDate"))
        var finishReason: FinishReason?
        if let reason = d["finishReason"], !reason.isNull {
            guard let r = reason.stringValue.flatMap(FinishReason.init(rawValue:)) else {
                throw refuse("damaged", "Unknown finish reason.", .root.key("finishReason"))
            }
            finishReason = r
        }
        // A step's answer is usually saved twice (as the step's answer and as its latest
        // visit's), and validating is a pure function of the answer and the step (its formats
        // and the patterns that read it): each distinct text is validated once per step
        // (`validatedOnce` below), the second copy compared instead.
        var checked: IndexTable<(saved: JSON, value: JSON)> = [:]
        func validatedOnce(_ answer: JSON, step index: Int, _ step: Step, at path: JSONPath) throws(StepKitError) -> JSON {
            if let done = checked[index], done.saved == answer { return done.value }
            let value = try validated(answer, to: step, at: index, of: task, path: path)
            checked[index] = (answer, value)
            return value
        }
        var answers: IndexTable<JSON> = [:]
        for (id, answer) in savedAnswers.entries {
            let path = JSONPath.root.key("answers").key(id)
            guard let index = task.stepIndex[id], let step = task.step(at: index) else {
                throw refuse("damaged", "The saved answers name a step \"\(id)\" the task does not have.", path)
            }
            answers[index] = try validatedOnce(answer, step: index, step, at: path)
        }
        var laterAnswers: IndexTable<[JSON]> = [:]
        for (id, list) in (d["laterAnswers"]?.objectValue ?? JSONObject()).entries {
            let path = JSONPath.root.key("laterAnswers").key(id)
            guard let index = task.stepIndex[id], let step = task.step(at: index), let items = list.arrayValue else {
                throw refuse("damaged", "The saved later answers name a step \"\(id)\" the task does not have.", path)
            }
            var kept: [JSON] = []
            for (i, answer) in items.enumerated() { kept.append(try validatedOnce(answer, step: index, step, at: path.index(i))) }
            laterAnswers[index] = kept
        }
        var visits: [Visit] = []
        for (i, item) in pathItems.enumerated() {
            let path = JSONPath.root.key("path").index(i)
            guard let v = item.objectValue, v.keys.allSatisfy(Restoration.visitKeys.contains),
                  let id = v["step"]?.stringValue, let index = task.stepIndex[id], let step = task.step(at: index),
                  case .int(let start)? = v["startDate"], let skipped = v["skipped"]?.boolValue,
                  let modified = v["modified"]?.boolValue, let hidden = v["hiddenItems"]?.arrayValue?.compactMap(\.stringValue) else {
                throw refuse("damaged", "A visit of the saved path is not valid for this task.", path)
            }
            var visit = Visit(stepIndex: index, startDate: start)
            visit.endDate = try optionalInt(v["endDate"], path.key("endDate"))
            visit.skipped = skipped
            visit.modified = modified
            visit.hiddenItems = hidden
            visit.arrival = .saved(v["arrival"] ?? .null)
            visit.instance = try decodeVisitInstance(v["instance"], step: index, task: task, at: path.key("instance"))
            if let active = v["active"] {
                guard step.active != nil else { throw refuse("damaged", "A saved active step is not an active step of this task.", path.key("active")) }
                visit.active = try decodeActive(active, at: path.key("active"))
            }
            if let answer = v["answer"] { visit.answer = try validatedOnce(answer, step: index, step, at: path.key("answer")) }
            if let spent = v["timeSpent"] {
                guard case .int(let ms) = spent, ms >= 0 else { throw refuse("damaged", "A visit's \"timeSpent\" is a whole number of milliseconds, not negative.", path.key("timeSpent")) }
                visit.spent = ms
            } else if let end = visit.endDate {
                // Saved before time was counted: the time between its dates.
                visit.spent = max(end.subtractingSaturated(visit.startDate), 0)
            }
            visits.append(visit)
        }
        var asyncRuns: IndexTable<RecorderRun> = [:]
        for (id, value) in (d["asyncActions"]?.objectValue ?? JSONObject()).entries {
            guard let index = task.asyncActions.firstIndex(where: { $0.recorder.identifier == id }) else {
                throw refuse("damaged", "The saved async action \"\(id)\" is not in the task.", .root.key("asyncActions").key(id))
            }
            let run = try decodeRecorder(value, at: .root.key("asyncActions").key(id))
            guard run.identifier == id, run.type == task.asyncActions[index].recorder.type else {
                throw refuse("damaged", "The saved async action \"\(id)\" does not match the task's.", .root.key("asyncActions").key(id))
            }
            asyncRuns[index] = run
        }
        guard let taskSuspended = d["taskSuspended"]?.boolValue else {
            throw refuse("damaged", "The restoration data does not say whether the task is suspended.", .root.key("taskSuspended"))
        }
        var taskTime: Int64 = 0
        if let timing = d["timing"], !timing.isNull {
            guard let t = timing.objectValue, t.count == 2, case .int(let taskMs)? = t["task"], case .int(let stepMs)? = t["step"],
                  taskMs >= 0, stepMs >= 0 else {
                throw refuse("damaged", "\"timing\" is {\"task\", \"step\"}: whole numbers of milliseconds, not negative.", .root.key("timing"))
            }
            taskTime = taskMs
            // The current visit counts on from the time it had at the save.
            if finishReason == nil, !visits.isEmpty { visits[visits.count - 1].spent = stepMs }
        } else if let last = visits.last {
            // No time kept (a task without time limits): the time between the run's dates; a
            // run in progress counts on from its current visit's start (the `Session` init).
            taskTime = max((endDate ?? last.endDate ?? last.startDate).subtractingSaturated(startDate), 0)
        } else if let endDate {
            taskTime = max(endDate.subtractingSaturated(startDate), 0)
        }
        if task.rules.timeLimits.isEmpty, d["timing"].map({ !$0.isNull }) == true {
            throw refuse("damaged", "\"timing\" is kept only for a task with time limits.", .root.key("timing"))
        }
        try checkOrder(d["randomization"], task: task, seed: options.seed)
        try restoreGames(&visits, saved: pathItems, task: task, seed: options.seed)
        if visits.isEmpty && finishReason == nil {
            throw refuse("damaged", "The saved path is empty but the run has not finished.", .root.key("path"))
        }
        var session = Session(task: task, options: options, clock: clock, taskRunUUID: uuid, startDate: startDate, endDate: endDate,
                              finishReason: finishReason, visits: visits, answers: AnswerStore(latest: answers, later: laterAnswers),
                              touched: touched, actions: AsyncActions(runs: asyncRuns, taskSuspended: taskSuspended),
                              audit: try decodeAudit(d), taskTimeSpent: taskTime)
        session.instancesCursor = try decodeInstances(d["instances"], in: session)
        session.stepInstances = try decodeStepInstances(d["stepInstances"], task: task)
        try checkInstances(session)
        // Well-formed is not enough: the run must be one the task allows (keyed or not).
        try checkAllowed(session, savedAnswers: answers)
        // The restore is in the trail once something happens after it (`AuditTrail.pendingRestore`).
        var restored = session
        // An edit from a review step still going on (absent from data saved before there were any).
        restored.reviewReturn = try ReviewReturn.decode(d["reviewReturn"], task: task)
        if restored.reviewReturn != nil, restored.isFinished {
            throw refuse("damaged", "A finished run has no edit from a review step going on.", .root.key("reviewReturn"))
        }
        if options.audit.recordRestore { restored.audit.pendingRestore = restored.now }
        restored._checkInvariants()
        return restored
    }

    /// A saved date (milliseconds since 1970) or null; anything else is damage. Every date of
    /// restoration data is read by this one decoder (visits, active steps, recorder files).
    static func optionalInt(_ value: JSON?, _ path: JSONPath) throws(StepKitError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .int(let i)?: return i
        default: throw refuse("damaged", "A date must be milliseconds since 1970 as a whole number.", path)
        }
    }

    /// A saved answer, checked again by the parts of `set_answer`'s decision that depend only on
    /// the task and the answer (`Task.accept` with `AcceptanceParts.restore`: its format and the
    /// match bounds of the conditions that read it). A form's confirmations are checked where the
    /// run left the step, by the replay in `Restoration+Replay.swift`; expression bounds are not
    /// checked again (`Rules/Acceptance.swift` says why).
    static func validated(_ answer: JSON, to step: Step, at index: Int, of task: Task, path: JSONPath) throws(StepKitError) -> JSON {
        let accepted = task.accept(answer, to: step, at: index, previous: nil, parts: .restore) { _ in NoAnswers() }
        if let problem = accepted.problems.first {
            throw refuse("damaged", "A saved answer does not fit the task: " + problem.message, path)
        }
        return accepted.value ?? .null
    }
}
