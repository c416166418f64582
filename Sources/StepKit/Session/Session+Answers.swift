/// Setting answers, form item visibility, and knowing whether the current step may be left.
extension Session {
    mutating func setAnswer(_ answer: JSON) throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, let index = currentIndex else {
            throw StepKitError(.internal, code: "noStep", message: "The session has no current step.")
        }
        if case .message = step.content {
            throw stateError("noAnswer", "The step \"\(step.identifier)\" takes no answer.")
        }
        let checked = step.validate(answer, previous: answers[index], confirming: .changed)
        guard checked.problems.isEmpty else { throw StepKitError(.answer, problems: checked.problems) }
        // Every `matches` condition reading this answer matches it now, once, within its bound.
        let problems = task.rules.conditionPatterns.problems(step: index, value: checked.value)
        guard problems.isEmpty else { throw StepKitError(.answer, problems: problems) }
        // Looked up here, in the mutating call, not by a non-mutating helper: calling one copies
        // the whole session first (`requireInProgress`), and nearly every step has no bounds.
        if let bounds = task.rules.answerBounds[index] {
            let outOfRange = boundProblems(bounds, step: index, value: checked.value, changed: answer)
            guard outOfRange.isEmpty else { throw StepKitError(.answer, problems: outOfRange) }
        }
        answers[index] = checked.value
        touched = true
        emit("resultDidChange", ["step": .string(step.identifier)])
    }

    /// Whether a form item is shown now: its section header's `visibleWhen` (if any) and its
    /// own (if any) hold.
    func isVisible(_ item: String, step index: Int) -> Bool {
        guard let governed = task.rules.governedItems[index]?.first(where: { $0.identifier == item }) else { return true }
        return withStoredAnswers { governed.isVisible($0) }
    }

    /// Whether some `visibleWhen` (an item's or a section header's) can hide items of the form.
    func hasVisibilityRules(step index: Int) -> Bool {
        task.rules.governedItems[index] != nil
    }

    /// The items of a form that its `visibleWhen` rules hide now, sorted. Inlined, like
    /// `forwardProblems` and `requiredProblems`: a mutating move calling it out of line copied
    /// the whole session first (`requireInProgress`).
    @inline(__always)
    func hiddenItems(step index: Int) -> [String] {
        guard let governed = task.rules.governedItems[index] else { return [] }
        return withStoredAnswers { stored in governed.compactMap { $0.isVisible(stored) ? nil : $0.identifier } }
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
        for key in hidden { object[key] = nil }
        return .object(object)
    }

    /// Why the current step may not be left going forward ([] when it may): what the step
    /// requires, then (when that is given) the validations that hold: the form's, and the task's
    /// when going forward would complete the task. `hidden`: the current step's
    /// `hiddenItems`, when the caller has them already (`goForward` needs them again to close
    /// the visit, and working them out is most of what a form's check costs).
    @inline(__always)
    func forwardProblems(hidden: [String]? = nil) -> [Problem] {
        let required = requiredProblems(hidden: hidden)
        guard required.isEmpty, !isFinished, let index = currentIndex else { return required }
        // Most steps have no validation: then nothing is copied, filtered or mapped.
        var problems: [Problem] = []
        func check(_ validations: [Validation]) {
            for v in validations where v.when.evaluate(self) {
                problems.append(Problem(code: Validation.code, message: piped(v.message), path: .root))
            }
        }
        if let validations = task.rules.stepValidations[index] { check(validations) }
        if !task.rules.taskValidations.isEmpty, routeForward()?.step == nil { check(task.rules.taskValidations) }
        return problems
    }

    /// `text` with its `{{placeholders}}` resolved on the session's answers (`Piping`).
    func piped(_ text: String) -> String {
        guard Piping.mayPipe(text) else { return text }
        let list = task.calculations.list
        var values: [ExpressionValue]?
        return Piping.render(text) { name in
            guard let i = task.calculations.index(of: name) else { return nil }
            if values == nil { values = calculationValues() }
            guard let v = values, v.indices.contains(i), list.indices.contains(i) else { return nil }
            return Piping.text(of: v[i])
        }
    }

    /// What the current step requires before it may be left going forward.
    @inline(__always)
    private func requiredProblems(hidden known: [String]?) -> [Problem] {
        guard !isFinished, let step = currentStep, let index = currentIndex else { return [] }
        let answer = answers[index]
        switch step.content {
        case .message:
            return activeProblems()
        case .question:
            if answer == nil && !step.optional {
                return [Problem(code: "answerRequired", message: "Answer this question to continue.", path: .root)]
            }
            return []
        case .form(let form):
            let hidden = known ?? hiddenItems(step: index)
            let given = answer.map { Session.visibleAnswer($0, hiding: hidden) }?.objectValue ?? JSONObject()
            // An optional form left entirely empty may be left, as if skipped.
            if step.optional && given.count == 0 { return [] }
            var problems: [Problem] = []
            // By index, the answer's key at the item's own position tried first: an answer lists
            // the items in the form's order unless the host wrote it otherwise.
            for i in form.items.indices where hidden.isEmpty || !hidden.contains(form.items[i].identifier) {
                let identifier = form.items[i].identifier
                let answered = given.value(at: i, ifKeyIs: identifier) ?? given[identifier]
                if answered == nil && !form.items[i].optional {
                    problems.append(Problem(code: "answerRequired", message: "Answer \"\(piped(form.items[i].label))\" to continue.", path: .root.key(identifier), item: identifier))
                }
                if !form.confirmations.isEmpty {
                    problems += form.confirmationProblems(given, items: CollectionOfOne(identifier), originalRequired: true)
                }
            }
            return problems
        }
    }
}
