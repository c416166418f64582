import StepKitBase

/// A question's or a form item's `initial` expression (SDC's `initialExpression`).
struct InitialAnswer: Sendable {
    /// The form item it starts, or nil for a question step's answer.
    let item: String?
    let expression: Expression
    /// Where it is in the definition, for the checker.
    var path: JSONPath = .root
}

/// Initial answers: an `initial` expression is evaluated once, when its item first becomes
/// enabled — its step's first visit on the path, or, for a form item hidden then, the answer
/// that shows it — and its value becomes the item's answer when the item has none and the
/// format accepts the value (null, or a value the format refuses, leaves it unanswered). It is a
/// draft like any other: shown in the state, changeable, and never computed again, so an edit
/// stays as the participant left it. A restore keeps the answers as saved and evaluates nothing.
extension Session {
    /// Starts the unanswered items of step `index` that have an `initial` and are shown now
    /// (`only`: just these form items).
    mutating func applyInitials(step index: Int, only: Set<String>? = nil) {
        guard let initials = task.rules.initials[index], let step = task.step(at: index) else { return }
        switch step.content {
        case .message:
            return
        case .question(let format):
            guard only == nil, answers[index] == nil, let initial = initials.first else { return }
            if let value = initialValue(initial.expression, format) { answers[index] = value }
        case .form(let form):
            let hidden = hiddenItems(step: index)
            for initial in initials {
                guard let id = initial.item, only?.contains(id) ?? true, !hidden.contains(id),
                      answers[index]?.objectValue?[id] == nil, let item = form.item(id),
                      let value = initialValue(initial.expression, item.format) else { continue }
                // One item at a time: a later item's initial may read an earlier one's.
                var object = answers[index]?.objectValue ?? JSONObject()
                object[id] = value
                answers[index] = .object(object)
            }
        }
    }

    /// `expression`'s value now as an answer `format` accepts (a choice's value as a one-value
    /// choice answer), or nil.
    private func initialValue(_ expression: Expression, _ format: AnswerFormat) -> JSON? {
        var evaluator = ExpressionEvaluator(self)
        let value = evaluator.value(expression)
        guard !value.isNull else { return nil }
        var json = value.json
        if format.resultType == .choice, json.arrayValue == nil { json = .array([json]) }
        return try? format.validate(json, previous: nil)
    }
}
