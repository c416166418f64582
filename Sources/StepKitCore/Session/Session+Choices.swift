import StepKitBase

/// What a step's choice lists and items look like to the participant: in the run's seeded
/// order (`Randomization`), with only the choices offered now (`ChoiceAvailability`); and the
/// removal of a selection that stops being offered.
extension Session {
    /// The run's seed (nil: the task shuffles nothing and the host gave none).
    var seed: UInt64? { options.seed }

    /// The indexes of a list's choices as shown: in the seeded order, the ones not offered left
    /// out.
    func shownChoices(step index: Int, item: String?, _ options: [ChoiceOption], shuffled: Bool) -> [Int] {
        var order = Array(options.indices)
        if shuffled, let seed, let step = task.step(at: index),
           let list = Randomization.lists(of: step).first(where: { $0.kind == .choices && $0.item == item }) {
            order = Randomization.order(of: list, seed: seed)
        }
        guard let filter = task.choiceFilter(step: index, item: item) else { return order }
        let offered = filter.available(options, on: StoredAnswers(self))
        return order.filter { offered[ifPresent: $0] == true }
    }

    /// The filtered lists of step `index` that offer no choice now: nil for the question's own
    /// list, an item's identifier for a form item's. Such a question or item cannot be answered,
    /// so it is not required: the participant goes on without it (docs/task-format.md,
    /// "Filtered choices"); the checker warns where a list can run out (`choicesMayRunOut`).
    func listsWithoutChoices(step index: Int) -> [String?] {
        guard let filters = task.rules.choiceFilters[index], let step = task.step(at: index) else { return [] }
        var empty: [String?] = []
        for filter in filters {
            guard let options = step.format(item: filter.item)?.rules.choiceOptions else { continue }
            if !filter.available(options, on: StoredAnswers(self)).contains(true) { empty.append(filter.item) }
        }
        return empty
    }

    /// Rewrites a step's presentation (the state's `step`) to the order and choices shown.
    func presentChoices(_ fields: inout JSONObject, step index: Int, _ step: Step) {
        guard seed != nil || task.rules.choiceFilters[index] != nil else { return }
        switch step.content {
        case .message: break
        case .question(let format):
            if case .object(var object)? = fields["answerFormat"] {
                present(&object, format, step: index, item: nil)
                fields["answerFormat"] = .object(object)
            }
        case .form(let form):
            guard case .array(var entries)? = fields["formItems"] else { return }
            for i in entries.indices {
                guard case .object(var entry) = entries[i], let id = entry["identifier"]?.stringValue,
                      let item = form.item(id), case .object(var object)? = entry["answerFormat"] else { continue }
                present(&object, item.format, step: index, item: id)
                entry["answerFormat"] = .object(object)
                entries[i] = .object(entry)
            }
            if let seed, let list = Randomization.lists(of: step).first(where: { $0.kind == .items }) {
                let original = entries
                entries = Randomization.order(of: list, seed: seed).compactMap { original[ifPresent: $0] }
            }
            fields["formItems"] = .array(entries)
        }
    }

    private func present(_ object: inout JSONObject, _ format: AnswerFormat, step index: Int, item: String?) {
        guard let options = format.rules.choiceOptions else { return }
        let key = object["imageChoices"] != nil ? "imageChoices" : "textChoices"
        guard case .array(let listed)? = object[key], listed.count == options.count else { return }
        let shown = shownChoices(step: index, item: item, options, shuffled: format.rules.isShuffled)
        if shown == Array(options.indices) { return }
        object[key] = .array(shown.compactMap { listed[ifPresent: $0] })
    }

    /// Removes from every answer the selections that are no longer offered (an earlier answer
    /// changed), each removal announced by a `choicesRemoved` event. Never silently kept: a
    /// result, a rule or a restore would otherwise read a choice the participant could not see.
    /// Runs until nothing changes (a removal may take away another list's source), at most once
    /// per filtered list.
    mutating func removeUnavailableChoices() {
        guard !task.rules.choiceFilters.isEmpty else { return }
        var rounds = 0
        for (_, filters) in task.rules.choiceFilters { rounds += filters.count }
        while rounds >= 0 {
            rounds -= 1
            var changed = false
            for (index, filters) in task.rules.choiceFilters {
                guard let step = task.step(at: index), let answer = answers[index] else { continue }
                for filter in filters {
                    guard let options = step.format(item: filter.item)?.rules.choiceOptions else { continue }
                    let selection = filter.item.map { answer.objectValue?[$0] } ?? answer
                    guard let selected = selection?.arrayValue, !selected.isEmpty else { continue }
                    let offered = filter.available(options, on: StoredAnswers(self))
                    var kept: [JSON] = []
                    var removed: [JSON] = []
                    for element in selected {
                        let value = element.objectValue?["value"] ?? element
                        if let i = options.index(of: value), offered[ifPresent: i] == false { removed.append(value) } else { kept.append(element) }
                    }
                    guard !removed.isEmpty else { continue }
                    var newAnswer: JSON? = kept.isEmpty ? nil : .array(kept)
                    if let item = filter.item, case .object(var object) = answer {
                        object[item] = newAnswer
                        newAnswer = .object(object)
                    }
                    answers[index] = newAnswer
                    // The audit trail records every change of an answer, this one included.
                    if audit.isOn {
                        audit.record(newAnswer == nil ? .answerCleared : .answerSet, at: now, step: index, old: answer, new: newAnswer,
                                     detail: "choicesRemoved")
                    }
                    changed = true
                    if let item = filter.item {
                        emit("choicesRemoved", ["step": .string(step.identifier), "item": .string(item), "values": .array(removed)])
                    } else {
                        emit("choicesRemoved", ["step": .string(step.identifier), "values": .array(removed)])
                    }
                    break
                }
            }
            if !changed { return }
        }
    }
}
