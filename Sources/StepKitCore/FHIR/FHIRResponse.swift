import StepKitBase

/// A session's answers as a FHIR R4 `QuestionnaireResponse`: items nested as the
/// Questionnaire's groups, answers typed as the items are, items that are disabled (hidden by
/// their conditions, off the path, unanswered) absent, hidden and read-only items with their
/// initial answers where they are enabled.
extension Session {
    package func fhirResponse(_ layout: FHIRLayout) -> JSON {
        var r = JSONObject(["resourceType": .string("QuestionnaireResponse")])
        if let q = layout.questionnaire { r["questionnaire"] = .string(q) }
        let status: String
        switch finishReason {
        case .completed?: status = "completed"
        // A run not finished, or saved to be resumed, is still being filled in; one discarded,
        // failed or ended early was abandoned (R4's `stopped`). Only a completed run, which had
        // every required answer, is `completed`.
        case nil, .saved?: status = "in-progress"
        default: status = "stopped"
        }
        r["status"] = .string(status)
        r["authored"] = .string(CivilTime.iso8601(milliseconds: endDate ?? now))
        let items = fhirItems(layout.items)
        if !items.isEmpty { r["item"] = .array(items) }
        return .object(r)
    }

    /// The response items of `nodes` (recursion bounded by the layout's depth, itself bounded
    /// by `FHIRItem.maxDepth`).
    /// `instance`: inside a repeating group's instance, the instance's answers, which its
    /// items' answers are read from, and its position (a per-repetition calculation's value).
    private func fhirItems(_ nodes: [FHIRNode], instance: (answers: JSONObject, index: Int)? = nil) -> [JSON] {
        var result: [JSON] = []
        for node in nodes {
            var o = JSONObject(["linkId": .string(node.linkId)])
            if let text = node.text { o["text"] = .string(text) }
            if node.repeating {
                // One item per repetition, in order, each with its instance's answers; a
                // repeating group inside one (R4: its repetitions nested in each repetition of
                // the group around it) reads them from that instance.
                let repetitions = instance.map { $0.answers[node.formItem ?? node.linkId]?.arrayValue ?? [] } ?? repeatingInstances(node)
                for (k, instance) in repetitions.enumerated() {
                    let children = fhirItems(node.children, instance: (instance.objectValue ?? JSONObject(), k))
                    guard !children.isEmpty else { continue }
                    var one = o
                    one["item"] = .array(children)
                    result.append(.object(one))
                }
                continue
            }
            let children = fhirItems(node.children, instance: instance)
            switch node.type {
            case "group":
                guard !children.isEmpty else { continue }
                o["item"] = .array(children)
            case "display":
                continue
            default:
                var answers = fhirAnswers(node, instance: instance)
                if answers.isEmpty {
                    guard !children.isEmpty else { continue }
                    o["item"] = .array(children)
                } else {
                    // Items nested under a question go under its (first) answer.
                    if !children.isEmpty, case .object(var first) = answers[0] {
                        first["item"] = .array(children)
                        answers[0] = .object(first)
                    }
                    o["answer"] = .array(answers)
                }
            }
            result.append(.object(o))
        }
        return result
    }

    /// A repeating group's instances (its form item's answer), each without the items its
    /// conditions disable in that repetition; an instance nobody answered is there when a
    /// per-repetition calculation has a value in it.
    private func repeatingInstances(_ node: FHIRNode) -> [JSON] {
        guard let step = node.step, let index = task.stepIndex[step], let item = node.formItem,
              // A group its own enableWhen disables (its visibleWhen) has no repetition.
              !hasVisibilityRules(step: index) || isVisible(item, step: index) else { return [] }
        let list = answer(.item(step: index, item: item))?.value.arrayValue ?? []
        var count = list.count
        if node.hasPerRepetitionCalculation {
            let values = calculationValues()
            for name in node.perRepetitionCalculations {
                guard let i = task.calculations.index(of: name), case .array(let each)? = values[ifPresent: i]?.json else { continue }
                if let last = each.lastIndex(where: { !$0.isNull }) { count = max(count, last + 1) }
            }
        }
        let block = BlockReference.answer(step: index, item: item)
        return (0..<count).map { instanceEntry(block, $0) ?? .null }
    }

    private func fhirAnswers(_ node: FHIRNode, instance: (answers: JSONObject, index: Int)? = nil) -> [JSON] {
        if !node.fixedAnswers.isEmpty {
            if let enabled = node.enabled, !enabled.evaluate(self) { return [] }
            return node.fixedAnswers
        }
        let value: JSON
        if let name = node.calculation {
            if let enabled = node.enabled, !enabled.evaluate(self) { return [] }
            let values = calculationValues()
            guard let i = task.calculations.index(of: name), values.indices.contains(i) else { return [] }
            value = node.perRepetition ? (instance.flatMap { values[i].json.arrayValue?[ifPresent: $0.index] } ?? .null) : values[i].json
            if value.isNull { return [] }
        } else if let instance {
            guard let found = instance.answers[node.linkId], !found.isNull, !AnswerFormat.isDontKnow(found) else { return [] }
            value = found
        } else {
            guard let step = node.step, let index = task.stepIndex[step] else { return [] }
            let selector: Selector = node.formItem.map { .item(step: index, item: $0) } ?? .step(index)
            guard let (found, _) = answer(selector), !AnswerFormat.isDontKnow(found) else { return [] }
            value = found
        }
        // A repeating question: each of its answers, in order (`answer` repeated).
        if node.choices.isEmpty, node.otherValue == nil, case .array(let list) = value {
            return list.flatMap { fhirValueAnswers(node, $0) }
        }
        return fhirValueAnswers(node, value)
    }

    /// One StepKit answer of `node` as FHIR answers (a choice's selections, or one value).
    private func fhirValueAnswers(_ node: FHIRNode, _ value: JSON) -> [JSON] {
        if !node.choices.isEmpty || node.otherValue != nil {
            guard case .array(let selected) = value else { return [] }
            return selected.compactMap { element -> JSON? in
                if case .object(let other) = element, let text = other["text"]?.stringValue {
                    return .object(["valueString": .string(text)])
                }
                let v = element.objectValue?["value"] ?? element
                if let c = node.choices.first(where: { $0.value.sameValue(as: v) }) { return c.answer }
                return nil
            }
        }
        switch (node.type, value) {
        case ("boolean", .bool):
            return [.object(["valueBoolean": value])]
        case ("integer", _):
            // R4's integer is 32 bits (the format's bounds keep answers within them).
            guard let n = value.numericValue, n == n.rounded(), n >= -2_147_483_648, n <= 2_147_483_647 else { return [] }
            return [.object(["valueInteger": .int(Int64(n))])]
        case ("decimal", _):
            guard value.numericValue != nil else { return [] }
            return [.object(["valueDecimal": value])]
        case ("quantity", _):
            guard value.numericValue != nil else { return [] }
            var q = JSONObject(["value": value])
            if let unit = node.unit {
                if let d = unit["display"] ?? unit["code"] { q["unit"] = d }
                if let s = unit["system"] { q["system"] = s }
                if let c = unit["code"] { q["code"] = c }
            }
            return [.object(["valueQuantity": .object(q)])]
        case ("date", .string):
            return [.object(["valueDate": value])]
        case ("dateTime", .string(let s)):
            return [.object(["valueDateTime": .string(Session.fhirDateTime(s))])]
        case ("time", .string(let s)):
            return [.object(["valueTime": .string(s.count == 5 ? s + ":00" : s)])]
        case ("url", .string(let s)) where !s.isEmpty:
            return [.object(["valueUri": value])]
        case (_, .string(let s)) where !s.isEmpty:
            return [.object(["valueString": value])]
        default:
            return []
        }
    }

    /// FHIR's dateTime needs seconds when it has a time: `2026-01-02T10:30Z` → `2026-01-02T10:30:00Z`.
    static func fhirDateTime(_ s: String) -> String {
        let b = Array(s.utf8)
        guard b.count > 16, b[10] == UInt8(ascii: "T"), b[16] != UInt8(ascii: ":") else { return s }
        return String(decoding: b[0..<16], as: UTF8.self) + ":00" + String(decoding: b[16...], as: UTF8.self)
    }
}
