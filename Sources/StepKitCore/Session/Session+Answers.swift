import StepKitBase

/// Setting answers, form item visibility, and knowing whether the current step may be left.
extension Session {
    package mutating func setAnswer(_ answer: JSON) throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, let index = currentIndex else {
            throw StepKitError(.internal, code: "noStep", message: "The session has no current step.")
        }
        if case .message = step.content {
            throw stateError("noAnswer", "The step \"\(step.identifier)\" takes no answer.")
        }
        if step.hosted?.reportKind != nil {
            throw stateError("reportedByHost", "The step \"\(step.identifier)\" is answered by the host's report (stepkit_session_report), not by an answer.")
        }
        // The one decision (`Rules/Acceptance.swift`); the answers with the new value in place are
        // built only for a step with bounds written as expressions.
        // Read once: the acceptance and the audit trail both compare with it.
        let previous = answers[index]
        let accepted = task.accept(answer, to: step, at: index, previous: previous, parts: .setAnswer) { kept in
            var trial = self
            trial.answers[index] = kept
            return trial
        }
        guard accepted.problems.isEmpty else { throw StepKitError(.answer, problems: accepted.problems) }
        // Repeating blocks: no instance past the count, no `count` out of bounds (`Session+Instances`).
        if task.rules.repeats[index] != nil || task.rules.repeatCounts {
            let problems = repeatProblems(answer, kept: accepted.value, step: index)
            guard problems.isEmpty else { throw StepKitError(.answer, problems: problems) }
        }
        // A form item with an `initial` that this answer shows is enabled now: it starts.
        let hiddenBefore = task.rules.initials[index] != nil && hasVisibilityRules(step: index) ? hiddenItems(step: index) : []
        answers[index] = accepted.value
        // The same value again changes nothing: no event.
        if audit.isOn && previous != accepted.value {
            let cleared = accepted.value?.isNull ?? true
            audit.record(cleared ? .answerCleared : .answerSet, at: now, step: index, old: previous, new: accepted.value)
        }
        // A selection of another list this answer takes away is removed, with an event.
        removeUnavailableChoices()
        if !hiddenBefore.isEmpty {
            let shown = Set(hiddenBefore).subtracting(hiddenItems(step: index))
            if !shown.isEmpty { applyInitials(step: index, only: shown) }
        }
        clock.touched = true
        emit("resultDidChange", ["step": .string(step.identifier)])
        _checkInvariants()
    }

    /// Whether a form item is shown now: its section header's `visibleWhen` (if any) and its
    /// own (if any) hold.
    func isVisible(_ item: String, step index: Int) -> Bool {
        guard let governed = task.rules.governedItems[index]?.first(where: { $0.identifier == item }) else { return true }
        return isShown(governed)
    }

    /// Whether `governed` is shown: its header's and its own `visibleWhen` hold on the answers
    /// as stored, read in place (`holdsOnStoredAnswers`).
    private func isShown(_ governed: GovernedItem) -> Bool {
        if let header = governed.header, !holdsOnStoredAnswers(header) { return false }
        if let own = governed.own, !holdsOnStoredAnswers(own) { return false }
        return true
    }

    /// Whether some `visibleWhen` (an item's or a section header's) can hide items of the form.
    func hasVisibilityRules(step index: Int) -> Bool {
        task.rules.governedItems[index] != nil
    }

    /// The items of a form that its `visibleWhen` rules hide now, sorted.
    /// Items of repeating groups' instances that their rules hide follow, as `block[k].item`
    /// (`Session+InstanceReads`).
    func hiddenItems(step index: Int) -> [String] {
        let inInstances = task.rules.instanceVisibility[index] == nil ? [] : instanceHiddenItems(step: index)
        guard let governed = task.rules.governedItems[index] else { return inInstances }
        return governed.compactMap { isShown($0) ? nil : $0.identifier } + inInstances
    }

    /// A form's answer with hidden items left out (they stay in `answers` to prefill).
    func visibleAnswer(_ answer: JSON, step index: Int) -> JSON {
        Session.visibleAnswer(answer, hiding: hiddenItems(step: index))
    }

    /// A form's answer without the items `hidden` names (`hiddenItems`, worked out once a call).
    /// Inlined: closing a visit calls it on every move, most often with nothing hidden (then it
    /// hands the answer back), and out of line that cost as much as the rest of closing.
    @inline(__always)
    static func visibleAnswer(_ answer: JSON, hiding hidden: [String]) -> JSON {
        guard !hidden.isEmpty, case .object(var object) = answer else { return answer }
        var inInstances = false
        for key in hidden {
            if object[key] != nil { object[key] = nil } else if key.utf8.contains(0x5B) { inInstances = true }
        }
        if inInstances { removeInstanceItems(&object, hiding: hidden) }
        return .object(object)
    }

    /// Why the current step may not be left going forward ([] when it may): what the step
    /// requires, then (when that is given) the validations that hold: the form's, and the task's
    /// when going forward would complete the task. `hidden`: the current step's
    /// `hiddenItems`, when the caller has them already (`goForward` needs them again to close
    /// the visit, and working them out is most of what a form's check costs).
    ///
    /// With `requiredAnswersChecked: "atCompletion"` a missing required answer does not keep the
    /// participant on its step: only the move that would complete the task is refused, with
    /// every required answer missing on the path (`missingAnswers`); a confirmation that does
    /// not match, and the form's validations, are refused at once as before.
    func forwardProblems(hidden: [String]? = nil) -> [Problem] {
        let atCompletion = task.rules.requiredAnswers == .atCompletion
        var required = requiredProblems(hidden: hidden, missing: !atCompletion)
        guard !isFinished, let index = currentIndex else { return required }
        var completing: Bool?
        if atCompletion && required.isEmpty {
            completing = routeForward()?.step == nil
            if completing == true { required = missingAnswers() }
        }
        guard required.isEmpty else { return required }
        // Most steps have no validation: then nothing is copied, filtered or mapped.
        var problems: [Problem] = []
        func check(_ validations: [Validation]) {
            for v in validations where v.when.evaluate(self) {
                problems.append(Problem(code: Validation.code, message: piped(v.message), path: .root))
            }
        }
        if let validations = task.rules.stepValidations[index] { check(validations) }
        if !task.rules.taskValidations.isEmpty, completing ?? (routeForward()?.step == nil) { check(task.rules.taskValidations) }
        return problems
    }

    /// Every required answer missing on the path so far, in the order the steps were presented:
    /// each step's latest visit (a skipped one has nothing missing; a form's items hidden when
    /// it was left, or hidden now on the current step, are not required), the current step's
    /// live answer included. Each problem names its `step` (and `item`); its path is
    /// `$.<step>` or `$.<step>.<item>`, the answer's place in the result's shape.
    /// Per step, the required answers can be missing only on the current step (leaving a step
    /// needed them), so only that one is read.
    func missingAnswers() -> [Problem] {
        var problems: [Problem] = []
        let last = path.count - 1
        let from = task.rules.requiredAnswers == .atCompletion ? 0 : max(last, 0)
        // A repeating section's step is required once per instance: its latest visit in each
        // (`Session+StepBlocks`), reported at `$.<section>[k].<step>`.
        let perInstance = task.rules.stepBlocks.isEmpty ? [] : latestVisitsPerInstance(from: from)
        for position in path.indices where position >= from {
            let visit = path[position]
            let block = perInstance.isEmpty ? nil : task.rules.blockOfStep[visit.stepIndex]
            let latest = block == nil ? path.latestPosition(of: visit.stepIndex) == position : perInstance.contains(position)
            guard latest, !visit.skipped, let step = task.step(at: visit.stepIndex) else { continue }
            let live = position == last && !isFinished
            let hidden = live ? hiddenItems(step: visit.stepIndex) : visit.hiddenItems
            let answer = live ? answers[visit.stepIndex] : visit.answer
            let empty = listsWithoutChoices(step: visit.stepIndex)
            var found = Session.missing(in: step, answer: answer, hidden: hidden + empty.compactMap { $0 }, noChoices: empty.contains(nil),
                                        completing: true) { piped($0) }
            if let n = block, let section = stepBlock(n) {
                for i in found.indices {
                    var place = JSONPath.root.key(section.identifier).index(visit.instance).key(step.identifier)
                    if let item = found[i].item { place = place.key(item) }
                    found[i].path = place
                }
            }
            problems += found
        }
        return problems
    }

    /// The required answers `answer` lacks for `step` (a form's `hidden` items are not
    /// required, nor a question whose filtered list offers no choice, `noChoices`; an optional
    /// form left entirely empty lacks nothing, as if skipped).
    /// `completing`: the messages say the task cannot finish, and each names its step.
    private static func missing(in step: Step, answer: JSON?, hidden: [String], noChoices: Bool = false, completing: Bool,
                                _ piped: (String) -> String) -> [Problem] {
        switch step.content {
        case .message:
            return []
        case .question(let format):
            if let repeating = format.repeating {
                guard !step.optional else { return [] }
                let label = step.presentation["question"]?.stringValue ?? step.presentation["title"]?.stringValue ?? step.identifier
                return missingInstances(repeating, answer?.arrayValue ?? [], label: piped(label), step: step.identifier, item: nil, completing: completing, piped)
            }
            guard answer == nil && !step.optional && !noChoices else { return [] }
            guard completing else { return [Problem(code: "answerRequired", text: Message("answer.required"), path: .root)] }
            let label = step.presentation["question"]?.stringValue ?? step.presentation["title"]?.stringValue ?? step.identifier
            return [Problem(code: "answerRequired", text: Message("answer.requiredToFinish", ["label": .text(piped(label))]), path: .root.key(step.identifier), step: step.identifier)]
        case .form(let form):
            let given = answer.map { Session.visibleAnswer($0, hiding: hidden) }?.objectValue ?? JSONObject()
            if step.optional && given.count == 0 { return [] }
            var problems: [Problem] = []
            // By index, the answer's key at the item's own position tried first: an answer lists
            // the items in the form's order unless the host wrote it otherwise.
            for i in form.items.indices where !form.items[i].optional && (hidden.isEmpty || !hidden.contains(form.items[i].identifier)) {
                let identifier = form.items[i].identifier
                if let repeating = form.items[i].format.repeating {
                    let list = (given.value(at: i, ifKeyIs: identifier) ?? given[identifier])?.arrayValue ?? []
                    problems += missingInstances(repeating, list, label: piped(form.items[i].label), step: step.identifier, item: identifier, completing: completing, hidden: hidden, piped)
                    continue
                }
                guard (given.value(at: i, ifKeyIs: identifier) ?? given[identifier]) == nil else { continue }
                if completing {
                    problems.append(Problem(code: "answerRequired", text: Message("answer.requiredToFinish", ["label": .text(piped(form.items[i].label))]),
                                            path: .root.key(step.identifier).key(identifier), item: identifier, step: step.identifier))
                } else {
                    problems.append(Problem(code: "answerRequired", text: Message("answer.requiredToContinue", ["label": .text(piped(form.items[i].label))]), path: .root.key(identifier), item: identifier))
                }
            }
            return problems
        }
    }

    /// `text` with its `{{placeholders}}` resolved on the session's answers (`Piping`). A
    /// per-instance value (`{"forEach": BLOCK}`) is the one of the instance in scope: `instance`
    /// (a title's), else, on a step of its repeating section, the instance the participant is
    /// in (the compiler refuses it anywhere else: `TaskCompiler.compilePiping`).
    func piped(_ text: String) -> String { piped(text, instance: nil) }

    func piped(_ text: String, instance: (block: BlockReference, index: Int)?) -> String {
        guard Piping.mayPipe(text) else { return text }
        let list = task.calculations.list
        var values: [ExpressionValue]?
        return Piping.render(text) { name in
            guard let i = task.calculations.index(of: name) else { return nil }
            if values == nil { values = calculationValues() }
            guard let v = values, v.indices.contains(i), list.indices.contains(i) else { return nil }
            if let block = list[i].block, let k = pipedInstance(block, instance) {
                guard case .array(let each) = v[i].json, let one = each[ifPresent: k] else { return nil }
                return Piping.text(of: .dynamic(one))
            }
            return Piping.text(of: v[i])
        }
    }

    /// Which instance of `block` a per-instance value shown now is: a title's own, or in a
    /// repeating section the participant is in, the current one.
    private func pipedInstance(_ block: BlockReference, _ instance: (block: BlockReference, index: Int)?) -> Int? {
        if let instance, instance.block == block { return instance.index }
        guard case .section(let n, _) = block, let index = currentIndex, task.rules.blockOfStep[index] == n else { return nil }
        return currentInstance(n)
    }

    /// What the current step requires before it may be left going forward: an active step's
    /// timer, a form's confirmations, and (`missing`) its required answers.
    private func requiredProblems(hidden known: [String]?, missing: Bool) -> [Problem] {
        guard !isFinished, let step = currentStep, let index = currentIndex else { return [] }
        let answer = answers[index]
        switch step.content {
        case .message:
            return activeProblems()
        case .question(let format):
            guard missing else { return [] }
            // An answered question lacks nothing (`missing` says so too, after working out which
            // of its lists offer no choice); a repeating one is checked instance by instance.
            if answer != nil && format.repeating == nil { return [] }
            return Session.missing(in: step, answer: answer, hidden: [], noChoices: listsWithoutChoices(step: index).contains(nil), completing: false) { piped($0) }
        case .form(let form):
            let hidden = known ?? hiddenItems(step: index)
            // An item whose filtered list offers no choice is not required, as a hidden one.
            let empty = missing ? listsWithoutChoices(step: index).compactMap { $0 } : []
            // `hidden + empty` allocates even when `empty` has nothing to add (nearly always).
            var problems = missing ? Session.missing(in: step, answer: answer, hidden: empty.isEmpty ? hidden : hidden + empty, completing: false) { piped($0) } : []
            guard !form.confirmations.isEmpty else { return problems }
            let given = answer.map { Session.visibleAnswer($0, hiding: hidden) }?.objectValue ?? JSONObject()
            if step.optional && given.count == 0 { return problems }
            for item in form.items where hidden.isEmpty || !hidden.contains(item.identifier) {
                problems += form.confirmationProblems(given, items: CollectionOfOne(item.identifier), originalRequired: true)
            }
            return problems
        }
    }
}
