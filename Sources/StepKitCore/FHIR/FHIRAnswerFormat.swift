import StepKitBase

/// What one item becomes: a StepKit answer format (with the step- or item-level keys that go
/// next to it), or the reason it is not asked.
struct FHIRPrepared: Sendable {
    enum Disposition: Sendable, Equatable {
        /// A question the participant answers.
        case asked
        /// A question not shown (`questionnaire-hidden`, `readOnly`): its `initial` answers go to
        /// the response when it is enabled.
        case fixed
        case group
        case display
        /// Computed by its calculatedExpression (`FHIRCalculations`), not asked.
        case calculated
        /// Not translated (reported).
        case left
    }

    var disposition: Disposition
    var format: JSON?
    /// A repeating choice's questionnaire-minOccurs and maxOccurs: how many options it must and
    /// may have selected (`FHIRImporter.selectionValidations`).
    var selections: (minimum: Int?, maximum: Int?)?
    /// Keys beside the format: `placeholder`.
    var extra: JSONObject = JSONObject()
    var choices: [FHIRChoice]?
    /// The value of the added "other" choice of an open-choice item.
    var otherValue: JSON?
    /// For a quantity item: the unit's coding (`system`, `code`, `display`).
    var unit: JSONObject?
    /// `questionnaire-hidden` on the item or an enclosing one: never presented. A calculated or
    /// read-only item that is not hidden is shown with its value (`FHIRTaskBuilder`).
    var hidden = false
}

/// Translates an item's type, answers and SDC extensions into a StepKit answer format.
struct FHIRAnswerFormat {
    let report: FHIRReport
    let choiceReader: FHIRChoiceReader
    /// The linkIds some condition or expression of the Questionnaire reads (an enableWhen's
    /// `question`, a quoted name in an expression): a repeating group whose items one of them
    /// reads does not nest in another (expressions do not read inside an inner group).
    var readLinkIds: Set<String> = []

    /// Extensions that an item may carry which StepKit cannot honour yet, with the reason.
    private static let knownReasons: [String: String] = [
        "http://hl7.org/fhir/StructureDefinition/questionnaire-minOccurs": "minOccurs is not translated.",
        "http://hl7.org/fhir/StructureDefinition/questionnaire-maxOccurs": "maxOccurs is not translated.",
    ]

    /// `parentRepeats`: the item's parent is a repeating group imported as one (a repeating
    /// group directly inside it may nest).
    func prepare(_ item: FHIRItem, hiddenAncestor: Bool, inRepeatingGroup: Bool = false, parentRepeats: Bool = false) -> FHIRPrepared {
        let repeating = FHIRAnswerFormat.repeatTranslated(item, inRepeatingGroup: inRepeatingGroup)
            || (parentRepeats && FHIRAnswerFormat.nests(item, readLinkIds: readLinkIds))
        // A repeating choice is a multiple choice: its occurs bound how many options are selected.
        let choiceOccurs = item.repeats && item.type != "group"
            && (["choice", "open-choice"].contains(item.type) || item.object["answerOption"] != nil || item.object["answerValueSet"] != nil)
        reportExtensions(item, occursTranslated: repeating || choiceOccurs)
        reportKeys(item)
        let hidden = hiddenAncestor || FHIRExtension.isHidden(item.extensions)
        for key in ["required", "repeats", "readOnly"] {
            if let v = item.object[key], v.boolValue == nil {
                report.add(item.linkId, item.path.key(key), "invalidValue",
                           "\"\(key)\" must be true or false; \(JSONWriter.string(v)) is read as \(key == "repeats" && item.repeats ? "true" : "false").")
            }
        }
        switch item.type {
        case "group":
            var group = FHIRPrepared(disposition: .group)
            if repeating {
                group.extra["repeat"] = repeatBounds(item)
            } else if item.repeats && inRepeatingGroup {
                report.add(item.linkId, item.path.key("repeats"), "repeatingGroup",
                           "A repeating group inside a repeating group is asked once in each repetition of the group around it: it nests only directly inside that group, with questions only (no conditions, initial, read-only, hidden or calculated values, no items of their own but help texts), none of them read by a condition or an expression.")
            } else if item.repeats {
                report.add(item.linkId, item.path.key("repeats"), "repeatingGroup",
                           "A repeating group is asked once: only a group of questions (calculated ones included) without read-only or hidden items or items of their own repeats.")
            }
            return group
        case "display":
            return FHIRPrepared(disposition: hidden ? .left : .display)
        case "attachment", "reference", "question":
            report.add(item.linkId, item.path.key("type"), "unsupportedItemType", "Items of type \(item.type) are not translated. The item is declined: it is left out.")
            return FHIRPrepared(disposition: .left)
        default:
            break
        }
        var prepared = FHIRPrepared(disposition: .asked)
        prepared.choices = choiceReader.choices(for: item)
        if prepared.choices == nil, let ref = item.object["answerValueSet"]?.stringValue {
            // The answers are a value set StepKit does not have: asking free text instead
            // would take answers the form refuses and lose every condition on them.
            let why = ref.hasPrefix("#") ? "The contained value set \(ref) lists no concepts."
                                         : "The value set \(ref) is neither contained nor supplied (the import option \"valueSets\")."
            report.add(item.linkId, item.path.key("answerValueSet"), "externalValueSet",
                       why + " The item is declined: it is left out" + (item.children.isEmpty ? "." : " with the items under it."))
            return FHIRPrepared(disposition: .left)
        }
        prepared.hidden = hidden
        if FHIRCalculations.expression(of: item) != nil {
            prepared.disposition = .calculated
            return prepared
        }
        if hidden || item.readOnly {
            prepared.disposition = .fixed
            return prepared
        }
        if choiceOccurs, prepared.choices != nil {
            let occurs = "http://hl7.org/fhir/StructureDefinition/questionnaire-"
            let minimum = ext(item, occurs + "minOccurs")?.value.value.numericValue.map { Int(max(0, min($0, 1_000_000))) }
            let maximum = ext(item, occurs + "maxOccurs")?.value.value.numericValue.map { Int(max(0, min($0, 1_000_000))) }
            if minimum != nil || maximum != nil { prepared.selections = (minimum, maximum) }
        }
        if item.repeats && prepared.choices == nil && repeating {
            prepared.extra["repeat"] = repeatBounds(item)
        }
        prepared.format = format(item, &prepared)
        return prepared
    }

    /// Whether the item is imported as a repeating block (its `repeats`, minOccurs and
    /// maxOccurs translated): a repeating question (not a choice, whose repeats is a multiple
    /// choice), inside a repeating group too (several answers in each repetition), or a
    /// repeating group of questions (calculated ones included: computed per repetition; initial
    /// expressions evaluated per repetition; none with items of its own but help texts, or a
    /// read-only or hidden answer; their conditions, `enableWhen` and `enableWhenExpression`,
    /// hold per repetition; its own holds for them all), not inside another (repetitions do not
    /// nest).
    static func repeatTranslated(_ item: FHIRItem, inRepeatingGroup: Bool) -> Bool {
        guard item.repeats else { return false }
        if item.type == "group" {
            // Its own enableWhen: its step's skip rule, or its form item's visibleWhen.
            guard !inRepeatingGroup, !item.children.isEmpty else { return false }
            return item.children.allSatisfy { repeatsWith($0, depth: 1) }
        }
        return !["choice", "open-choice", "display"].contains(item.type) && item.object["answerOption"] == nil
            && item.object["answerValueSet"] == nil
    }

    /// Whether a repeating group directly inside an imported repeating group nests in it
    /// (instances inside instances: medications → doses), its minOccurs and maxOccurs bounding
    /// its repetitions in each repetition of the outer group: it has no condition of its own and
    /// holds questions only (not choices that repeat; no condition, initial value, read-only,
    /// hidden or calculated answer, no items but help texts), and no condition or expression of
    /// the Questionnaire reads it or its items (expressions do not read inside an inner group).
    static func nests(_ item: FHIRItem, readLinkIds: Set<String>) -> Bool {
        guard item.repeats, item.type == "group", !item.children.isEmpty, !hasOwnRules(item), !readLinkIds.contains(item.linkId) else { return false }
        return item.children.allSatisfy { child in
            guard !["group", "display", "attachment", "reference", "question"].contains(child.type), !hasOwnRules(child),
                  !readLinkIds.contains(child.linkId), !child.readOnly, !FHIRExtension.isHidden(child.extensions),
                  FHIRCalculations.expression(of: child) == nil, child.object["initial"] == nil,
                  FHIRCalculations.expression(of: child, url: FHIRCalculations.initialURL) == nil else { return false }
            // A repeating choice is a multiple choice; another repeating question is several answers.
            return child.children.allSatisfy { $0.type == "display" && $0.children.isEmpty }
        }
    }

    /// An item's own condition (enableWhen, or SDC's enableWhenExpression).
    private static func hasOwnRules(_ item: FHIRItem) -> Bool {
        item.object["enableWhen"] != nil || FHIRCalculations.expression(of: item, url: FHIRCalculations.enableWhenURL) != nil
    }

    /// Whether `child` can be part of each repetition of a repeating group: a question (with help
    /// texts under it at most, not read-only or hidden; repeating or not; an initial expression
    /// evaluated in each repetition), a calculated item (its calculation computed per repetition), or a group of such (its
    /// items become the repetition's, its condition theirs, and the response nests them under it
    /// in each repetition; one that repeats itself is asked once per repetition, reported).
    private static func repeatsWith(_ child: FHIRItem, depth: Int) -> Bool {
        if child.type != "group", FHIRCalculations.expression(of: child) != nil {
            return child.children.allSatisfy { $0.type == "display" && $0.children.isEmpty }
        }
        guard !child.readOnly, !FHIRExtension.isHidden(child.extensions) else { return false }
        if child.type == "group" {
            return depth < FHIRItem.maxDepth && !child.children.isEmpty
                && child.children.allSatisfy { repeatsWith($0, depth: depth + 1) }
        }
        return !["display", "attachment", "reference", "question"].contains(child.type)
            && child.children.allSatisfy { $0.type == "display" && $0.children.isEmpty }  // help texts
    }

    /// A repeating item's `repeat`: questionnaire-minOccurs (at least 1 when it is required)
    /// and questionnaire-maxOccurs, within the task format's bounds.
    private func repeatBounds(_ item: FHIRItem) -> JSON {
        let occurs = "http://hl7.org/fhir/StructureDefinition/questionnaire-"
        var bounds = JSONObject()
        let minimum = ext(item, occurs + "minOccurs")?.value.value.numericValue.map { Int(max(0, min($0, Double(RepeatBounds.limit)))) }
        let maximum = ext(item, occurs + "maxOccurs")?.value.value.numericValue.map { Int(max(1, min($0, Double(RepeatBounds.limit)))) }
        var minCount = max(minimum ?? 0, item.required ? 1 : 0)
        if let maximum { minCount = min(minCount, maximum); bounds["maxCount"] = .int(Int64(maximum)) }
        bounds["minCount"] = .int(Int64(minCount))
        return .object(bounds)
    }

    private func reportExtensions(_ item: FHIRItem, occursTranslated: Bool = false) {
        for (i, e) in item.extensions.enumerated() {
            let url = e.objectValue?["url"]?.stringValue ?? ""
            if occursTranslated, FHIRAnswerFormat.knownReasons[url] != nil { continue }
            // Calculations and the variables they read are the importer's (`FHIRImporter.calculations`).
            guard !FHIRExtension.readOnItems.contains(url), url != FHIRCalculations.url, url != FHIRCalculations.variableURL,
                  url != FHIRCalculations.enableWhenURL, url != FHIRCalculations.initialURL else { continue }
            let reason = FHIRAnswerFormat.knownReasons[url] ?? "The extension \(url) is not translated."
            report.add(item.linkId, item.path.key("extension").index(i), "unsupportedExtension", reason)
        }
    }

    /// Item keys the importer reads, or that are metadata with no behaviour (`definition`,
    /// `code`, `_text`: the rendering of the same text).
    private static let itemKeys: Set<String> = ["linkId", "type", "text", "_text", "prefix", "_prefix", "definition", "code", "item",
                                                "enableWhen", "enableBehavior", "required", "repeats", "readOnly", "maxLength",
                                                "answerOption", "answerValueSet", "initial", "extension", "id"]

    private func reportKeys(_ item: FHIRItem) {
        for key in item.object.keys where !FHIRAnswerFormat.itemKeys.contains(key) {
            report.add(item.linkId, item.path.key(key), "unsupportedKey", "The item's \"\(key)\" is not translated.")
        }
    }

    private func ext(_ item: FHIRItem, _ url: String) -> (index: Int, value: (type: String, value: JSON))? {
        guard let e = FHIRExtension.find(url, in: item.extensions), let v = FHIRExtension.value(e.object) else { return nil }
        return (e.index, v)
    }

    private func reportIgnored(_ item: FHIRItem, _ url: String, _ reason: String) {
        if let e = FHIRExtension.find(url, in: item.extensions) {
            report.add(item.linkId, item.path.key("extension").index(e.index), "extensionNotApplicable", reason)
        }
    }

    /// The item's `initial[0]` value of FHIR type `kind` (a decimal also takes a
    /// `valueInteger`); reports the rest, and a first value of another type, which the format has
    /// no starting value for (a `valueCoding` on a choice item asked as text, a `valueDate` on a
    /// `dateTime` item): an initial answer is kept or reported, never dropped silently.
    private func initial(_ item: FHIRItem, _ kind: String) -> JSON? {
        guard let list = item.object["initial"]?.arrayValue, let first = list.first?.objectValue else { return nil }
        if list.count > 1 {
            report.add(item.linkId, item.path.key("initial").index(1), "initialNotTranslated", "Only the first initial answer is used.")
        }
        if let value = first["value" + kind] ?? (kind == "Decimal" ? first["valueInteger"] : nil) { return value }
        let given = FHIRExtension.value(first).map { "value" + $0.0 } ?? "value"
        report.add(item.linkId, item.path.key("initial").index(0), "initialNotTranslated",
                   "The initial \(given) has no starting value in the \(item.type) question as StepKit asks it; it is not used.")
        return nil
    }

    private func format(_ item: FHIRItem, _ p: inout FHIRPrepared) -> JSON? {
        let control = FHIRExtension.controlCode(item.extensions)
        if let entry = ext(item, FHIRExtension.entryFormat)?.value.value.stringValue { p.extra["placeholder"] = .string(entry) }
        if let choices = p.choices { return choiceFormat(item, choices, control: control, &p) }
        if let control, !["slider", "spinner", "text-box"].contains(control) || (control == "slider" && item.type != "integer" && item.type != "decimal") {
            reportIgnored(item, FHIRExtension.itemControl, "The item control \"\(control)\" does not apply to a \(item.type) item; the default input is used.")
        }
        switch item.type {
        case "boolean":
            if item.object["initial"] != nil {
                report.add(item.linkId, item.path.key("initial"), "initialNotTranslated", "A boolean question has no starting answer in StepKit.")
            }
            return .object(["type": .string("boolean")])
        case "integer", "decimal", "quantity":
            return numericFormat(item, control: control, &p)
        case "date", "dateTime":
            // R4's date and dateTime may be a year or a month (reduced precision).
            var f = JSONObject(["type": .string("date"), "style": .string(item.type == "date" ? "date" : "dateTime"), "partial": .bool(true)])
            let kind = item.type == "date" ? "Date" : "DateTime"
            if let v = ext(item, FHIRExtension.minValue)?.value, v.type == kind { f["minimumDate"] = v.value }
            if let v = ext(item, FHIRExtension.maxValue)?.value, v.type == kind { f["maximumDate"] = v.value }
            if let v = initial(item, kind) { f["defaultDate"] = v }
            return .object(f)
        case "time":
            // R4's time has seconds (hh:mm:ss); a fraction of a second is not kept.
            var f = JSONObject(["type": .string("timeOfDay"), "seconds": .bool(true)])
            if let v = initial(item, "Time")?.stringValue, let t = FHIRConditions.seconds(v) { f["defaultComponents"] = .string(FHIRConditions.timeText(t)) }
            return .object(f)
        case "string", "text", "url", "choice", "open-choice":
            return textFormat(item, &p)
        default:
            return nil
        }
    }

    private func numericFormat(_ item: FHIRItem, control: String?, _ p: inout FHIRPrepared) -> JSON? {
        let minimum = ext(item, FHIRExtension.minValue)?.value.value.numericValue
        let maximum = ext(item, FHIRExtension.maxValue)?.value.value.numericValue
        let initialKind = item.type == "integer" ? "Integer" : (item.type == "decimal" ? "Decimal" : "Quantity")
        var start = initial(item, initialKind)
        if item.type == "quantity" { start = start?.objectValue?["value"] }
        if control == "slider", item.type == "integer", let lo = minimum, let hi = maximum {
            let step = ext(item, FHIRExtension.sliderStepValue)?.value.value.numericValue ?? 1
            if lo >= -10_000, hi <= 10_000, lo < hi, step >= 1, step == step.rounded(), lo == lo.rounded(), hi == hi.rounded(),
               (hi - lo).truncatingRemainder(dividingBy: step) == 0, (hi - lo) / step <= 13 {
                var f = JSONObject(["type": .string("scale"), "minimum": .number(lo), "maximum": .number(hi), "step": .number(step)])
                if let start { f["defaultValue"] = start }
                return .object(f)
            }
            reportIgnored(item, FHIRExtension.itemControl, "A slider needs whole bounds within ±10000 and at most 13 steps; a number field is used.")
        } else if control == "slider" {
            reportIgnored(item, FHIRExtension.itemControl, "A slider needs an integer item with minValue and maxValue; a number field is used.")
        }
        if control != "slider", ext(item, FHIRExtension.sliderStepValue) != nil {
            reportIgnored(item, FHIRExtension.sliderStepValue, "sliderStepValue applies to a slider only.")
        }
        var f = JSONObject(["type": .string("numeric"), "style": .string(item.type == "integer" ? "integer" : "decimal")])
        if item.type == "integer" {
            // R4's integer is 32 bits: -2147483648 to 2147483647, within minValue/maxValue.
            f["minimum"] = .number(max(minimum ?? -2_147_483_648, -2_147_483_648))
            f["maximum"] = .number(min(maximum ?? 2_147_483_647, 2_147_483_647))
        } else {
            if let minimum { f["minimum"] = .number(minimum) }
            if let maximum { f["maximum"] = .number(maximum) }
        }
        if let coding = ext(item, FHIRExtension.unit)?.value.value.objectValue {
            p.unit = coding
            if let u = coding["display"]?.stringValue ?? coding["code"]?.stringValue { f["unit"] = .string(u) }
        }
        if let start { f["defaultNumericAnswer"] = start }
        return .object(f)
    }

    private func textFormat(_ item: FHIRItem, _ p: inout FHIRPrepared) -> JSON {
        var f = JSONObject(["type": .string("text"), "multipleLines": .bool(item.type == "text")])
        if let n = item.object["maxLength"]?.numericValue, n >= 1, n <= 1_000_000, n == n.rounded() { f["maximumLength"] = .number(n) }
        let regex = ext(item, FHIRExtension.regex)?.value.value.stringValue
        let minLength = ext(item, FHIRExtension.minLength)?.value.value.numericValue
        if let regex {
            // FHIR's regex constrains the whole value.
            f["validationRegularExpression"] = .string("^(?:" + regex + ")$")
            f["invalidMessage"] = .string("The answer does not have the expected form.")
            if minLength != nil { reportIgnored(item, FHIRExtension.minLength, "minLength is not checked where a regex is given.") }
        } else if let minLength, minLength >= 1, minLength <= 10_000, minLength == minLength.rounded() {
            f["validationRegularExpression"] = .string("^[\\s\\S]{\(Int(minLength)),}$")
            f["invalidMessage"] = .string("Enter at least \(NumberText.count(Int(minLength), "character")).")
        }
        if let start = initial(item, item.type == "url" ? "Uri" : "String") { f["defaultTextAnswer"] = start }
        return .object(f)
    }

    private func choiceFormat(_ item: FHIRItem, _ choices: [FHIRChoice], control: String?, _ p: inout FHIRPrepared) -> JSON {
        var list = choices.map(\.json)
        let selected = choices.indices.filter { choices[$0].initiallySelected }
        let open = item.type == "open-choice"
        if open {
            // The values taken, once: a list of options named "other", "_other", "__other", …
            // made a scan of the list per underscore (issue 26, item 10).
            let taken = Set(choices.compactMap { $0.value.stringValue })
            var other = "other"
            while taken.contains(other) { other = "_" + other }
            p.otherValue = .string(other)
            list.append(.object(["text": .string("Other"), "value": .string(other), "other": .bool(true)]))
        }
        if item.object["initial"] != nil {
            report.add(item.linkId, item.path.key("initial"), "initialNotTranslated", "A choice question's initial answer is not preselected in StepKit.")
        }
        if control == "drop-down" && !item.repeats && !open && choices.count >= 1 {
            var f = JSONObject(["type": .string("valuePicker"), "textChoices": .array(list)])
            if let first = selected.first { f["defaultIndex"] = .int(Int64(first)) }
            return .object(f)
        }
        if let control, !["drop-down", "radio-button", "check-box", "list"].contains(control) {
            reportIgnored(item, FHIRExtension.itemControl, "The item control \"\(control)\" is not translated; the choices are listed.")
        }
        if !selected.isEmpty {
            report.add(item.linkId, item.path.key("answerOption"), "initialNotTranslated", "initialSelected is not preselected in StepKit.")
        }
        return .object(["type": .string("textChoice"), "style": .string(item.repeats ? "multipleChoice" : "singleChoice"),
                        "textChoices": .array(list)])
    }
}
