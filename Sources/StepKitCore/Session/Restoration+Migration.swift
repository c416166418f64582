import StepKitBase

/// Restoring data saved on another version of the task (option "migrate").
extension Restoration {
    /// Why a migrated answer is dropped that a `matches` condition of the new version cannot
    /// check within its bound (set_answer would refuse it: `patternTooComplex`).
    static let pastMatchBound = "The answer is too long or too repetitive for a condition that reads it to check."

    /// Carries a session saved on another version of the task over: answers whose step (and
    /// item) still exist with the same answer type and still fit are kept, the others listed; the
    /// run resumes at the first step that still needs an answer. "Still fit" is what restore
    /// replays of `set_answer`'s decision (`AcceptanceParts.restore`: the answer format and the
    /// match bounds of the conditions that read it), item by item for a form.
    static func migrate(_ d: JSONObject, to task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        guard let uuid = d["taskRunUUID"]?.stringValue.flatMap(UUIDText.normalized), case .int(let startDate)? = d["startDate"],
              let savedAnswers = d["answers"]?.objectValue else {
            throw refuse("damaged", "The restoration data is missing the run's identity, dates or answers.")
        }
        var kept: [JSON] = [], dropped: [JSON] = []
        var answers: IndexTable<JSON> = [:]
        func drop(_ step: String, _ item: String?, _ reason: String) {
            dropped.append(.object(["step": .string(step), "item": .string(item), "reason": .string(reason)]))
        }
        for (id, answer) in savedAnswers.entries {
            guard let index = task.stepIndex[id], let step = task.step(at: index) else {
                drop(id, nil, "The step no longer exists.")
                continue
            }
            switch step.content {
            case .message:
                drop(id, nil, "The step no longer takes an answer.")
            case .question(let format):
                if let repeating = format.rules as? RepeatingFormat {
                    // Instance by instance (`RepeatingFormat.migrated`).
                    let m = repeating.migrated(answer)
                    for part in m.dropped { drop(id, part.place.isEmpty ? nil : part.place, part.reason) }
                    if let value = m.value { answers[index] = value; kept.append(.object(["step": .string(id), "item": .null])) }
                    continue
                }
                let checked = step.validate(answer, previous: nil, confirming: .never)
                if checked.problems.isEmpty, let value = checked.value {
                    guard task.rules.conditionPatterns.problems(step: index, value: value).isEmpty else {
                        drop(id, nil, Restoration.pastMatchBound)
                        continue
                    }
                    answers[index] = value
                    kept.append(.object(["step": .string(id), "item": .null]))
                } else {
                    drop(id, nil, "The answer no longer fits the question's answer format.")
                }
            case .form(let form):
                guard case .object(var items) = answer else {
                    drop(id, nil, "The step is now a form.")
                    continue
                }
                // A repeating block's instances are carried over instance by instance, item by
                // item (`RepeatingFormat.migrated`); what is left then passes as any item.
                for (key, value) in items.entries {
                    guard let repeating = form.item(key)?.format.rules as? RepeatingFormat else { continue }
                    let m = repeating.migrated(value)
                    for part in m.dropped { drop(id, key + part.place, part.reason) }
                    items[key] = m.value
                }
                let answer = JSON.object(items)
                // Checked as restore and set_answer check a form's answer; each item that fails is
                // dropped alone, and the others kept.
                let valid = step.validate(answer, previous: nil, confirming: .never).value?.objectValue ?? JSONObject()
                let pastBound = Set(task.rules.conditionPatterns.problems(step: index, value: .object(valid)).compactMap(\.item))
                var object = JSONObject()
                for (key, _) in items.entries {
                    guard form.item(key) != nil else { drop(id, key, "The form item no longer exists."); continue }
                    guard let v = valid[key] else { drop(id, key, "The answer no longer fits the item's answer format."); continue }
                    guard !pastBound.contains(key) else { drop(id, key, Restoration.pastMatchBound); continue }
                    object[key] = v
                    kept.append(.object(["step": .string(id), "item": .string(key)]))
                }
                if object.count > 0 { answers[index] = .object(object) }
            }
        }
        // Every option the host gave (output directory, recorder settings, limits, autosave,
        // key, prefill) applies to the migrated run as to any other; only the run's identity
        // comes from the saved data.
        var carriedOptions = options
        carriedOptions.taskRunUUID = uuid
        var session = Session(task: task, options: carriedOptions, clock: clock)
        // The saved trail goes on; the walk below is the migration's, not the host's.
        let trailOn = session.audit.isOn
        var trail = try decodeAudit(d)
        trail.configure(options.audit)
        trail.isOn = false
        session.audit = trail
        // The run keeps its start, unless the saved start is later than the migrated run's
        // first visit (a forged or skewed date): a run never starts after it is shown.
        session.clock.startDate = min(startDate, session.startDate)
        for (index, answer) in answers { session.answers[index] = answer }
        // Repeating sections: every instance's answers, the run in the first (`Restoration+StepBlocks`).
        migrateStepInstances(d, into: &session, drop: drop)
        // Walk forward over what is already answered (and optional steps the participant had
        // already passed, or any step passed when required answers wait for completion), to the
        // first step that still needs an answer.
        let visited = Set((d["path"]?.arrayValue ?? []).compactMap { $0.objectValue?["step"]?.stringValue })
        let mayPass = task.rules.requiredAnswers == .atCompletion
        var budget = task.steps.count
        while budget > 0, let step = session.currentStep,
              !step.takesAnswers || session.answers[session.currentIndex ?? -1] != nil
                || ((step.optional || mayPass) && visited.contains(step.identifier)),
              session.forwardProblems().isEmpty, session.routeForward()?.step != nil {
            budget -= 1
            do throws(StepKitError) { try session.goForward() } catch { break }
        }
        keepVisitDates(of: d["path"]?.arrayValue ?? [], in: &session)
        session.clock.touched = true
        session.audit.isOn = trailOn
        session.audit.record(.migrated, at: session.now, detail: d["task"]?.objectValue?["fingerprint"]?.stringValue)
        session.reportRestore(.object([
            "migrated": .bool(true),
            "fromFingerprint": d["task"]?.objectValue?["fingerprint"] ?? .null,
            "kept": .array(kept),
            "dropped": .array(dropped),
        ]))
        session._checkInvariants()
        return session
    }

    /// A migrated run's visits keep the dates they were saved with: response times per step are
    /// what studies analyse, and the walk above dates every visit it makes at the migration's
    /// time. The n-th visit of a step takes the n-th saved visit of that step, while the dates
    /// still follow each other and precede the walk's (restore's replay checks that the dates
    /// follow each other); from the first visit that has no saved one, or whose saved dates
    /// would go backwards or lie after the migration, the walk's dates stand.
    private static func keepVisitDates(of savedPath: [JSON], in session: inout Session) {
        var saved: [String: [(start: Int64, end: Int64?)]] = [:]
        for visit in savedPath {
            guard let v = visit.objectValue, let step = v["step"]?.stringValue, case .int(let start)? = v["startDate"] else { continue }
            var end: Int64? = nil
            if case .int(let e)? = v["endDate"] { end = e }
            saved[step, default: []].append((start, end))
        }
        var previousEnd = session.startDate
        for i in session.path.indices {
            let visit = session.path[i]
            guard let step = session.task.step(at: visit.stepIndex)?.identifier,
                  let dates = saved[step]?.first,
                  dates.start >= previousEnd, (dates.end ?? dates.start) >= dates.start,
                  // Saved dates are earlier than the migration's walk (forged or skewed ones
                  // are not): the visits after this one keep the walk's dates.
                  (dates.end ?? dates.start) <= visit.startDate,
                  // The participant is shown again a step they had left: that is a new visit.
                  visit.endDate != nil || dates.end == nil else { break }
            saved[step]?.removeFirst()
            // A visit that was current when saved is left by the migration's walk, then.
            let end = visit.endDate == nil ? nil : (dates.end ?? visit.endDate)
            session.redateVisit(at: i, start: dates.start, end: end)
            previousEnd = end ?? dates.start
        }
    }
}
