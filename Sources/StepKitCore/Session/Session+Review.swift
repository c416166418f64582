import StepKitBase

/// Review steps (ResearchKit's `ORKReviewStep`): the answers of the path before the review, an
/// edit that jumps to one step and comes back, and the read-only review of a saved or finished run.
///
/// Unlike ResearchKit's (issue #819), the list is always the path the answers lead to now: an
/// edit that re-routes the task drops the answers the new path leaves out, with an event each.
extension Session {
    /// The state's `review` while a review step is current: each step before it on the path that
    /// takes answers, as `ReviewEntry` describes it.
    func reviewJSON() -> JSON {
        guard let current = path.indices.last else { return .array([]) }
        return .object(["steps": .array(reviewEntries(before: current))])
    }

    /// The entries of the steps that take answers among the visits before `end`: each step once,
    /// at its latest visit, with the answer that visit left with (the live answer for an open one).
    func reviewEntries(before end: Int) -> [JSON] {
        var entries: [JSON] = []
        for position in path.indices where position < end {
            let visit = path[position]
            guard path.latestPosition(of: visit.stepIndex) == position || visit.endDate == nil,
                  let step = task.step(at: visit.stepIndex), step.takesAnswers else { continue }
            let open = visit.endDate == nil
            let answer = open ? answers[visit.stepIndex].map { visibleAnswer($0, step: visit.stepIndex) } : visit.answer
            entries.append(ReviewEntry.json(step: step, answer: visit.skipped ? nil : answer, skipped: visit.skipped,
                                            hidden: open ? hiddenItems(step: visit.stepIndex) : visit.hiddenItems))
        }
        return entries
    }

    /// The read-only review of this run (saved or finished): every step of the path that takes
    /// answers, as the review step lists them (`stepkit_task_review`).
    package func standaloneReviewJSON() -> JSON {
        .object([
            "taskIdentifier": .string(task.identifier),
            "taskRunUUID": .string(taskRunUUID),
            "status": .string(isFinished ? "finished" : "inProgress"),
            "finishReason": .string(finishReason?.rawValue),
            "steps": .array(reviewEntries(before: path.count)),
        ])
    }

    /// "Edit" on a review step: back to step `identifier` (one the review lists), which, once
    /// left, leads back to the review (`continueTowardReview`). For a step of a repeating section,
    /// `instance` names the instance whose latest visit of it is edited (nil: the step's latest
    /// visit, the one the review lists); the instances after it are passed over on the way back
    /// as the steps after an edited step are. Refused, changing nothing, unless the current step
    /// is a review step listing it (and, with `instance`, the path holds the step in that instance).
    package mutating func editFromReview(_ identifier: String, instance: Int? = nil) throws(StepKitError) {
        try requireInProgress()
        guard let reviewPosition = path.indices.last, let review = currentStep, review.isReview else {
            throw stateError("notReview", "Only a review step edits an answer; the current step is not one.")
        }
        guard let target = task.stepIndex[identifier], let latest = path.latestPosition(of: target), latest < reviewPosition,
              task.step(at: target)?.takesAnswers == true else {
            throw stateError("notReviewed", "The review does not list a step \"\(identifier)\"; edit one of the steps it lists.")
        }
        let block = task.rules.blockOfStep[target]
        var position = latest
        if let instance {
            // The latest visit of the step in that instance.
            guard block != nil, let found = path.indices.last(where: { $0 < reviewPosition && path[$0].stepIndex == target && path[$0].instance == instance }) else {
                throw stateError("notReviewed", "The review does not list instance \(instance) of \"\(identifier)\"; edit one of the entries it lists.")
            }
            position = found
        }
        let reviewIndex = path[reviewPosition].stepIndex
        let time = now
        let previous = events.isRecording ? review.identifier : nil
        stopActiveRecorders(at: time)
        foldTime(at: time)
        var offPath: [Int] = []
        while path.count > position + 1 {
            let leaving = path[path.count - 1].stepIndex
            // A section's steps are left in later instances too: its target among them.
            if leaving != reviewIndex && (leaving != target || block != nil) && !offPath.contains(leaving) { offPath.append(leaving) }
            popVisit()
            // A section's instances keep their own answers (`StepInstances`): nothing set aside.
            if task.rules.blockOfStep[leaving] == nil, let earlier = path.latestPosition(of: leaving).flatMap({ path[ifPresent: $0] }) {
                answers.setAside(step: leaving, restoring: earlier.skipped ? nil : earlier.answer)
            }
        }
        updateCurrent { visit in
            visit.endDate = nil
            visit.answer = nil
            visit.skipped = false
        }
        if let n = block { switchInstance(n, to: path[position].instance) }
        // Earlier returns (an edit begun during an edit) are merged: everything either took off.
        offPath.reverse()
        if let before = reviewReturn { offPath = before.offPath.filter { !offPath.contains($0) && $0 != target } + offPath }
        reviewReturn = ReviewReturn(review: reviewIndex, edited: target, offPath: offPath)
        clock.touched = true
        stepAppeared(previous: previous, at: time)
        if audit.isOn { audit.record(.backward, at: time, step: reviewIndex, to: target, detail: "reviewEdit") }
        _checkInvariants()
    }

    /// Leaving a step during an edit from a review (its visit already closed): forward over the
    /// steps the path held before the edit, each left as it was answered, until the review
    /// (dropping the answers the new path leaves out) or a step that needs the participant — one
    /// the path did not hold, an active step, or one whose answers no longer let it be left.
    mutating func continueTowardReview(_ first: Navigator.Route?, time: Int64) {
        guard let plan = reviewReturn else { return }
        var route = first
        // Each pass adds a visit of a step the edit took off the path: at most that many (a
        // repeating section's step once per instance).
        let passes = plan.offPath.reduce(0) { total, step in total + (task.rules.blockOfStep[step].map { max(stepInstanceCount($0), 1) } ?? 1) }
        for _ in 0...passes {
            guard let r = route, let next = r.step else {
                reviewReturn = nil
                endRun(.completed, at: time)
                return
            }
            if next == plan.review {
                reviewReturn = nil
                arrive(at: next, time: time, route: r)
                dropAnswersOffPath(plan.offPath, at: time)
                return
            }
            arrive(at: next, time: time, route: r)
            guard plan.offPath.contains(next), let step = task.step(at: next), step.active == nil, forwardProblems().isEmpty else { return }
            let skipped = step.takesAnswers && step.optional && answers[next] == nil
            closeCurrent(at: time, skipped: skipped)
            route = routeForward()
        }
    }

    /// The answers of the steps an edit took off the path that the path no longer holds:
    /// dropped, each with an `answerDropped` event (and an `answerCleared` audit event).
    private mutating func dropAnswersOffPath(_ steps: [Int], at time: Int64) {
        for index in steps where path.latestPosition(of: index) == nil {
            guard let old = answers[index], let step = task.step(at: index) else { continue }
            answers[index] = nil
            emit("answerDropped", ["step": .string(step.identifier), "reason": .string("offPath")], at: time)
            if audit.isOn { audit.record(.answerCleared, at: time, step: index, old: old, detail: "offPath") }
        }
    }
}

/// One reviewed step: `{"step", "type", "displayTitle", "skipped", "answers": [...]}`, each answer
/// `{"identifier", "label", "answer", "displayText"}` (a question's one, a form's or a page's
/// visible items; a page's named `page.substep` as its results are).
enum ReviewEntry {
    static func json(step: Step, answer: JSON?, skipped: Bool, hidden: [String]) -> JSON {
        var items: [JSON] = []
        switch step.content {
        case .message:
            break
        case .question(let format):
            let label = Step.displayTitle(step.presentation, identifier: step.identifier)
            items.append(item(step.identifier, label: label, format, answer))
        case .form(let form):
            let given = answer?.objectValue
            let prefix = step.isPage ? step.identifier + "." : ""
            for entry in form.items where !hidden.contains(entry.identifier) {
                items.append(item(prefix + entry.identifier, label: entry.label, entry.format, given?[entry.identifier]))
            }
        }
        return .object([
            "step": .string(step.identifier),
            "type": .string(step.type),
            "displayTitle": .string(Step.displayTitle(step.presentation, identifier: step.identifier)),
            "skipped": .bool(skipped),
            "answers": .array(items),
        ])
    }

    private static func item(_ identifier: String, label: String, _ format: AnswerFormat, _ answer: JSON?) -> JSON {
        let value = answer.flatMap { $0.isNull ? nil : $0 }
        return .object([
            "identifier": .string(identifier),
            "label": .string(label),
            "answer": value ?? .null,
            "displayText": value.map { .string(displayText($0, format)) } ?? .null,
        ])
    }

    /// An answer as a participant reads it: a choice by its text, a boolean by its labels, a
    /// list joined by ", ", a number or a text as written; "don't know" by its label.
    static func displayText(_ answer: JSON, _ format: AnswerFormat) -> String {
        let shown = format.presentation
        if let o = answer.objectValue, o["dontKnow"]?.boolValue == true {
            return shown["customDontKnowButtonText"]?.stringValue ?? AnswerFormat.dontKnowLabel
        }
        if let choices = format.rules.choiceOptions {
            let values: [JSON] = answer.arrayValue ?? [answer]
            return values.map { v -> String in
                let value = v.objectValue?["value"] ?? v
                guard let i = choices.index(of: value), !choices[i].text.isEmpty else { return plain(value) }
                return choices[i].text
            }.joined(separator: ", ")
        }
        if case .bool(let yes) = answer {
            return shown[yes ? "yesString" : "noString"]?.stringValue ?? (yes ? "Yes" : "No")
        }
        if let list = answer.arrayValue { return list.map(plain).joined(separator: ", ") }
        let text = plain(answer)
        if let unit = format.rules.unit, !unit.isEmpty, isNumber(answer) { return text + " " + unit }
        return text
    }

    private static func isNumber(_ value: JSON) -> Bool {
        switch value {
        case .int, .double: return true
        default: return false
        }
    }

    private static func plain(_ value: JSON) -> String {
        if case .string(let s) = value { return s }
        return JSONWriter.string(value)
    }
}
