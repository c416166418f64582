import StepKitBase

/// Prefill: answers for a step that has none yet, from an earlier run's result (ResearchKit's
/// `defaultResultSource`) or the host's personal data (ResearchKit's HealthKit answer formats).
/// A prefilled answer is a draft like any other: validated, shown in the state, changeable.
extension Session {
    /// Prefills step `index` (a session without prefill, most, only asks).
    mutating func applyPrefill(step index: Int) {
        guard !options.prefill.isEmpty else { return }
        prefill(step: index)
        // A prefilled selection not offered now (a choice's `visibleWhen`, `choicesFrom`), or one
        // that takes another list's selection away, is removed with an event, as after
        // `set_answer`: never silently kept.
        removeUnavailableChoices()
    }

    private mutating func prefill(step index: Int) {
        let prefill = options.prefill
        guard let step = task.step(at: index) else { return }
        switch step.content {
        case .message:
            return
        case .question(let format):
            guard answers[index] == nil || prefill.always,
                  let value = defaultAnswer(step: step.identifier, item: nil, format: format) else { return }
            answers[index] = value
        case .form(let form):
            var object = answers[index]?.objectValue ?? JSONObject()
            var changed = false
            for item in form.items where object[item.identifier] == nil || prefill.always {
                if let value = defaultAnswer(step: step.identifier, item: item.identifier, format: item.format) {
                    object[item.identifier] = value
                    changed = true
                }
            }
            if changed { answers[index] = .object(object) }
        }
    }

    /// The first default that is a valid answer for `format`; defaults that are not are ignored.
    private func defaultAnswer(step: String, item: String?, format: AnswerFormat) -> JSON? {
        let prefill = options.prefill
        var candidates: [JSON] = []
        if let result = prefill.result, let taskID = prefill.taskIdentifier,
           let found = result.answer(task: taskID, step: step, item: item) {
            candidates.append(found.value)
        }
        if let field = format.personalData, let value = prefill.personalData[field] {
            candidates.append(value)
            // A choice question takes the host's single value as its one choice.
            if format.resultType == .choice, value.arrayValue == nil { candidates.append(.array([value])) }
        }
        for candidate in candidates {
            if let value = try? format.validate(candidate, previous: nil) { return value }
        }
        return nil
    }
}
