/// Setting answers, form item visibility, and knowing whether the current step may be left.
extension Session {
    mutating func setAnswer(_ answer: JSON) throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, let index = current?.stepIndex else {
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
        let outOfRange = boundProblems(step: index, value: checked.value, changed: answer)
        guard outOfRange.isEmpty else { throw StepKitError(.answer, problems: outOfRange) }
        answers[index] = checked.value
        touched = true
        emit("resultDidChange", ["step": .string(step.identifier)])
    }

    /// Whether a form item is shown now (its `visibleWhen` holds, or it has none).
    func isVisible(_ item: String, step index: Int) -> Bool {
        task.rules.visibility[index]?[item]?.evaluate(StoredAnswers(session: self)) ?? true
    }

    /// The items of a form that its `visibleWhen` rules hide now.
    func hiddenItems(step index: Int) -> [String] {
        guard let rules = task.rules.visibility[index] else { return [] }
        return rules.keys.filter { !isVisible($0, step: index) }.sorted()
    }

    /// A form's answer with hidden items left out (they stay in `answers` to prefill).
    func visibleAnswer(_ answer: JSON, step index: Int) -> JSON {
        guard let rules = task.rules.visibility[index], !rules.isEmpty, case .object(var object) = answer else { return answer }
        for key in object.keys where !isVisible(key, step: index) { object[key] = nil }
        return .object(object)
    }

    /// Why the current step may not be left going forward ([] when it may).
    func forwardProblems() -> [Problem] {
        guard !isFinished, let step = currentStep, let index = current?.stepIndex else { return [] }
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
            let given = answer.map { visibleAnswer($0, step: index) }?.objectValue ?? JSONObject()
            // An optional form left entirely empty may be left, as if skipped.
            if step.optional && given.count == 0 { return [] }
            var problems: [Problem] = []
            for item in form.items where isVisible(item.identifier, step: index) {
                let value = given[item.identifier]
                if value == nil && !item.optional {
                    problems.append(Problem(code: "answerRequired", message: "Answer \"\(item.label)\" to continue.", path: .root.key(item.identifier)))
                }
                problems += form.confirmationProblems(given, items: [item.identifier], originalRequired: true)
            }
            return problems
        }
    }
}
