import StepKitBase

// Form steps: their items, section headers and confirmations.

extension TaskCompiler {
    /// A form item's display texts, read once, not made per item (an array literal is allocated
    /// on each call).
    private static let formItemTexts = ["detailText", "placeholder", "learnMoreText"]

    static func compileForm(_ entries: [JSON], at path: JSONPath, stepIndex: Int, _ b: Builder) -> Form? {
        let d = b.d
        let before = d.problems.count
        var items: [Form.Item] = []
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        items.reserveCapacity(entries.count)
        // Section headers with a `visibleWhen`, each with the items up to the next header.
        var headers: [(entry: Int, title: String, items: [String], value: JSON, path: JSONPath)] = []
        var underHeader = false
        for (i, entry) in entries.enumerated() {
            let itemPath = path.index(i)
            guard let r = FieldReader(entry, at: itemPath, d, what: "a form item") else { continue }
            if r.has("sectionTitle") && !r.has("identifier") {
                let title = r.string("sectionTitle", required: true)
                _ = r.string("detailText")
                let visibleWhen = r.value("visibleWhen")
                r.finish()
                underHeader = visibleWhen != nil
                if let visibleWhen { headers.append((i, title ?? "", [], visibleWhen, itemPath.key("visibleWhen"))) }
                continue
            }
            let identifier = r.string("identifier", required: true, nonEmpty: true)
            let optional = r.bool("optional") ?? false
            let text = r.string("text")
            r.accept(strings: formItemTexts)
            // Kept in place when the form's items are shuffled (`shuffleItems`); read from the
            // presentation by `Randomization`.
            _ = r.bool("pinned")
            // `repeat`: a repeating group (with `items`) or a repeating question (`RepeatingFormat`).
            let repeatValue = r.value("repeat")
            let groupItems = repeatValue == nil ? nil : r.array("items")
            var format = groupItems != nil ? nil
                : r.value("answerFormat", required: true).map { withSourceChoices($0, b) }.flatMap { AnswerFormat.compile($0, at: itemPath.key("answerFormat"), d) }
            if let repeatValue, groupItems != nil || format != nil {
                format = repeatingFormat(repeatValue, groupItems: groupItems, single: format, at: itemPath, stepIndex: stepIndex, item: identifier, b)
            }
            let visibleWhen = r.value("visibleWhen")
            let initial = r.value("initial")
            r.finish()
            guard let identifier, let format else { continue }
            if let initial { b.pendingInitials.append((stepIndex, identifier, initial, itemPath.key("initial"))) }
            if index[identifier] != nil {
                d.error("duplicateIdentifier", "Another item of this form is already called \"\(identifier)\".", at: itemPath.key("identifier"))
                continue
            }
            if let visibleWhen {
                b.pendingVisibility.append((stepIndex, identifier, visibleWhen, itemPath.key("visibleWhen")))
            }
            index[identifier] = items.count
            if underHeader, !headers.isEmpty { headers[headers.count - 1].items.append(identifier) }
            let label = (text?.isEmpty ?? true) ? identifier : (text ?? identifier)
            items.append(Form.Item(identifier: identifier, optional: optional, format: format, label: label))
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
        for header in headers {
            b.pendingHeaders.append((stepIndex, header.entry, header.title, header.items, header.value, header.path))
        }
        return Form(items: items, itemIndex: index)
    }
}
