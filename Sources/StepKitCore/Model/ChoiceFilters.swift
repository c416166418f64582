import StepKitBase

/// `choicesFrom`: a choice list taken from an earlier question's answer — the choices chosen
/// there, or the ones not chosen (SurveyJS's `choicesFromQuestion`, ODK's `choice_filter`).
struct ChoiceSource: Sendable, Equatable {
    let step: String
    /// A form item of that step, or nil for a question step.
    let item: String?
    /// true: the choices chosen there are offered; false: the ones not chosen.
    let chosen: Bool
    /// A step of a repeating section read in one instance, as an expression reads it
    /// (`{"section", "step", "item", "index"}`): the section's name and the instance's index
    /// as written (checked where the list compiles).
    var section: String? = nil
    var index: JSON? = nil

    static func parse(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> ChoiceSource? {
        guard let r = FieldReader(value, at: path, d, what: "\"choicesFrom\"") else { return nil }
        let step = r.string("step", required: true, nonEmpty: true)
        let item = r.string("item", nonEmpty: true)
        let which = r.choice("which", of: ["chosen", "notChosen"], required: true)
        let section = r.value("section")
        let index = r.value("index")
        r.finish()
        guard let step, let which else { return nil }
        // The section's name is checked with the read (a wrong type is reported there).
        return ChoiceSource(step: step, item: item, chosen: which == "chosen", section: section.map { $0.stringValue ?? "" }, index: index)
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
    /// The step (index) and item the choices come from, which of them, and the read of its
    /// answer (a repeating section's step: in the instance the participant is in, or at an
    /// index: `TaskCompiler.sourceRead`).
    let source: (step: Int, item: String?, chosen: Bool, read: Selector)?
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
    /// Most lists have neither: a list's path is made only for one that has something to
    /// compile (making it for every list was most of this pass: `benchmarks/README.md`).
    static func compileChoiceFilters(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for (index, step) in b.steps.enumerated() {
            switch step.content {
            case .message: break
            case .question(let format):
                compileChoiceFilter(item: nil, format: format, index: index, b, predicates, &rules) {
                    step.definitionPath.key("answerFormat")
                }
            case .form(let form):
                for (i, item) in form.items.enumerated() {
                    compileChoiceFilter(item: item.identifier, format: item.format, index: index, b, predicates, &rules) {
                        step.definitionPath.key("formItems").index(formEntry(of: item.identifier, in: step) ?? i).key("answerFormat")
                    }
                }
            }
        }
    }

    /// One choice list's filter (`item`'s, nil for a question step's), its path (the format's)
    /// made only when the list has a condition or a source.
    private static func compileChoiceFilter(item: String?, format: AnswerFormat, index: Int, _ b: Builder, _ predicates: PredicateCompiler,
                                            _ rules: inout TaskRules, path listPath: () -> JSONPath) {
        let rulesOfFormat = format.rules
        guard let options = rulesOfFormat.choiceOptions else { return }
        let from = rulesOfFormat.choiceSource
        guard from != nil || options.contains(where: { $0.visibleWhen != nil }) else { return }
        let formatPath = listPath()
        var conditions: [Int: Predicate] = [:]
        for (i, option) in options.enumerated() {
            guard let value = option.visibleWhen else { continue }
            if let predicate = predicates.scope.owned(by: index, { predicates.compile(value, at: formatPath.key("textChoices").index(i).key("visibleWhen")) }) {
                conditions[i] = predicate
            }
        }
        var source: (step: Int, item: String?, chosen: Bool, read: Selector)?
        if let from {
            let path = formatPath.key("choicesFrom")
            if let at = b.stepIndex[from.step], at < index, let other = b.steps[ifPresent: at] {
                if other.format(item: from.item)?.rules.choiceOptions == nil {
                    b.d.error("invalidReference", "\"choicesFrom\" names \"\(from.step)\"\(from.item.map { " item \"\($0)\"" } ?? ""), which is not a choice question.", at: path)
                } else if let read = sourceRead(from, source: at, reader: index, predicates, at: path) {
                    source = (at, from.item, from.chosen, read)
                }
            } else {
                b.d.error("invalidReference", "\"choicesFrom\" names \"\(from.step)\", which is not a step before this one.", at: path.key("step"))
            }
        }
        if !conditions.isEmpty || source != nil {
            rules.choiceFilters[index, default: []].append(ChoiceFilter(item: item, conditions: conditions, source: source))
        }
    }

    /// The read of a `choicesFrom` source's answer (of step `source`, for a list of step
    /// `reader`), scoped as an expression's read of it is (docs/expressions.md, "Repeating
    /// sections of steps"): a step of a repeating section is read in the instance the
    /// participant is in from a step of the same section; named with `"section"` and `"index"`
    /// (checked as that read is: `PredicateCompiler.sectionSelector`), in that instance from
    /// anywhere; plainly from anywhere else, no instance is meant: refused (`outsideInstance`).
    /// A list of choices comes from one answer, so no aggregate is offered.
    private static func sourceRead(_ from: ChoiceSource, source: Int, reader: Int, _ predicates: PredicateCompiler,
                                   at path: JSONPath) -> Selector? {
        let plain: Selector = from.item.map { .item(step: source, item: $0) } ?? .step(source)
        let sections = predicates.repeatingSections
        let n = sections.block(of: source)
        if from.index != nil || from.section != nil {
            guard from.section != nil else {
                if let n {
                    predicates.diagnostics.error("missingKey", "Name the repeating section with the index: {\"section\": \"\(sections.entries[n].identifier)\", \"step\": \"\(from.step)\", \"index\": ...}.", at: path)
                } else {
                    predicates.diagnostics.error("notABlock", "\"index\" names an instance of a repeating section; \"\(from.step)\" is in none: drop \"index\".", at: path.key("index"))
                }
                return nil
            }
            var o = JSONObject(["section": from.section.map { JSON.string($0) } ?? .null, "step": .string(from.step)])
            if let item = from.item { o["item"] = .string(item) }
            if let index = from.index { o["index"] = index }
            return predicates.scope.owned(by: reader) { predicates.sectionSelector(o, at: path) }?.selector
        }
        guard let n, !sections.entries[n].contains(reader) else { return plain }
        let name = sections.entries[n].identifier
        predicates.diagnostics.error("outsideInstance",
                                     "\"choicesFrom\" reads \"\(from.step)\" of the repeating section \"\(name)\" outside its instances, where no instance of it is meant: name one, {\"section\": \"\(name)\", \"step\": \"\(from.step)\", \"index\": 0, \"which\": \"\(from.chosen ? "chosen" : "notChosen")\"} (a list of choices comes from one answer, not from every instance).",
                                     at: path)
        return nil
    }

    /// Where a form item is among the step's `formItems` (section headers count).
    private static func formEntry(of item: String, in step: Step) -> Int? {
        step.presentation["formItems"]?.arrayValue?.firstIndex { $0.objectValue?["identifier"]?.stringValue == item }
    }
}
