import StepKitBase

/// Which choices of a list are offered now: every choice whose `visibleWhen` holds and, for a
/// list with `choicesFrom`, that its source offers (chosen there, or not chosen there). The one
/// place that decides it: the state lists these, `Task.accept` accepts only these, and a
/// selection that stops being one of these is removed (`Session+Choices.swift`).
extension ChoiceFilter {
    /// For each choice of `options`, whether it is offered on `answers`.
    func available(_ options: [ChoiceOption], on answers: some AnswerLookup) -> [Bool] {
        var offered = [Bool](repeating: true, count: options.count)
        if let source {
            let chosen = (answers.answerValue(source.read)?.arrayValue ?? []).map { $0.objectValue?["value"] ?? $0 }
            for (i, option) in options.enumerated() {
                let isChosen = chosen.contains { $0.sameValue(as: option.value) }
                offered[i] = isChosen == source.chosen
            }
        }
        for (i, condition) in conditions where offered.indices.contains(i) && offered[i] {
            offered[i] = condition.evaluate(answers)
        }
        return offered
    }
}

extension Task {
    /// The filter of a step's choice list (the question's, or a form item's), if it has one.
    func choiceFilter(step index: Int, item: String?) -> ChoiceFilter? {
        rules.choiceFilters[index]?.first { $0.item == item }
    }

    /// The problems of an answer that selects a choice not offered now (`Task.accept`'s
    /// `availableChoices` part): one per list, naming the first such choice.
    func unavailableChoiceProblems(_ value: JSON?, step index: Int, on answers: some AnswerLookup) -> [Problem] {
        guard let filters = rules.choiceFilters[index], let step = step(at: index), let value else { return [] }
        var problems: [Problem] = []
        for filter in filters {
            guard let options = step.format(item: filter.item)?.rules.choiceOptions else { continue }
            let selection = filter.item.map { value.objectValue?[$0] } ?? value
            guard let selected = selection?.arrayValue, !selected.isEmpty else { continue }
            let offered = filter.available(options, on: answers)
            for element in selected {
                let chosen = element.objectValue?["value"] ?? element
                guard let i = options.index(of: chosen), !offered[i] else { continue }
                let path: JSONPath = filter.item.map { JSONPath.root.key($0) } ?? .root
                problems.append(Problem(code: "unavailableChoice", message: "\"\(options[i].text)\" is not offered now; choose one of the choices shown.", path: path, item: filter.item))
                break
            }
        }
        return problems
    }
}
