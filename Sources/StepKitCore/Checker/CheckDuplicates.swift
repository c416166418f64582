import StepKitBase

/// Texts that look like copy-paste mistakes: two steps with the same title and text (two forms
/// only when their items are the same too), two items of one form with the same text, two
/// choices of one answer format with the same text.
extension TaskChecker {
    mutating func checkDuplicateTexts() {
        // Per title/text/question: the first step that is not a form, and the first form with
        // each list of items. Forms that share a title but ask different items are pages of one
        // instrument ("Part 1 of 3" three times), not a copy-paste mistake.
        var firstStep: [[String]: Int] = [:]
        var firstForm: [[String]: [[String]: Int]] = [:]
        for (i, step) in task.steps.enumerated() {
            let fields = ["title", "text", "question"].map { step.presentation[$0]?.stringValue ?? "" }
            if !fields.allSatisfy(\.isEmpty) {
                let items = formItemsKey(step)
                let earlier = items.map { firstForm[fields]?[$0] ?? firstStep[fields] } ?? (firstStep[fields] ?? firstForm[fields]?.values.min())
                if let first = earlier, let other = task.step(at: first) {
                    // Two "Thank you" screens on different branches are common; questions should differ.
                    let severity: Severity = step.takesAnswers || other.takesAnswers ? .warning : .info
                    let same = items != nil && formItemsKey(other) != nil ? "the same title, text and items" : "the same title and text"
                    report(severity, "duplicateStepText",
                           "The step \"\(step.identifier)\" has \(same) as \"\(other.identifier)\": a copy-paste mistake?", at: stepPath(i))
                } else if let items {
                    firstForm[fields, default: [:]][items] = i
                } else {
                    firstStep[fields] = i
                }
            }
            checkDuplicateItems(step: i)
            if let format = step.presentation["answerFormat"] {
                checkDuplicateChoices(format, at: stepPath(i).key("answerFormat"))
            }
        }
    }

    /// A form's items as the checker compares them (each item's identifier and text, section
    /// headers' titles), nil for a step that is not a form.
    private func formItemsKey(_ step: Step) -> [String]? {
        guard case .form = step.content, let entries = step.presentation["formItems"]?.arrayValue else { return nil }
        return entries.flatMap { entry -> [String] in
            let o = entry.objectValue
            return [o?["identifier"]?.stringValue ?? "", o?["text"]?.stringValue ?? "", o?["sectionTitle"]?.stringValue ?? ""]
        }
    }

    private mutating func checkDuplicateItems(step i: Int) {
        guard let entries = task.step(at: i)?.presentation["formItems"]?.arrayValue else { return }
        var seen: [String: String] = [:]
        for (k, entry) in entries.enumerated() {
            guard let item = entry.objectValue else { continue }
            let path = stepPath(i).key("formItems").index(k)
            if let format = item["answerFormat"] { checkDuplicateChoices(format, at: path.key("answerFormat")) }
            guard let text = item["text"]?.stringValue, !text.isEmpty, let id = item["identifier"]?.stringValue else { continue }
            if let other = seen[text] {
                report(.warning, "duplicateItemText",
                       "The items \"\(other)\" and \"\(id)\" of the form \"\(task.steps[i].identifier)\" have the same text \"\(text)\": a copy-paste mistake?",
                       at: path.key("text"))
            } else {
                seen[text] = id
            }
        }
    }

    private mutating func checkDuplicateChoices(_ format: JSON, at path: JSONPath) {
        guard let object = format.objectValue else { return }
        var lists: [(JSONPath, [JSON])] = []
        for key in ["textChoices", "imageChoices"] {
            if let list = object[key]?.arrayValue { lists.append((path.key(key), list)) }
        }
        for (p, picker) in (object["valuePickers"]?.arrayValue ?? []).enumerated() {
            if let list = picker.objectValue?["textChoices"]?.arrayValue { lists.append((path.key("valuePickers").index(p).key("textChoices"), list)) }
        }
        for (listPath, list) in lists {
            var seen: Set<String> = []
            for (c, choice) in list.enumerated() {
                guard let text = choice.objectValue?["text"]?.stringValue, !text.isEmpty else { continue }
                if !seen.insert(text).inserted {
                    report(.warning, "duplicateChoiceText", "Two choices have the same text \"\(text)\": a copy-paste mistake?", at: listPath.index(c).key("text"))
                }
            }
        }
    }
}
