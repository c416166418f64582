import StepKitBase

/// Lays the Questionnaire's items out as StepKit steps:
/// - a top-level group with questions → a form step (nested groups → section headers in it);
///   one with only display items → an instruction step;
/// - a top-level question → a question step (a form step when it has questions nested under it);
/// - a top-level display item → an instruction step;
/// - a hidden group or item → nothing presented (still in the layout, so still exported);
/// - a visible calculated or read-only item → its value shown read-only: a line of its step's
///   text (piped from its calculation), or at the top level an instruction step of its own;
/// - a top-level item's `enableWhen` → a skip rule on its step; inside a form, an item's and its
///   groups' `enableWhen` → the item's `visibleWhen`.
/// Identifiers are linkIds, so the result reads as the Questionnaire does.
final class FHIRTaskBuilder {
    let index: FHIRItemIndex
    let prepared: [String: FHIRPrepared]
    let report: FHIRReport
    private(set) var locations: [String: (step: String, item: String?)] = [:]
    var conditions: [String: JSON] = [:]
    /// Calculated items' calculation names, by linkId.
    var calculationNames: [String: String] = [:]
    /// Asked items' translated `initialExpression`s, by linkId: their `initial`.
    var initialExpressions: [String: JSON] = [:]
    /// The repeating groups: a calculated item inside one is computed per repetition.
    var blocks = FHIRBlocks()

    private(set) var steps: [JSON] = []
    private(set) var skipRules = JSONObject()
    /// The visible calculated and read-only items of the step being built, as lines of its
    /// text ("Total score: {{fhir_1}}"). Not also as the step's `calculations`: a host shows
    /// those under the calculation's name (`fhir_1`), which means nothing to a participant.
    private var shownLines: [String] = []

    init(index: FHIRItemIndex, prepared: [String: FHIRPrepared], report: FHIRReport) {
        self.index = index
        self.prepared = prepared
        self.report = report
    }

    private func disposition(_ item: FHIRItem) -> FHIRPrepared.Disposition {
        prepared[item.linkId]?.disposition ?? .left
    }

    /// The asked items under `item`, in order (bounded by the nesting limit).
    private func askedDescendants(_ item: FHIRItem) -> [FHIRItem] {
        var result: [FHIRItem] = []
        for child in item.children {
            if disposition(child) == .asked { result.append(child) }
            result += askedDescendants(child)
        }
        return result
    }

    /// First pass: where each asked item's answer will be.
    func assignLocations(_ top: [FHIRItem]) {
        for item in top {
            let below = askedDescendants(item)
            switch disposition(item) {
            case .group:
                for d in below { locations[d.linkId] = (item.linkId, d.linkId) }
            case .asked:
                if below.isEmpty {
                    locations[item.linkId] = (item.linkId, nil)
                } else {
                    locations[item.linkId] = (item.linkId, item.linkId)
                    for d in below { locations[d.linkId] = (item.linkId, d.linkId) }
                }
            default:
                break
            }
        }
    }

    private static func combine(_ conds: [JSON]) -> JSON? {
        conds.isEmpty ? nil : (conds.count == 1 ? conds[0] : .object(["all": .array(conds)]))
    }

    /// Second pass: the steps, the skip rules and the layout.
    func build(_ top: [FHIRItem]) -> [FHIRNode] {
        var nodes: [FHIRNode] = []
        for item in top {
            let own = conditions[item.linkId]
            let chain = own.map { [$0] } ?? []
            var node = layoutNode(item, chain: chain)
            let before = steps.count
            switch disposition(item) {
            case .group:
                if let repeatValue = prepared[item.linkId]?.extra["repeat"], !askedDescendants(item).isEmpty {
                    // A repeating group: a form of one repeating group item (its instances).
                    let group = repeatingGroup(item, repeat: repeatValue, chain: chain, node: &node)
                    var step = JSONObject(["type": .string("form"), "identifier": .string(item.linkId)])
                    if let label = item.labelText { step["title"] = label }
                    step["formItems"] = .array([.object(group)])
                    takeShown(into: &step)
                    steps.append(.object(step))
                } else if !askedDescendants(item).isEmpty {
                    var entries: [JSON] = []
                    node.children = formEntries(item.children, visible: [], chain: chain, into: &entries)
                    var step = JSONObject(["type": .string("form"), "identifier": .string(item.linkId)])
                    if let label = item.labelText { step["title"] = label }
                    step["formItems"] = .array(entries)
                    takeShown(into: &step)
                    steps.append(.object(step))
                } else {
                    node.children = layoutChildren(item.children, chain: chain)
                    // A hidden group (questionnaire-hidden) is never presented: its items are
                    // still enabled and exported (its fixed and calculated ones), nothing shown.
                    let hidden = prepared[item.linkId]?.hidden == true || FHIRExtension.isHidden(item.extensions)
                    let texts = hidden ? [] : displayTexts(item)
                    if !hidden { collectShown(item.children, in: node.children, conditioned: false) }
                    if !hidden, item.label != nil || !texts.isEmpty || !shownLines.isEmpty {
                        var step = JSONObject(["type": .string("instruction"), "identifier": .string(item.linkId)])
                        if let label = item.labelText { step["title"] = label }
                        if !texts.isEmpty { step["text"] = .string(texts.joined(separator: "\n")) }
                        takeShown(into: &step)
                        steps.append(.object(step))
                    }
                    shownLines = []
                }
            case .asked:
                if askedDescendants(item).isEmpty {
                    var step = JSONObject(["type": .string("question"), "identifier": .string(item.linkId)])
                    if let label = item.labelText { step["title"] = label }
                    question(item, into: &step)
                    steps.append(.object(step))
                    node.children = layoutChildren(item.children, chain: chain)
                } else {
                    var entries: [JSON] = [formItem(item, visible: [])]
                    node.children = formEntries(item.children.filter { disposition($0) != .display }, visible: [], chain: chain, into: &entries)
                    var step = JSONObject(["type": .string("form"), "identifier": .string(item.linkId), "formItems": .array(entries)])
                    takeShown(into: &step)
                    steps.append(.object(step))
                }
            case .display:
                var step = JSONObject(["type": .string("instruction"), "identifier": .string(item.linkId)])
                if let label = item.labelText { step["title"] = label }
                steps.append(.object(step))
            case .calculated, .fixed:
                node.children = layoutChildren(item.children, chain: chain)
                // A visible calculated or read-only item at the top level: a step of its own
                // that shows its value (its conditions skip it, as a question's do).
                if let line = shownLine(item, node) {
                    var step = JSONObject(["type": .string("instruction"), "identifier": .string(item.linkId)])
                    step["text"] = .string(line)
                    if let label = item.labelText { step["title"] = label }
                    steps.append(.object(step))
                }
            case .left:
                node.children = layoutChildren(item.children, chain: chain)
            }
            if steps.count > before, let own {
                skipRules[item.linkId] = .object(["not": own])
            }
            nodes.append(node)
        }
        return nodes
    }

    private func layoutNode(_ item: FHIRItem, chain: [JSON]) -> FHIRNode {
        let p = prepared[item.linkId]
        var node = FHIRNode(linkId: item.linkId, text: item.text, type: item.type)
        if let loc = locations[item.linkId] { node.step = loc.step; node.formItem = loc.item }
        node.choices = p?.choices ?? []
        node.otherValue = p?.otherValue
        node.unit = p?.unit
        if p?.disposition == .fixed {
            node.fixedAnswers = fixedAnswers(item, choices: node.choices)
            node.condition = FHIRTaskBuilder.combine(chain)
        }
        if p?.disposition == .calculated, let name = calculationNames[item.linkId] {
            node.calculation = name
            // Inside a repeating group the calculation holds the conditions, per repetition
            // (`FHIRImporter.perRepetition`): null where the item is disabled.
            node.perRepetition = blocks.scope(of: item.linkId) != nil
            if !node.perRepetition { node.condition = FHIRTaskBuilder.combine(chain) }
        }
        return node
    }

    /// The `initial` answers of a hidden or read-only item as FHIR answers.
    private func fixedAnswers(_ item: FHIRItem, choices: [FHIRChoice]) -> [JSON] {
        var answers: [JSON] = []
        for entry in (item.object["initial"]?.arrayValue ?? []).prefix(1000) {
            guard let o = entry.objectValue, let (kind, v) = FHIRExtension.value(o) else { continue }
            var a = JSONObject()
            a["value" + kind] = v
            answers.append(.object(a))
        }
        answers += choices.filter(\.initiallySelected).map(\.answer)
        if answers.isEmpty {
            report.add(item.linkId, item.path, "notAsked",
                       item.readOnly ? "A read-only item with no initial answer is not asked and not exported."
                                     : "A hidden item with no initial answer is not asked and not exported.")
        }
        return answers
    }

    /// The layout of items that are not asked in a form (under a question step, a left-out
    /// item, an instruction): hidden items keep their conditions.
    private func layoutChildren(_ items: [FHIRItem], chain: [JSON]) -> [FHIRNode] {
        items.map { item in
            let c = chain + (conditions[item.linkId].map { [$0] } ?? [])
            var node = layoutNode(item, chain: c)
            node.children = layoutChildren(item.children, chain: c)
            return node
        }
    }

    private func displayTexts(_ item: FHIRItem) -> [String] {
        var texts: [String] = []
        for child in item.children where disposition(child) == .display {
            // A text under a condition has no place to be hidden here: declined, never shown
            // unconditionally.
            if conditions[child.linkId] != nil {
                report.add(child.linkId, child.path.key("enableWhen"), "conditionNotTranslated",
                           "A display text's condition is not translated here. The item is declined: it is left out.")
                continue
            }
            if let t = child.label, !t.isEmpty { texts.append(t) }
        }
        return texts
    }

    /// The form entries for `items` (nested groups flattened behind section headers); `visible`
    /// are the conditions of the groups inside the form, `chain` all of them.
    /// A repeating group as one repeating group item of a form (its children the instances' items),
    /// at the top of the layout and inside a group alike; `node` learns the group's place.
    private func repeatingGroup(_ item: FHIRItem, repeat repeatValue: JSON, chain: [JSON], node: inout FHIRNode) -> JSONObject {
        var inner: [JSON] = []
        node.children = formEntries(item.children, visible: [], chain: chain, into: &inner)
        node.repeating = true
        node.step = node.children.compactMap(\.step).first
        node.formItem = item.linkId
        var group = JSONObject(["identifier": .string(item.linkId)])
        if let label = item.labelText { group["text"] = label }
        // Its instances' required items are checked when the group is required or one of its
        // items is (R4: a required item must be answered in each repetition there is).
        group["optional"] = .bool(!item.required && !askedDescendants(item).contains { $0.required })
        group["repeat"] = repeatValue
        group["items"] = .array(inner)
        return group
    }

    private func formEntries(_ items: [FHIRItem], visible: [JSON], chain: [JSON], into entries: inout [JSON]) -> [FHIRNode] {
        var nodes: [FHIRNode] = []
        for item in items {
            let own = conditions[item.linkId].map { [$0] } ?? []
            var node = layoutNode(item, chain: chain + own)
            switch disposition(item) {
            case .asked:
                entries.append(formItem(item, visible: visible))
                node.children = formEntries(item.children.filter { disposition($0) != .display }, visible: visible + own,
                                            chain: chain + own, into: &entries)
            case .group:
                if let repeatValue = prepared[item.linkId]?.extra["repeat"], visible.isEmpty, !askedDescendants(item).isEmpty {
                    // A repeating group inside a group: a repeating group item of the form, its
                    // own condition the item's visibleWhen.
                    var group = repeatingGroup(item, repeat: repeatValue, chain: chain + own, node: &node)
                    if let when = FHIRTaskBuilder.combine(own) { group["visibleWhen"] = when }
                    entries.append(.object(group))
                    break
                }
                if !askedDescendants(item).isEmpty, let label = item.label, !label.isEmpty, let text = item.labelText {
                    entries.append(.object(["sectionTitle": text]))
                }
                node.children = formEntries(item.children, visible: visible + own, chain: chain + own, into: &entries)
            case .display:
                if !own.isEmpty {
                    report.add(item.linkId, item.path.key("enableWhen"), "conditionNotTranslated",
                               "A display text's condition is not translated in a form. The item is declined: it is left out.")
                } else if let label = item.label, !label.isEmpty, let text = item.labelText {
                    entries.append(.object(["sectionTitle": text]))
                }
            case .fixed, .calculated:
                node.children = layoutChildren(item.children, chain: chain + own)
                noteShown(item, node, conditioned: !(visible + own).isEmpty)
            case .left:
                node.children = layoutChildren(item.children, chain: chain + own)
            }
            nodes.append(node)
        }
        return nodes
    }

    // MARK: Calculated and read-only items, shown read-only

    /// A visible calculated or read-only item's value as its step shows it: `"{{fhir_N}}"` (the
    /// calculation, piped, so the state shows its current value) or the text of its initial
    /// answers; nil when it is hidden or has nothing to show (reported already).
    private func shownLine(_ item: FHIRItem, _ node: FHIRNode) -> String? {
        guard let p = prepared[item.linkId], !p.hidden else { return nil }
        if p.disposition == .calculated {
            return calculationNames[item.linkId].map { "{{" + $0 + "}}" }
        }
        let texts = node.fixedAnswers.compactMap(FHIRTaskBuilder.answerText)
        return texts.isEmpty ? nil : texts.joined(separator: ", ")
    }

    /// Notes a visible calculated or read-only item of the step being built as a line of its
    /// text. One whose own conditions (or a nested group's) decide whether it is enabled cannot
    /// be a line of the text, which has no conditions: reported, still exported where enabled.
    private func noteShown(_ item: FHIRItem, _ node: FHIRNode, conditioned: Bool) {
        guard let line = shownLine(item, node) else { return }
        if node.perRepetition {
            // One value per repetition: the step's text has one line for the whole group.
            report.add(item.linkId, item.path, "valueNotShown",
                       "A calculated item inside a repeating group is computed and exported in each repetition (the state's calculations list its values), but its value is not shown.")
            return
        }
        if conditioned {
            report.add(item.linkId, item.path.key("enableWhen"), "valueNotShown",
                       "A calculated or read-only item with conditions of its own inside a form is exported where enabled, but its value is not shown.")
            return
        }
        shownLines.append((item.label ?? item.linkId) + ": " + line)
    }

    /// `noteShown` for the items under a group presented as an instruction step.
    private func collectShown(_ items: [FHIRItem], in nodes: [FHIRNode], conditioned: Bool) {
        for (item, node) in zip(items, nodes) {
            let own = conditioned || conditions[item.linkId] != nil
            switch disposition(item) {
            case .fixed, .calculated: noteShown(item, node, conditioned: own)
            case .group: collectShown(item.children, in: node.children, conditioned: own)
            default: break
            }
        }
    }

    /// Puts the lines noted while a step was built into its text (after any text it has), and
    /// starts the next step with none.
    private func takeShown(into step: inout JSONObject) {
        if !shownLines.isEmpty {
            let before = step["text"]?.stringValue.map { [$0] } ?? []
            step["text"] = .string((before + shownLines).joined(separator: "\n"))
        }
        shownLines = []
    }

    /// A FHIR answer (`{"valueX": v}`) as a participant reads it.
    private static func answerText(_ answer: JSON) -> String? {
        guard let o = answer.objectValue, let (kind, v) = FHIRExtension.value(o) else { return nil }
        switch kind {
        case "Coding":
            return v.objectValue?["display"]?.stringValue ?? v.objectValue?["code"]?.stringValue
        case "Quantity":
            guard let q = v.objectValue, let n = q["value"] else { return nil }
            let unit = q["unit"]?.stringValue ?? q["code"]?.stringValue
            return JSONWriter.string(n) + (unit.map { " " + $0 } ?? "")
        case "Boolean":
            return v.boolValue.map { $0 ? "Yes" : "No" }
        default:
            return v.stringValue ?? (v.isNull ? nil : JSONWriter.string(v))
        }
    }

    private func formItem(_ item: FHIRItem, visible: [JSON]) -> JSON {
        var entry = JSONObject(["identifier": .string(item.linkId)])
        if let label = item.labelText { entry["text"] = label }
        question(item, into: &entry)
        let conds = visible + (conditions[item.linkId].map { [$0] } ?? [])
        if let when = FHIRTaskBuilder.combine(conds) { entry["visibleWhen"] = when }
        return .object(entry)
    }

    /// The keys a question step and a form item share: the format, `optional`, `placeholder`,
    /// and as `detailText` the display items nested under the question (help texts).
    private func question(_ item: FHIRItem, into o: inout JSONObject) {
        let p = prepared[item.linkId]
        if let format = p?.format { o["answerFormat"] = format }
        o["optional"] = .bool(!item.required)
        if let initial = initialExpressions[item.linkId] { o["initial"] = initial }
        p?.extra.forEachEntry { key, value in o[key] = value }
        let help = displayTexts(item)
        if !help.isEmpty { o["detailText"] = .string(help.joined(separator: "\n")) }
    }
}
