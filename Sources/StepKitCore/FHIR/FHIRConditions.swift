import StepKitBase

/// Translates an item's `enableWhen`, `enableBehavior` and SDC `enableWhenExpression` into a
/// StepKit predicate with FHIR's meaning exactly:
/// - `exists true/false` → `answered`;
/// - `=` → `equals` (a choice: the option is among the selected ones, `contains`);
/// - `!=` → `not` of `=`: it holds when no answer equals the value, unanswered included, as FHIR says;
/// - `> < >= <=` → `exclusiveMinimum`, `exclusiveMaximum`, `minimum`, `maximum` on numbers,
///   dates and times; on strings the expression language's `> < >= <=` (code-point order, false
///   while unanswered);
/// - `enableBehavior` `all`/`any` → `all`/`any`;
/// - `enableWhenExpression` → its translation (`FHIRCalculations.condition`), with `all` beside
///   any `enableWhen`.
/// A condition whose answer can never match the question (another type, a code not among the
/// options) is kept with FHIR's result — `=` never holds, `!=` always does — and reported. An
/// item with a condition StepKit cannot express is **declined**: left out of the task with its
/// descendants and reported (`declined` lists it), never shown as if it had no condition.
final class FHIRConditions {
    let index: FHIRItemIndex
    let prepared: [String: FHIRPrepared]
    /// Where each asked item's answer is: its step, and its form item if any.
    let locations: [String: (step: String, item: String?)]
    let diagnostics: Diagnostics
    let report: FHIRReport
    let calculations: FHIRCalculations
    /// The variables in scope on each item (its own included).
    let scopes: [String: [String: FHIRCalculations.Value]]
    /// The repeating groups: how an item inside one is read from the item the condition is on.
    var blocks = FHIRBlocks()
    /// The items declined, in document order, each with its report entry.
    private(set) var declined: [(linkId: String, entry: FHIRReportEntry)] = []

    private static let operators: Set<String> = ["exists", "=", "!=", ">", "<", ">=", "<="]

    init(index: FHIRItemIndex, prepared: [String: FHIRPrepared], locations: [String: (step: String, item: String?)],
         diagnostics: Diagnostics, report: FHIRReport, calculations: FHIRCalculations,
         scopes: [String: [String: FHIRCalculations.Value]]) {
        self.index = index
        self.prepared = prepared
        self.locations = locations
        self.diagnostics = diagnostics
        self.report = report
        self.calculations = calculations
        self.scopes = scopes
    }

    private func decline(_ item: FHIRItem, _ path: JSONPath, _ code: String, _ why: String) {
        let entry = FHIRConditions.entry(item, path, code, why)
        report.add(entry.linkId, entry.path, entry.code, entry.reason)
        declined.append((item.linkId, entry))
    }

    private static func entry(_ item: FHIRItem, _ path: JSONPath, _ code: String, _ why: String) -> FHIRReportEntry {
        FHIRReportEntry(linkId: item.linkId, path: path, code: code,
                        reason: why + " The item is declined: it is left out" + (item.children.isEmpty ? "." : " with the items under it."))
    }

    /// The entry of an item declined because its `enableWhen[index]` reads `linkId`, no longer
    /// asked; a negative index: its enableWhenExpression (extension `-1 - index`) reads it.
    static func unaskedEntry(_ item: FHIRItem, enableWhen index: Int, reads linkId: String) -> FHIRReportEntry {
        if index < 0 {
            return entry(item, item.path.key("extension").index(-1 - index), "conditionOnUnaskedItem",
                         "The enableWhenExpression reads \"\(linkId)\", which is not asked.")
        }
        return entry(item, item.path.key("enableWhen").index(index).key("question"), "conditionOnUnaskedItem",
                     "The condition reads \"\(linkId)\", which is not asked.")
    }

    /// The item's own condition; nil when it has none.
    func condition(_ item: FHIRItem) -> JSON? {
        guard let value = item.object["enableWhen"] else {
            if item.object["enableBehavior"] != nil {
                report.add(item.linkId, item.path.key("enableBehavior"), "unusedKey", "enableBehavior without enableWhen has no effect.")
            }
            return nil
        }
        let path = item.path.key("enableWhen")
        guard case .array(let list) = value, !list.isEmpty else {
            diagnostics.error("wrongType", "\"enableWhen\" must be a non-empty array.", at: path)
            return nil
        }
        var behavior = "all"
        switch item.object["enableBehavior"] {
        case .string(let b)? where b == "all" || b == "any": behavior = b
        case nil:
            if list.count > 1 {
                report.add(item.linkId, item.path.key("enableBehavior"), "missingEnableBehavior",
                           "Several enableWhen conditions without enableBehavior: read as \"all\".")
            }
        default:
            diagnostics.error("invalidValue", "\"enableBehavior\" must be \"all\" or \"any\".", at: item.path.key("enableBehavior"))
        }
        var parts: [JSON] = []
        let before = declined.count
        for (i, entry) in list.enumerated() {
            if let p = one(entry, item, at: path.index(i)) { parts.append(p) }
        }
        // A part left out (reported, declined) or malformed (a definition error): no condition.
        guard declined.count == before, parts.count == list.count else { return nil }
        return parts.count == 1 ? parts[0] : .object([behavior: .array(parts)])
    }

    /// The item's condition: its `enableWhen` and its `enableWhenExpression`, both holding;
    /// nil when it has neither, or when the item is declined (`declined` says so).
    func enabling(_ item: FHIRItem) -> JSON? {
        let before = declined.count
        var parts: [JSON] = []
        if let c = condition(item) { parts.append(c) }
        if let (text, path) = FHIRCalculations.expression(of: item, url: FHIRCalculations.enableWhenURL) {
            if let c = calculations.condition(text, variables: scopes[item.linkId] ?? [:], context: item.linkId) {
                parts.append(c)
            } else if declined.count == before {
                if let unasked = FHIRCalculations.linkIds(in: text).first(where: { index.items[$0] != nil && locations[$0] == nil }) {
                    decline(item, path, "conditionOnUnaskedItem", "The enableWhenExpression reads \"\(unasked)\", which is not asked.")
                } else {
                    decline(item, path, "conditionNotTranslated",
                            "The enableWhenExpression is outside the FHIRPath subset StepKit translates (docs/fhir.md).")
                }
            }
        }
        guard declined.count == before, !parts.isEmpty else { return nil }
        return parts.count == 1 ? parts[0] : .object(["all": .array(parts)])
    }

    private func one(_ value: JSON, _ item: FHIRItem, at path: JSONPath) -> JSON? {
        guard let o = value.objectValue else {
            diagnostics.error("wrongType", "An enableWhen must be an object.", at: path)
            return nil
        }
        var ok = true
        let questionId = o["question"]?.stringValue
        let question = questionId.flatMap { index.items[$0] }
        if questionId == nil {
            diagnostics.error("missingKey", "The enableWhen has no question.", at: path.key("question")); ok = false
        } else if question == nil {
            diagnostics.error("unknownQuestion", "No item has the linkId \"\(questionId ?? "")\".", at: path.key("question")); ok = false
        }
        let op = o["operator"]?.stringValue ?? ""
        if !FHIRConditions.operators.contains(op) {
            diagnostics.error("invalidOperator", "\"operator\" must be one of exists, =, !=, >, <, >=, <=.", at: path.key("operator")); ok = false
        }
        let answer = FHIRExtension.value(o, prefix: "answer")
        if answer == nil {
            diagnostics.error("missingAnswer", "The enableWhen has no answer[x].", at: path); ok = false
        }
        guard ok, let question, let (kind, operand) = answer else { return nil }
        let answerPath = path.key("answer" + kind)
        if question.linkId == item.linkId {
            diagnostics.error("selfReference", "An item cannot be enabled by its own answer.", at: path.key("question"))
            return nil
        }
        guard let location = locations[question.linkId] else {
            // The same entry as `unaskedEntry` (the importer's shortcut for chains).
            decline(item, path.key("question"), "conditionOnUnaskedItem",
                    "The condition reads \"\(question.linkId)\", which is not asked.")
            return nil
        }
        let selector = blocks.selector(question.linkId, location: location, context: item.linkId)
        func compare(_ key: String, _ v: JSON) -> JSON { .object(["result": selector, key: v]) }
        let never: JSON = .object(["always": .bool(op == "!=")])
        func mismatch(_ why: String) -> JSON {
            report.add(item.linkId, answerPath, "conditionNeverMatches", why + " The condition " + (op == "!=" ? "always holds." : "never holds."))
            return never
        }
        func leftOut(_ why: String) -> JSON? {
            decline(item, answerPath, "conditionNotTranslated", why)
            return nil
        }

        if op == "exists" {
            guard case .bool(let b) = operand, kind == "Boolean" else { return leftOut("exists needs answerBoolean.") }
            return compare("answered", .bool(b))
        }
        let prep = prepared[question.linkId]
        // Choices: match the option.
        if let choices = prep?.choices {
            guard let choice = choices.first(where: { $0.matches(kind: kind, operand) }) else {
                if choices.contains(where: { $0.kind == kind }) {
                    return mismatch("answer\(kind) \(JSONWriter.string(operand)) is not among the options of \"\(question.linkId)\".")
                }
                return mismatch("answer\(kind) cannot match the \(choices.first?.kind ?? "") options of \"\(question.linkId)\".")
            }
            switch op {
            case "=": return compare("contains", choice.value)
            case "!=": return .object(["not": compare("contains", choice.value)])
            default: return leftOut("Ordering choices (\(op)) is not supported.")
            }
        }
        let ordering: [String: String] = [">": "exclusiveMinimum", "<": "exclusiveMaximum", ">=": "minimum", "<=": "maximum"]
        func equality(_ v: JSON) -> JSON {
            switch op {
            case "=": return compare("equals", v)
            case "!=": return .object(["not": compare("equals", v)])
            default: return compare(ordering[op] ?? "equals", v)
            }
        }
        switch (question.type, kind) {
        case ("boolean", "Boolean"):
            guard operand.boolValue != nil else { return mismatch("answerBoolean is not true or false.") }
            guard op == "=" || op == "!=" else { return mismatch("Booleans have no order.") }
            return equality(operand)
        case ("integer", "Integer"), ("integer", "Decimal"), ("decimal", "Integer"), ("decimal", "Decimal"):
            guard let n = operand.numericValue, n.isFinite else { return mismatch("answer\(kind) is not a number.") }
            if prep?.format?.objectValue?["type"]?.stringValue == "scale" || question.type == "integer", n != n.rounded() {
                if op == "=" || op == "!=" { return mismatch("A whole-number answer never equals \(n).") }
            }
            return equality(operand)
        case ("date", "Date"), ("dateTime", "DateTime"), ("dateTime", "Date"):
            guard let s = operand.stringValue, CalendarValue.parse(s) != nil || PartialDate.parse(s) != nil,
                  question.type == "dateTime" || CalendarValue.parse(s)?.isDateTime != true else {
                return leftOut("answer\(kind) \(JSONWriter.string(operand)) is not a date.")
            }
            // The expression language's comparison: answers and values at reduced precision
            // (2021, 2021-05) compare as far as both go, as FHIRPath's dates do, and not beyond.
            let names = ["=": "==", "!=": "==", ">": ">", "<": "<", ">=": ">=", "<=": "<="]
            let compared = JSON.object([names[op] ?? "==": .array([.object(["answer": selector]), operand])])
            return op == "!=" ? .object(["not": .array([compared])]) : compared
        case ("time", "Time"):
            guard let s = operand.stringValue, let seconds = FHIRConditions.seconds(s) else { return mismatch("answerTime is not a time.") }
            // Answers are hh:mm:ss, as R4's time: compared to the second.
            return equality(.string(FHIRConditions.timeText(seconds)))
        case ("string", "String"), ("text", "String"), ("url", "Uri"), ("url", "String"), ("choice", "String"), ("open-choice", "String"):
            guard operand.stringValue != nil else { return mismatch("answer\(kind) is not a string.") }
            guard op == "=" || op == "!=" else {
                guard prep?.choices == nil else { return leftOut("Ordering a choice's strings (\(op)) is not supported.") }
                // Code-point order, false while unanswered (FHIR: no answer, not enabled).
                return .object([op: .array([.object(["answer": selector]), operand])])
            }
            return equality(operand)
        case ("quantity", _), ("choice", "Coding"), ("open-choice", "Coding"):
            return leftOut("A \(question.type) question compared with answer\(kind) is not supported.")
        default:
            return mismatch("answer\(kind) cannot match a \(question.type) question.")
        }
    }

    /// `HH:mm:ss` of seconds since midnight.
    static func timeText(_ seconds: Int) -> String {
        func two(_ n: Int) -> String { (n < 10 ? "0" : "") + String(n) }
        return two(seconds / 3600) + ":" + two(seconds / 60 % 60) + ":" + two(seconds % 60)
    }

    /// Seconds since midnight of `HH:mm:ss`, or nil.
    static func seconds(_ s: String) -> Int? {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.count <= 3 else { return nil }
        guard let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m) else { return nil }
        var sec = 0
        if parts.count == 3 {
            guard let d = Double(parts[2]), d >= 0, d < 60 else { return nil }
            sec = Int(d)
        }
        return h * 3600 + m * 60 + sec
    }
}

extension CalendarValue {
    /// A plain date (`YYYY-MM-DD`), not a date-time.
    var isDate: Bool {
        if case .date = self { return true }
        return false
    }
}
