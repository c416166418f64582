/// Setting answers, form item visibility, and knowing whether the current step may be left.
extension Session {
    mutating func setAnswer(_ answer: JSON) throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, let index = current?.stepIndex else {
            throw StepKitError(.internal, code: "noStep", message: "The session has no current step.")
        }
        let updated: JSON?
        switch step.content {
        case .message:
            throw stateError("noAnswer", "The step \"\(step.identifier)\" takes no answer.")
        case .question(let format):
            do throws(AnswerRejection) {
                updated = try format.validate(answer, previous: answers[index])
            } catch {
                throw StepKitError(.answer, code: error.code, message: error.message)
            }
        case .form(let form):
            updated = try setFormAnswers(answer, form: form, previous: answers[index]?.objectValue ?? JSONObject())
        }
        // Every `matches` condition reading this answer matches it now, once, within its bound.
        let problems = task.rules.conditionPatterns.problems(step: index, value: updated)
        guard problems.isEmpty else { throw StepKitError(.answer, problems: problems) }
        answers[index] = updated
        touched = true
        emit("resultDidChange", ["step": .string(step.identifier)])
    }

    /// Applies `{"item": answer, ...}` to a form's answers: every item is checked and every
    /// problem reported together; nothing is kept unless all of them pass.
    private func setFormAnswers(_ answer: JSON, form: Form, previous: JSONObject) throws(StepKitError) -> JSON {
        guard case .object(let changes) = answer else {
            throw StepKitError(.answer, code: "wrongType", message: "A form's answer is an object of its items' answers: {\"item\": answer}.")
        }
        let applied = Session.applyItems(changes, form: form, previous: previous)
        let updated = applied.updated
        var problems = applied.problems
        // A confirmation set now must match its original as it stands after this call.
        if problems.isEmpty {
            for (key, _) in changes.entries {
                guard let item = form.item(key), let confirm = item.format.rules as? ConfirmTextFormat,
                      let value = updated[key], let original = updated[confirm.originalItemIdentifier] else { continue }
                do throws(AnswerRejection) { try confirm.confirm(value, original: original) } catch {
                    problems.append(Problem(code: error.code, message: error.message, path: .root.key(key)))
                }
            }
        }
        guard problems.isEmpty else { throw StepKitError(.answer, problems: problems) }
        return .object(updated)
    }

    /// Each item of `changes` checked by its answer format and applied to `previous`: the one
    /// validation of form answers, used by `set_answer` and by restore (which checks saved
    /// answers exactly as they were accepted). Confirmations are checked by the caller: a draft
    /// may hold a confirmation its original has since moved away from.
    static func applyItems(_ changes: JSONObject, form: Form, previous: JSONObject) -> (updated: JSONObject, problems: [Problem]) {
        var updated = previous
        var problems: [Problem] = []
        for (key, value) in changes.entries {
            guard let item = form.item(key) else {
                problems.append(Problem(code: "unknownItem", message: "The form has no item \"\(key)\".", path: .root.key(key)))
                continue
            }
            do throws(AnswerRejection) {
                updated[key] = try item.format.validate(value, previous: previous[key])
            } catch {
                problems.append(Problem(code: error.code, message: error.message, path: .root.key(key)))
            }
        }
        return (updated, problems)
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
                if let value, let confirm = item.format.rules as? ConfirmTextFormat {
                    do throws(AnswerRejection) { try confirm.confirm(value, original: given[confirm.originalItemIdentifier]) } catch {
                        problems.append(Problem(code: error.code, message: error.message, path: .root.key(item.identifier)))
                    }
                }
            }
            return problems
        }
    }
}
