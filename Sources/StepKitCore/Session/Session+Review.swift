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
    /// A repeating section's step is listed once per instance (at its latest visit in that
    /// instance), in path order, with the instance (`ReviewEntry.instanced`); a step's repeating
    /// blocks list each instance's answers, titled (`blockTitles`).
    func reviewEntries(before end: Int) -> [JSON] {
        var entries: [JSON] = []
        let perInstance = task.rules.stepBlocks.isEmpty ? [] : latestVisitsPerInstance(from: 0)
        for position in path.indices where position < end {
            let visit = path[position]
            let section = task.rules.blockOfStep[visit.stepIndex]
            let latest = section == nil ? path.latestPosition(of: visit.stepIndex) == position : perInstance.contains(position)
            guard latest || visit.endDate == nil,
                  let step = task.step(at: visit.stepIndex), step.takesAnswers else { continue }
            let open = visit.endDate == nil
            let answer = open ? answers[visit.stepIndex].map { visibleAnswer($0, step: visit.stepIndex) } : visit.answer
            let given = visit.skipped ? nil : answer
            let entry = ReviewEntry.json(step: step, answer: given, skipped: visit.skipped,
                                         hidden: open ? hiddenItems(step: visit.stepIndex) : visit.hiddenItems,
                                         titles: blockTitles(step: visit.stepIndex, answer: given))
            if let n = section, let block = stepBlock(n) {
                entries.append(ReviewEntry.instanced(entry, block: block.identifier, instance: visit.instance,
                                                     title: stepInstanceTitle(block: n, instance: visit.instance)))
            } else {
                entries.append(entry)
            }
        }
        return entries
    }

    /// Per repeating block of step `index` (by its item's identifier, or the step's for a
    /// repeating question step), each instance's title (null without one) as the state's
    /// `instances` gives them, for `answer` (the step's answer the review lists): as many as the
    /// block has instances with that answer.
    func blockTitles(step index: Int, answer: JSON?) -> [String: [JSON]] {
        guard let blocks = task.rules.repeats[index], let step = task.step(at: index) else { return [:] }
        var out: [String: [JSON]] = [:]
        let lookup = StoredAnswers(self)
        for block in blocks {
            let given = block.item.map { answer?.objectValue?[$0]?.arrayValue ?? [] } ?? (answer?.arrayValue ?? [])
            let expected = expectedCount(step: index, block: block, on: lookup).map { Session.clampedCount($0, block) } ?? 0
            let count = max(given.count, block.bounds.minCount, expected)
            out[Session.blockName(block, step: step)] = (0..<count).map { k in
                instanceTitle(block, step: step, number: k + 1, instance: given[ifPresent: k]).map { .string($0) } ?? .null
            }
        }
        return out
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
    /// left, leads back to the review (`continueTowardReview`). With `instance`, one instance of
    /// a repeating block of the step (`block`: its name, nil for the step's only block; a
    /// repeating section's step has one, the section): for a section's step, the latest visit
    /// of the step in that instance (nil: the step's latest visit), the instances after it passed
    /// over on the way back as the steps after an edited step are; for a step's repeating group
    /// or question, the step's latest visit with the block in that instance (the state's
    /// `current`). Refused, changing nothing, unless the current step is a review step listing
    /// it (and, with `instance`, the step has that block and instance, on the review's path).
    package mutating func editFromReview(_ identifier: String, block name: String? = nil, instance: Int? = nil) throws(StepKitError) {
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
        // A repeating group or question of the step: the block and instance to enter.
        var entering: (block: RepeatingBlock, k: Int)?
        if let instance {
            if let n = block, let section = stepBlock(n) {
                if let name, name != section.identifier {
                    throw StepKitError(.invalidArgument, code: "unknownBlock",
                                       message: "The step \"\(identifier)\" is in the repeating section \"\(section.identifier)\" and has no block \"\(name)\".")
                }
                _ = try stepInstance(n, at: instance)
                // The latest visit of the step in that instance.
                guard let found = path.indices.last(where: { $0 < reviewPosition && path[$0].stepIndex == target && path[$0].instance == instance }) else {
                    throw stateError("notReviewed", "The review does not list instance \(instance) of \"\(identifier)\" (the path passed over it there); edit one of the entries it lists.")
                }
                position = found
            } else {
                let (found, blockName) = try reviewedBlock(step: target, name)
                let count = instanceCount(step: target, block: found)
                try Session.requireInstance(instance, of: count, in: blockName)
                entering = (found, instance)
            }
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
        if let (b, k) = entering { instancesCursor.move(step: target, block: b.item ?? "", to: k) }
        // Earlier returns (an edit begun during an edit) are merged: everything either took off.
        offPath.reverse()
        if let before = reviewReturn { offPath = before.offPath.filter { !offPath.contains($0) && $0 != target } + offPath }
        reviewReturn = ReviewReturn(review: reviewIndex, edited: target, offPath: offPath)
        clock.touched = true
        stepAppeared(previous: previous, at: time)
        if audit.isOn { audit.record(.backward, at: time, step: reviewIndex, to: target, detail: "reviewEdit") }
        _checkInvariants()
    }

    /// The repeating block `name` of step `index` (nil: its only block), for an edit from a
    /// review into one of its instances; refused as the instance calls refuse a block.
    private func reviewedBlock(step index: Int, _ name: String?) throws(StepKitError) -> (RepeatingBlock, String) {
        let identifier = task.step(at: index)?.identifier ?? ""
        guard let blocks = task.rules.repeats[index], let step = task.step(at: index), !blocks.isEmpty else {
            throw stateError("noRepeatingBlock", "The step \"\(identifier)\" is in no repeating block and has none: edit it without an instance.")
        }
        if let name {
            guard let block = blocks.first(where: { Session.blockName($0, step: step) == name }) else {
                let names = blocks.map { "\"" + Session.blockName($0, step: step) + "\"" }.joined(separator: ", ")
                throw StepKitError(.invalidArgument, code: "unknownBlock", message: "The step \"\(identifier)\" has no repeating block \"\(name)\"; it has \(names).")
            }
            return (block, name)
        }
        guard blocks.count == 1, let block = blocks.first else {
            throw StepKitError(.invalidArgument, code: "blockRequired", message: "The step \"\(identifier)\" has several repeating blocks: name one.")
        }
        return (block, Session.blockName(block, step: step))
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
/// visible items; a page's named `page.substep` as its results are). A repeating block's
/// answers are listed per instance, in order, each with `"block"`, `"instance"` (from 0) and
/// `"instanceTitle"` (the state's title, null without one), named `block[k].item` (a group's
/// items) or `block[k]` (a repeating question's answers); a repeating section's step has
/// `"section"`, `"instance"` and `"instanceTitle"` itself (`instanced`).
enum ReviewEntry {
    /// `titles`: per repeating block of the step (`blockTitles`), each instance's title; a block
    /// lists as many instances as it has titles (at least its answer's).
    static func json(step: Step, answer: JSON?, skipped: Bool, hidden: [String], titles: [String: [JSON]] = [:]) -> JSON {
        var items: [JSON] = []
        switch step.content {
        case .message:
            break
        case .question(let format):
            let label = Step.displayTitle(step.presentation, identifier: step.identifier)
            if let repeating = format.repeating, case .question(let each) = repeating.content {
                items += instances(step.identifier, named: step.identifier, label: label, each, answer, titles: titles[step.identifier])
            } else {
                items.append(item(step.identifier, label: label, format, answer))
            }
        case .form(let form):
            let given = answer?.objectValue
            let prefix = step.isPage ? step.identifier + "." : ""
            for entry in form.items where !hidden.contains(entry.identifier) {
                let value = given?[entry.identifier]
                switch entry.format.repeating?.content {
                case .group(let inner)?:
                    let list = value?.arrayValue ?? []
                    let named = titles[entry.identifier] ?? []
                    for k in 0..<max(list.count, named.count) {
                        let instance = list[ifPresent: k]?.objectValue
                        for part in inner.items where !hidden.contains(Session.instanceKey(entry.identifier, k, part.identifier)) {
                            let shown = item(prefix + Session.instanceKey(entry.identifier, k, part.identifier), label: part.label, part.format, instance?[part.identifier])
                            items.append(inBlock(shown, entry.identifier, k, named[ifPresent: k]))
                        }
                    }
                case .question(let each)?:
                    items += instances(prefix + entry.identifier, named: entry.identifier, label: entry.label, each, value, titles: titles[entry.identifier])
                case nil:
                    items.append(item(prefix + entry.identifier, label: entry.label, entry.format, value))
                }
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

    /// A reviewed step of a repeating section, in instance `k` of section `block`.
    static func instanced(_ entry: JSON, block: String, instance k: Int, title: String?) -> JSON {
        guard case .object(var o) = entry else { return entry }
        o["section"] = .string(block)
        o["instance"] = .int(Int64(k))
        o["instanceTitle"] = .string(title)
        return .object(o)
    }

    /// A repeating question's answers, one per instance (`identifier[k]`), each of `format`.
    private static func instances(_ identifier: String, named block: String, label: String, _ format: AnswerFormat, _ answer: JSON?,
                                  titles: [JSON]?) -> [JSON] {
        let list = answer?.arrayValue ?? []
        let named = titles ?? []
        return (0..<max(list.count, named.count)).map { k in
            inBlock(item(identifier + "[" + String(k) + "]", label: label, format, list[ifPresent: k]), block, k, named[ifPresent: k])
        }
    }

    private static func inBlock(_ shown: JSON, _ block: String, _ k: Int, _ title: JSON?) -> JSON {
        guard case .object(var o) = shown else { return shown }
        o["block"] = .string(block)
        o["instance"] = .int(Int64(k))
        o["instanceTitle"] = title ?? .null
        return .object(o)
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
        // A repeating question's answers (in a group's instance): each as its format reads.
        if let repeating = format.repeating, case .question(let each) = repeating.content, let list = answer.arrayValue {
            return list.filter { !$0.isNull }.map { displayText($0, each) }.joined(separator: ", ")
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
