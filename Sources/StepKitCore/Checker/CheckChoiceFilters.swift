import StepKitBase

extension TaskChecker {
    /// A filtered choice list (`visibleWhen` on choices, `choicesFrom`) that can be left with no
    /// choice: every choice has a condition; its choices are the ones chosen in an optional
    /// source (which may be unanswered); or the ones not chosen in a multiple-choice source
    /// (which may have every choice chosen). A warning: the task still runs — a question (or
    /// item) that offers no choice is not required, and the participant goes on without
    /// answering it — but the author may rather pass it over (a skip rule, `visibleWhen`).
    mutating func checkChoiceFilters() {
        for (index, filters) in task.rules.choiceFilters {
            guard let step = task.step(at: index) else { continue }
            for filter in filters {
                guard let options = step.format(item: filter.item)?.rules.choiceOptions else { continue }
                var why: String?
                if options.indices.allSatisfy({ filter.conditions[$0] != nil }) {
                    why = "every choice has a \"visibleWhen\""
                } else if let source = filter.source, let sourceStep = task.step(at: source.step) {
                    let sourceFormat = sourceStep.format(item: source.item)
                    let sourceOptional = source.item.flatMap { item in
                        if case .form(let form) = sourceStep.content { return form.item(item)?.optional }
                        return nil
                    } ?? sourceStep.optional
                    if source.chosen && sourceOptional {
                        why = "its choices are those chosen in \"\(sourceStep.identifier)\", which may be left unanswered"
                    } else if !source.chosen && sourceFormat?.rules.allowsMultipleChoices == true {
                        why = "its choices are those not chosen in \"\(sourceStep.identifier)\", where every choice may be chosen"
                    }
                }
                guard let why else { continue }
                let itemOptional: Bool = filter.item.flatMap { item in
                    if case .form(let form) = step.content { return form.item(item)?.optional }
                    return nil
                } ?? step.optional
                var path = stepPath(index)
                if let item = filter.item { path = path.key(item) }
                let name = filter.item.map { "The item \"\($0)\" of \"\(step.identifier)\"" } ?? "The question \"\(step.identifier)\""
                report(.warning, "choicesMayRunOut",
                       "\(name) can be left with no choice to offer: \(why)."
                           + (itemOptional ? "" : " It is required: with no choice offered, the participant goes on without answering it."), at: path)
            }
        }
    }
}
