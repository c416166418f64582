/// Turns a task definition (JSON) into a `Task`, or reports every problem it has at once.
enum TaskCompiler {
    private static let commonStepKeys = ["title", "text", "detailText", "footnote"]
    private static let stepTypes = ["instruction", "completion", "question", "form"]
    private static let laterStepTypes = ["active", "countdown", "wait", "section", "review", "page", "consentReview", "signature", "table"]

    static func compile(_ definition: JSON) throws(StepKitError) -> Task {
        let d = Diagnostics()
        guard let r = FieldReader(definition, at: .root, d, what: "a task") else {
            throw StepKitError(.definition, problems: d.problems)
        }
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        var steps: [Step] = []
        var index: [String: Int] = [:]
        if let items = r.array("steps", required: true) {
            if items.isEmpty {
                d.error("emptySteps", "A task needs at least one step.", at: .root.key("steps"))
            }
            // Identifiers are checked for duplicates even on steps with other problems.
            var seen: Set<String> = []
            for (i, item) in items.enumerated() {
                let path = JSONPath.root.key("steps").index(i)
                let step = compileStep(item, at: path, d)
                if let id = item.objectValue?["identifier"]?.stringValue, !seen.insert(id).inserted {
                    d.error("duplicateIdentifier", "Another step is already called \"\(id)\".", at: path.key("identifier"))
                    continue
                }
                guard let step else { continue }
                index[step.identifier] = steps.count
                steps.append(step)
            }
        }
        r.finish()
        guard d.isEmpty, let identifier else { throw StepKitError(.definition, problems: d.problems) }
        return Task(identifier: identifier, steps: steps, stepIndex: index)
    }

    private static func compileStep(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> Step? {
        guard let r = FieldReader(value, at: path, d, what: "a step") else { return nil }
        let before = d.problems.count
        let type = r.string("type", required: true)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        let optional = r.bool("optional") ?? false
        r.accept(strings: commonStepKeys)
        var content: Step.Content?
        switch type {
        case "instruction", "completion":
            _ = r.string("image")
            content = .message
        case "question":
            _ = r.string("placeholder")
            _ = r.string("question")
            if let format = r.value("answerFormat", required: true) {
                content = AnswerFormat.compile(format, at: path.key("answerFormat"), d).map { .question($0) }
            }
        case "form":
            _ = r.bool("useCardView")
            if let items = r.array("formItems", required: true) {
                content = compileForm(items, at: path.key("formItems"), d).map { .form($0) }
            }
        case let other?:
            let later = laterStepTypes.contains(other) ? " (\"\(other)\" steps are not supported yet)" : ""
            d.error("unknownStepType", "Unknown step type \"\(other)\"\(later); expected one of: " + stepTypes.joined(separator: ", ") + ".", at: path.key("type"))
            return nil
        case nil:
            return nil
        }
        r.finish()
        guard let type, let identifier, let content, d.problems.count == before else { return nil }
        var presentation = r.object
        presentation["optional"] = .bool(optional)
        return Step(type: type, identifier: identifier, optional: optional, content: content, presentation: presentation)
    }

    private static func compileForm(_ entries: [JSON], at path: JSONPath, _ d: Diagnostics) -> Form? {
        let before = d.problems.count
        var items: [Form.Item] = []
        var index: [String: Int] = [:]
        for (i, entry) in entries.enumerated() {
            let itemPath = path.index(i)
            guard let r = FieldReader(entry, at: itemPath, d, what: "a form item") else { continue }
            if r.has("sectionTitle") && !r.has("identifier") {
                _ = r.string("sectionTitle", required: true)
                _ = r.string("detailText")
                r.finish()
                continue
            }
            let identifier = r.string("identifier", required: true, nonEmpty: true)
            let optional = r.bool("optional") ?? false
            r.accept(strings: ["text", "detailText", "placeholder", "learnMoreText"])
            let format = r.value("answerFormat", required: true).flatMap { AnswerFormat.compile($0, at: itemPath.key("answerFormat"), d) }
            r.finish()
            guard let identifier, let format else { continue }
            if index[identifier] != nil {
                d.error("duplicateIdentifier", "Another item of this form is already called \"\(identifier)\".", at: itemPath.key("identifier"))
                continue
            }
            index[identifier] = items.count
            items.append(Form.Item(identifier: identifier, optional: optional, format: format))
        }
        if items.isEmpty && d.problems.count == before {
            d.error("emptyForm", "A form needs at least one item with an answer format.", at: path)
        }
        // A confirmation must name another item of the same form that is not a confirmation.
        for (i, entry) in entries.enumerated() {
            guard let id = entry.objectValue?["identifier"]?.stringValue, let item = index[id].map({ items[$0] }),
                  let confirm = item.format.rules as? ConfirmTextFormat else { continue }
            let target = index[confirm.originalItemIdentifier].map { items[$0] }
            if target == nil || target?.identifier == id || target?.format.rules is ConfirmTextFormat {
                d.error("unknownItem", "\"originalItemIdentifier\" must name another text item of this form; \"\(confirm.originalItemIdentifier)\" is not one.",
                        at: path.index(i).key("answerFormat").key("originalItemIdentifier"))
            }
        }
        guard d.problems.count == before else { return nil }
        return Form(items: items, itemIndex: index)
    }
}
