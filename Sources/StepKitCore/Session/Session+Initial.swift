import StepKitBase

/// A question's or a form item's `initial` expression (SDC's `initialExpression`).
struct InitialAnswer: Sendable {
    /// The form item it starts, or nil for a question step's answer.
    let item: String?
    /// For an item of a repeating group: the group (its form item), whose instances it starts
    /// one by one, each evaluated in that instance.
    var block: String? = nil
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
            if only == nil { applyInstanceInitials(step: index) }
            for initial in initials where initial.block == nil {
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

    /// Starts the items with an `initial` in the instances of step `index`'s repeating groups
    /// (`instance`: that one only, just added), each evaluated in its instance: an item hidden
    /// there, or answered, is left as it is.
    mutating func applyInstanceInitials(step index: Int, block name: String? = nil, instance: Int? = nil) {
        guard let initials = task.rules.initials[index], let step = task.step(at: index) else { return }
        for block in task.rules.repeats[index] ?? [] {
            guard let item = block.item, name == nil || name == item, let group = step.format(item: item)?.repeating?.form,
                  initials.contains(where: { $0.block == item }) else { continue }
            let reference = BlockReference.answer(step: index, item: item)
            let range = instance.map { $0..<($0 + 1) } ?? 0..<instanceCount(step: index, block: block)
            for k in range {
                let hidden = hiddenInInstance(step: index, block: item, k)
                for initial in initials where initial.block == item {
                    guard let id = initial.item, !hidden.contains(id), let format = group.item(id)?.format else { continue }
                    var object = answers[index]?.objectValue ?? JSONObject()
                    var list = object[item]?.arrayValue ?? []
                    guard list[ifPresent: k]?.objectValue?[id] == nil,
                          let value = initialValue(initial.expression, format, scope: InstanceScope(reference, k)) else { continue }
                    // One item at a time, the instances before it kept (empty ones as {}).
                    while list.count <= k { list.append(.object(JSONObject())) }
                    var entry = list[k].objectValue ?? JSONObject()
                    entry[id] = value
                    list[k] = .object(entry)
                    object[item] = .array(list)
                    answers[index] = .object(object)
                }
            }
        }
    }

    /// `expression`'s value now as an answer `format` accepts (a choice's value as a one-value
    /// choice answer), or nil.
    private func initialValue(_ expression: Expression, _ format: AnswerFormat, scope: InstanceScope = .none) -> JSON? {
        var evaluator = ExpressionEvaluator(self, scope: scope)
        let value = evaluator.value(expression)
        guard !value.isNull else { return nil }
        var json = value.json
        if format.resultType == .choice, json.arrayValue == nil { json = .array([json]) }
        return try? format.validate(json, previous: nil)
    }
}
