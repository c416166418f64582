import StepKitBase

/// `choicesFrom`: a choice list taken from an earlier question's answer — the choices chosen
/// there, or the ones not chosen (SurveyJS's `choicesFromQuestion`, ODK's `choice_filter`).
struct ChoiceSource: Sendable, Equatable {
    let step: String
    /// A form item of that step, or nil for a question step.
    let item: String?
    /// true: the choices chosen there are offered; false: the ones not chosen.
    let chosen: Bool

    static func parse(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> ChoiceSource? {
        guard let r = FieldReader(value, at: path, d, what: "\"choicesFrom\"") else { return nil }
        let step = r.string("step", required: true, nonEmpty: true)
        let item = r.string("item", nonEmpty: true)
        let which = r.choice("which", of: ["chosen", "notChosen"], required: true)
        r.finish()
        guard let step, let which else { return nil }
        return ChoiceSource(step: step, item: item, chosen: which == "chosen")
    }
}

/// The conditions on one choice list of a step (the question's own, or a form item's): the
/// choices' `visibleWhen` and the list's `choicesFrom`. A choice is available while its
/// condition holds and its source offers it (`Session+Choices.swift`).
struct ChoiceFilter: Sendable {
    /// The form item whose list it is; nil for a question step.
    let item: String?
    /// Choice index → its `visibleWhen`.
    let conditions: [Int: Predicate]
    /// The step (index) and item the choices come from, and which of them.
    let source: (step: Int, item: String?, chosen: Bool)?
}

extension TaskCompiler {
    /// A choice format that names `choicesFrom` and lists no `textChoices` of its own takes the
    /// source's choices (their texts, values, pinning; not their conditions), which the source,
    /// being earlier, has already compiled.
    static func withSourceChoices(_ format: JSON, _ b: Builder) -> JSON {
        guard case .object(var object) = format, object["textChoices"] == nil,
              let from = object["choicesFrom"]?.objectValue, let id = from["step"]?.stringValue,
              let index = b.stepIndex[id], let step = b.steps[ifPresent: index],
              let source = step.format(item: from["item"]?.stringValue),
              case .array(let choices)? = source.presentation["textChoices"] else { return format }
        object["textChoices"] = .array(choices.map { choice in
            guard case .object(var fields) = choice else { return choice }
            fields["visibleWhen"] = nil
            return .object(fields)
        })
        return .object(object)
    }

    /// Compiles every choice list's `visibleWhen` and `choicesFrom` once every step is known.
    static func compileChoiceFilters(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for (index, step) in b.steps.enumerated() {
            var lists: [(item: String?, format: AnswerFormat, path: JSONPath)] = []
            switch step.content {
            case .message: break
            case .question(let format): lists.append((nil, format, step.definitionPath.key("answerFormat")))
            case .form(let form):
                for (i, item) in form.items.enumerated() {
                    lists.append((item.identifier, item.format, step.definitionPath.key("formItems").index(formEntry(of: item.identifier, in: step) ?? i).key("answerFormat")))
                }
            }
            for list in lists {
                guard let options = list.format.rules.choiceOptions else { continue }
                var conditions: [Int: Predicate] = [:]
                for (i, option) in options.enumerated() {
                    guard let value = option.visibleWhen else { continue }
                    if let predicate = predicates.compile(value, at: list.path.key("textChoices").index(i).key("visibleWhen")) {
                        conditions[i] = predicate
                    }
                }
                var source: (step: Int, item: String?, chosen: Bool)?
                if let from = list.format.rules.choiceSource {
                    let path = list.path.key("choicesFrom")
                    if let at = b.stepIndex[from.step], at < index, let other = b.steps[ifPresent: at] {
                        if other.format(item: from.item)?.rules.choiceOptions == nil {
                            b.d.error("invalidReference", "\"choicesFrom\" names \"\(from.step)\"\(from.item.map { " item \"\($0)\"" } ?? ""), which is not a choice question.", at: path)
                        } else {
                            source = (at, from.item, from.chosen)
                        }
                    } else {
                        b.d.error("invalidReference", "\"choicesFrom\" names \"\(from.step)\", which is not a step before this one.", at: path.key("step"))
                    }
                }
                if !conditions.isEmpty || source != nil {
                    rules.choiceFilters[index, default: []].append(ChoiceFilter(item: list.item, conditions: conditions, source: source))
                }
            }
        }
    }

    /// Where a form item is among the step's `formItems` (section headers count).
    private static func formEntry(of item: String, in step: Step) -> Int? {
        step.presentation["formItems"]?.arrayValue?.firstIndex { $0.objectValue?["identifier"]?.stringValue == item }
    }
}
