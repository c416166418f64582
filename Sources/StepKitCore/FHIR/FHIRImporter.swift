import StepKitBase

/// FHIR R4 `Questionnaire` → StepKit task: the translated task definition, the import report
/// and the layout the export needs. JSON to JSON: the task is then compiled like any other, so
/// an imported task behaves exactly as its translation reads.
package enum FHIRImporter {
    struct Translation {
        var task: JSON
        var report: FHIRReport
        var layout: FHIRLayout
    }

    /// Keys of a Questionnaire that describe it and change nothing a participant sees or answers.
    private static let metadataKeys: Set<String> = [
        "resourceType", "id", "meta", "implicitRules", "language", "text", "contained", "extension", "modifierExtension",
        "url", "identifier", "version", "name", "title", "derivedFrom", "status", "experimental", "subjectType", "date",
        "publisher", "contact", "description", "useContext", "jurisdiction", "purpose", "copyright", "approvalDate",
        "lastReviewDate", "effectivePeriod", "code", "item", "_title", "_description",
    ]

    static func translate(_ q: JSON, options: FHIRImportOptions = FHIRImportOptions()) throws(StepKitError) -> Translation {
        let d = Diagnostics()
        let report = FHIRReport()
        guard case .object(let root) = q else {
            throw StepKitError(.definition, code: "notAQuestionnaire", message: "Expected a Questionnaire (an object), found \(q.typeName).")
        }
        guard root["resourceType"]?.stringValue == "Questionnaire" else {
            throw StepKitError(.definition, code: "notAQuestionnaire", message: "The resource is not a Questionnaire (resourceType is \(root["resourceType"].map { JSONWriter.string($0) } ?? "missing")).",
                               path: JSONPath.root.key("resourceType"))
        }
        for key in root.keys where !metadataKeys.contains(key) {
            report.add("", JSONPath.root.key(key), "unsupportedKey", "The Questionnaire's \"\(key)\" is not translated.")
        }
        for (i, e) in (root["extension"]?.arrayValue ?? []).enumerated() {
            let url = e.objectValue?["url"]?.stringValue ?? ""
            // Variables are read with the calculations that use them (below).
            guard url != FHIRCalculations.variableURL else { continue }
            report.add("", JSONPath.root.key("extension").index(i), "unsupportedExtension", "The extension \(url) is not translated.")
        }
        // Contained ValueSets, by id.
        var valueSets: [String: JSONObject] = [:]
        for (i, c) in (root["contained"]?.arrayValue ?? []).enumerated() {
            guard let o = c.objectValue else { continue }
            if o["resourceType"]?.stringValue == "ValueSet", let id = o["id"]?.stringValue {
                valueSets[id] = o
            } else {
                report.add("", JSONPath.root.key("contained").index(i), "unsupportedResource",
                           "The contained \(o["resourceType"]?.stringValue ?? "resource") is not translated.")
            }
        }
        // The language of the texts; their `translation` extensions give the others.
        let language = root["language"]?.stringValue.flatMap(LanguageTag.canonical) ?? "en"
        let top = root["item"].map { FHIRItem.parseList($0, at: JSONPath.root.key("item"), depth: 0, language: language, d) } ?? []
        let index = FHIRItemIndex(top, d)

        // Each item's format and choices.
        let reader = FHIRChoiceReader(valueSets: valueSets, supplied: options.valueSets, diagnostics: d, report: report)
        var formats = FHIRAnswerFormat(report: report, choiceReader: reader)
        formats.readLinkIds = FHIRImporter.readLinkIds(root)
        var prepared: [String: FHIRPrepared] = [:]
        func prepare(_ items: [FHIRItem], hidden: Bool, inRepeatingGroup: Bool, parentRepeats: Bool) {
            for item in items {
                let p = formats.prepare(item, hiddenAncestor: hidden, inRepeatingGroup: inRepeatingGroup, parentRepeats: parentRepeats)
                prepared[item.linkId] = p
                checkInitial(item, d)
                let repeats = item.type == "group" && p.extra["repeat"] != nil
                prepare(item.children, hidden: hidden || FHIRExtension.isHidden(item.extensions),
                        inRepeatingGroup: inRepeatingGroup || repeats, parentRepeats: repeats && !inRepeatingGroup)
            }
        }
        prepare(top, hidden: false, inRepeatingGroup: false, parentRepeats: false)

        // Conditions, variables and calculations, declining each item whose condition cannot be
        // translated. Declining an item can leave another's condition reading an item no longer
        // asked, which declines that one too: an enableWhen reading it is found at once through
        // `readers` (so a chain of any length costs one more pass, not one a link); what an
        // enableWhenExpression reads shows in the next pass, repeated until nothing more is
        // declined (each pass declines at least one more item).
        var declined: [String: FHIRReportEntry] = [:]
        var readers: [String: [(item: FHIRItem, index: Int)]] = [:]
        func collectReaders(_ items: [FHIRItem]) {
            for item in items {
                for (i, e) in (item.object["enableWhen"]?.arrayValue ?? []).enumerated() {
                    if let q = e.objectValue?["question"]?.stringValue, q != item.linkId { readers[q, default: []].append((item, i)) }
                }
                if let e = FHIRExtension.find(FHIRCalculations.enableWhenURL, in: item.extensions),
                   let text = FHIRCalculations.expression(of: item, url: FHIRCalculations.enableWhenURL)?.text {
                    var seen = Set<String>()
                    for x in FHIRCalculations.linkIds(in: text) where x != item.linkId && seen.insert(x).inserted {
                        readers[x, default: []].append((item, -1 - e.index))
                    }
                }
                collectReaders(item.children)
            }
        }
        collectReaders(top)
        while true {
            let pass = translatePass(root: root, top: top, index: index, prepared: prepared, declined: declined)
            // Every problem at once: the items' and the conditions' (the first pass reads every condition).
            guard d.isEmpty, pass.diagnostics.isEmpty else { throw StepKitError(.definition, problems: d.problems + pass.diagnostics.problems) }
            let fresh = pass.declined.filter { declined[$0.linkId] == nil }
            if fresh.isEmpty {
                for entry in pass.report.entries { report.add(entry.linkId, entry.path, entry.code, entry.reason) }
                return try finish(root: root, builder: pass.builder, calculations: pass.calculations, nodes: pass.nodes, report: report,
                                  requiredAnswers: options.requiredAnswers, validations: pass.validations)
            }
            var queue: [(String, FHIRReportEntry)] = fresh.map { ($0.linkId, $0.entry) }
            while let (linkId, entry) = queue.popLast() {
                guard declined[linkId] == nil else { continue }
                declined[linkId] = entry
                // The item and everything under it is left out, and each item whose enableWhen
                // reads one of them is declined in turn.
                var stack = [linkId]
                while let id = stack.popLast() {
                    prepared[id]?.disposition = .left
                    stack += index.items[id]?.children.map(\.linkId) ?? []
                    for (reader, i) in readers[id] ?? [] where declined[reader.linkId] == nil {
                        queue.append((reader.linkId, FHIRConditions.unaskedEntry(reader, enableWhen: i, reads: id)))
                    }
                }
            }
        }
    }

    private struct Pass {
        let builder: FHIRTaskBuilder
        let report: FHIRReport
        let diagnostics: Diagnostics
        let declined: [(linkId: String, entry: FHIRReportEntry)]
        let calculations: JSONObject
        let nodes: [FHIRNode]
        let validations: [JSON]
    }

    /// One pass over the items with `declined` left out: where each answer is, the variables in
    /// scope, the conditions (which may decline more items), the calculations and the layout,
    /// reported in document order.
    private static func translatePass(root: JSONObject, top: [FHIRItem], index: FHIRItemIndex, prepared: [String: FHIRPrepared],
                                      declined: [String: FHIRReportEntry]) -> Pass {
        let d = Diagnostics()
        let report = FHIRReport()
        let builder = FHIRTaskBuilder(index: index, prepared: prepared, report: report)
        builder.assignLocations(top)
        var asked: [String] = []
        func collect(_ items: [FHIRItem]) {
            for item in items {
                if builder.locations[item.linkId] != nil { asked.append(item.linkId) }
                collect(item.children)
            }
        }
        collect(top)
        var calcs = FHIRCalculations(prepared: prepared, locations: builder.locations, order: asked, index: index)
        // Items inside repeating groups are read per repetition (`FHIRBlocks`).
        calcs.blocks = FHIRBlocks(top, prepared: prepared)
        let scopes = variables(calcs, root: root, top: top, declined: declined, report: report)
        let conditions = FHIRConditions(index: index, prepared: prepared, locations: builder.locations, diagnostics: d,
                                        report: report, calculations: calcs, scopes: scopes)
        conditions.blocks = calcs.blocks
        builder.blocks = calcs.blocks
        func translateConditions(_ items: [FHIRItem]) {
            for item in items {
                if let entry = declined[item.linkId] {
                    report.add(entry.linkId, entry.path, entry.code, entry.reason)
                    continue
                }
                if let c = conditions.enabling(item) { builder.conditions[item.linkId] = c }
                translateConditions(item.children)
            }
        }
        translateConditions(top)
        let calculations = calculations(calcs, builder: builder, top: top, prepared: prepared, scopes: scopes, report: report)
        initialExpressions(calcs, builder: builder, top: top, prepared: prepared, scopes: scopes, report: report)
        let nodes = builder.build(top)
        let validations = selectionValidations(top, prepared: prepared, locations: builder.locations, blocks: calcs.blocks)
        return Pass(builder: builder, report: report, diagnostics: d, declined: conditions.declined, calculations: calculations, nodes: nodes,
                    validations: validations)
    }

    private static func finish(root: JSONObject, builder: FHIRTaskBuilder, calculations: JSONObject, nodes: [FHIRNode],
                               report: FHIRReport, requiredAnswers: RequiredAnswers, validations: [JSON]) throws(StepKitError) -> Translation {
        guard !builder.steps.isEmpty else {
            throw StepKitError(.definition, code: "nothingToAsk", message: "The Questionnaire has no item StepKit can present.", path: JSONPath.root.key("item"))
        }
        var task = JSONObject([
            "identifier": .string(root["id"]?.stringValue ?? root["name"]?.stringValue ?? "questionnaire"),
            "steps": .array(builder.steps),
        ])
        task["requiredAnswersChecked"] = .string(requiredAnswers.rawValue)
        if builder.skipRules.count > 0 { task["skipRules"] = .object(builder.skipRules) }
        if calculations.count > 0 { task["calculations"] = .object(calculations) }
        if !validations.isEmpty { task["validations"] = .array(validations) }
        // Texts with translations: the task declares every language they are in.
        var languages: Set<String> = []
        collectLanguages(task["steps"] ?? .null, into: &languages)
        if !languages.isEmpty {
            let language = root["language"]?.stringValue.flatMap(LanguageTag.canonical) ?? "en"
            task["defaultLanguage"] = .string(language)
            task["languages"] = .array(([language] + languages.subtracting([language]).sorted()).map { .string($0) })
        }

        var canonical: String?
        if let url = root["url"]?.stringValue {
            canonical = url + (root["version"]?.stringValue.map { "|" + $0 } ?? "")
        } else if let id = root["id"]?.stringValue {
            canonical = "Questionnaire/" + id
        }
        return Translation(task: .object(task), report: report, layout: FHIRLayout(questionnaire: canonical, items: nodes))
    }

    /// The `variable` extensions, read in scope — the Questionnaire's, then each enclosing
    /// item's, each element's in order, a later one seeing the earlier — with the scope on each
    /// item (its own variables included); each one outside the subset is reported. A variable
    /// on an item reads `item` as that item's children (a group's variables, as Smart Forms
    /// writes them).
    private static func variables(_ calcs: FHIRCalculations, root: JSONObject, top: [FHIRItem], declined: [String: FHIRReportEntry],
                                  report: FHIRReport) -> [String: [String: FHIRCalculations.Value]] {
        func readVariables(_ list: [JSON], at path: JSONPath, linkId: String?, into scope: inout [String: FHIRCalculations.Value]) {
            for (i, e) in list.enumerated() {
                guard let o = e.objectValue, o["url"]?.stringValue == FHIRCalculations.variableURL else { continue }
                let v = o["valueExpression"]?.objectValue
                let name = v?["name"]?.stringValue ?? ""
                if v?["language"]?.stringValue == "text/fhirpath", !name.isEmpty, let text = v?["expression"]?.stringValue,
                   let value = calcs.translateValue(text, variables: scope, context: linkId) {
                    scope[name] = value
                } else {
                    report.add(linkId ?? "", path.key("extension").index(i), "unsupportedExtension",
                               "The FHIRPath variable \"\(name)\" is outside the subset StepKit translates.")
                }
            }
        }
        var scopes: [String: [String: FHIRCalculations.Value]] = [:]
        var rootScope: [String: FHIRCalculations.Value] = [:]
        readVariables(root["extension"]?.arrayValue ?? [], at: .root, linkId: nil, into: &rootScope)
        func walk(_ items: [FHIRItem], _ scope: [String: FHIRCalculations.Value]) {
            for item in items where declined[item.linkId] == nil {
                var here = scope
                readVariables(item.extensions, at: item.path, linkId: item.linkId, into: &here)
                scopes[item.linkId] = here
                walk(item.children, here)
            }
        }
        walk(top, rootScope)
        return scopes
    }

    /// The task calculations of the calculated items, named `fhir_1`, `fhir_2`, ... in document
    /// order (`FHIRTaskBuilder.calculationNames` says which item shows which), each read with
    /// the variables in scope on its item; a calculatedExpression outside the subset (or
    /// reading a variable outside it) is reported, and its item is not computed or asked.
    private static func calculations(_ calcs: FHIRCalculations, builder: FHIRTaskBuilder, top: [FHIRItem],
                                     prepared: [String: FHIRPrepared], scopes: [String: [String: FHIRCalculations.Value]],
                                     report: FHIRReport) -> JSONObject {
        var calculations = JSONObject()
        func walk(_ items: [FHIRItem]) {
            for item in items {
                if prepared[item.linkId]?.disposition == .calculated, let (text, path) = FHIRCalculations.expression(of: item) {
                    if let expression = calcs.translate(text, variables: scopes[item.linkId] ?? [:], context: item.linkId) {
                        let name = "fhir_" + String(calculations.count + 1)
                        calculations[name] = perRepetition(expression, item, calcs, builder: builder)
                        builder.calculationNames[item.linkId] = name
                    } else {
                        report.add(item.linkId, path, "unsupportedExpression",
                                   "The calculatedExpression is outside the FHIRPath subset StepKit translates: the item is declined (not computed, asked or exported).")
                    }
                }
                walk(item.children)
            }
        }
        walk(top)
        return calculations
    }

    /// A calculation on an item inside a repeating group is computed in each repetition (SDC:
    /// the expression's context is the item in that repetition), a per-instance calculation:
    /// `{"forEach": BLOCK, "value": ...}`. Where its conditions (its own and its groups', read in
    /// that repetition) do not hold, the item is disabled there and has no value (null).
    private static func perRepetition(_ expression: JSON, _ item: FHIRItem, _ calcs: FHIRCalculations, builder: FHIRTaskBuilder) -> JSON {
        guard let group = calcs.blocks.scope(of: item.linkId), let block = calcs.blocks.reference(group, locations: builder.locations) else {
            return expression
        }
        let chain = (calcs.index.ancestors(of: item.linkId).reversed() + [item.linkId]).compactMap { builder.conditions[$0] }
        var value = expression
        if !chain.isEmpty {
            let condition = chain.count == 1 ? chain[0] : .object(["all": .array(chain)])
            value = .object(["if": .array([condition, expression, .null])])
        }
        return .object(["forEach": block, "value": value])
    }

    /// SDC's `initialExpression` on an asked item: the item's `initial` expression (evaluated
    /// once, when the item is first enabled), when it translates to a value of the item's type;
    /// otherwise reported (most published ones read the patient's record, `%patient`, which a
    /// task has no access to), and the item starts unanswered.
    private static func initialExpressions(_ calcs: FHIRCalculations, builder: FHIRTaskBuilder, top: [FHIRItem],
                                           prepared: [String: FHIRPrepared], scopes: [String: [String: FHIRCalculations.Value]],
                                           report: FHIRReport) {
        func walk(_ items: [FHIRItem]) {
            for item in items {
                defer { walk(item.children) }
                guard let (text, path) = FHIRCalculations.expression(of: item, url: FHIRCalculations.initialURL) else { continue }
                guard prepared[item.linkId]?.disposition == .asked, builder.locations[item.linkId] != nil else {
                    report.add(item.linkId, path, "initialNotTranslated", "An initialExpression starts an answer; this item is not asked, so it is not used.")
                    continue
                }
                let kinds: [FHIRCalculations.Value.Kind]
                switch item.type {
                case "integer", "decimal", "quantity": kinds = [.number]
                case "boolean": kinds = [.boolean]
                case "string", "text", "url": kinds = [.string]
                case "choice", "open-choice": kinds = [.code, .string, .number]
                default: kinds = []
                }
                guard let value = calcs.translateValue(text, variables: scopes[item.linkId] ?? [:], context: item.linkId),
                      kinds.contains(value.kind) else {
                    report.add(item.linkId, path, "initialNotTranslated",
                               "The initialExpression is outside the FHIRPath subset StepKit translates (or not of the item's type): the item is asked, starting unanswered.")
                    continue
                }
                builder.initialExpressions[item.linkId] = value.json
            }
        }
        walk(top)
    }

    /// `initial` values must have the item's type.
    private static func checkInitial(_ item: FHIRItem, _ d: Diagnostics) {
        guard let list = item.object["initial"] else { return }
        let path = item.path.key("initial")
        guard case .array(let entries) = list else {
            d.error("wrongType", "\"initial\" must be an array.", at: path)
            return
        }
        let expected: Set<String>
        switch item.type {
        case "boolean": expected = ["Boolean"]
        case "decimal": expected = ["Decimal", "Integer"]
        case "integer": expected = ["Integer"]
        case "date": expected = ["Date"]
        case "dateTime": expected = ["DateTime", "Date"]
        case "time": expected = ["Time"]
        case "string", "text": expected = ["String"]
        case "url": expected = ["Uri"]
        case "choice", "open-choice": expected = ["Coding", "String", "Integer", "Date", "Time"]
        case "quantity": expected = ["Quantity"]
        case "attachment": expected = ["Attachment"]
        case "reference": expected = ["Reference"]
        default: expected = []
        }
        for (i, e) in entries.enumerated() {
            guard let o = e.objectValue, let (kind, _) = FHIRExtension.value(o) else {
                d.error("missingValue", "An initial needs a value[x].", at: path.index(i))
                continue
            }
            if !expected.contains(kind) {
                d.error("answerTypeMismatch", "A \(item.type) item cannot start with a value\(kind).", at: path.index(i).key("value" + kind))
            }
        }
    }

    /// The language tags of every text object in `value` (bounded by the definition's depth).
    /// The members are read in place and only an object member's key is hashed, as
    /// `TaskLanguages.containsTextObject` does (every import walks the whole definition).
    private static func collectLanguages(_ value: JSON, into languages: inout Set<String>) {
        switch value {
        case .object(let object):
            for i in 0..<object.count {
                guard let member = object.value(at: i) else { continue }
                switch member {
                case .object(let texts):
                    if TaskLanguages.textKeys.contains(object.keys[i]) {
                        languages.formUnion(texts.keys)
                    } else {
                        collectLanguages(member, into: &languages)
                    }
                case .array:
                    collectLanguages(member, into: &languages)
                default:
                    continue
                }
            }
        case .array(let items): for item in items { collectLanguages(item, into: &languages) }
        default: break
        }
    }

    /// Translates, then compiles the task; with `strict`, any report entry is a definition
    /// error. The compiled task keeps the layout for the export.
    package static func compile(_ q: JSON, options: FHIRImportOptions) throws(StepKitError) -> (task: Task, report: FHIRReport, definition: JSON) {
        let t = try translate(q, options: options)
        if options.strict && !t.report.entries.isEmpty {
            throw StepKitError(.definition, problems: t.report.entries.map { Problem(code: $0.code, message: $0.reason, path: $0.path) })
        }
        let task = try TaskCompiler.compile(t.task, maxSteps: options.compile.maxSteps)
        var layout = t.layout
        let d = Diagnostics()
        let predicates = PredicateCompiler(steps: task.steps, stepIndex: task.stepIndex, sectionIdentifiers: Set(task.sectionIndex.keys), diagnostics: d)
        layout.items = compileConditions(layout.items, predicates)
        return (task.with(fhir: layout), t.report, t.task)
    }

    private static func compileConditions(_ nodes: [FHIRNode], _ predicates: PredicateCompiler) -> [FHIRNode] {
        nodes.map { node in
            var n = node
            if let c = n.condition { n.enabled = predicates.compile(c, at: .root) }
            n.children = compileConditions(n.children, predicates)
            return n
        }
    }

    /// questionnaire-minOccurs and maxOccurs on a repeating choice (a multiple choice): how many
    /// options an answered one must and may have selected. Checked when the task would complete,
    /// as a task validation (a problem while it holds): an answered item with fewer or more
    /// selected; in a repeating group, in any repetition (where the item is enabled). Whether an
    /// unanswered one is missing is `required`'s to say.
    static func selectionValidations(_ top: [FHIRItem], prepared: [String: FHIRPrepared],
                                     locations: [String: (step: String, item: String?)], blocks: FHIRBlocks) -> [JSON] {
        var out: [JSON] = []
        func walk(_ items: [FHIRItem]) {
            for item in items {
                defer { walk(item.children) }
                guard let p = prepared[item.linkId], p.disposition == .asked, let bounds = p.selections,
                      let location = locations[item.linkId] else { continue }
                let read = blocks.selector(item.linkId, location: location, context: item.linkId)
                let length = JSON.object(["length": .array([.object(["answer": read])])])
                var wrong: [JSON] = []
                if let m = bounds.minimum, m > 1 { wrong.append(.object(["<": .array([length, .int(Int64(m))])])) }
                if let m = bounds.maximum { wrong.append(.object([">": .array([length, .int(Int64(m))])])) }
                guard !wrong.isEmpty else { continue }
                var when = JSON.object(["and": .array([.object(["answered": read]), wrong.count == 1 ? wrong[0] : .object(["or": .array(wrong)])])])
                if case .object(let r) = read, let block = r["block"], r["index"] == nil, let step = r["step"] {
                    when = .object(["any": .object(["over": .object(["step": step, "block": block]), "of": when])])
                }
                let label = item.label ?? item.linkId
                let count: String
                switch (bounds.minimum.flatMap { $0 > 1 ? $0 : nil }, bounds.maximum) {
                case (let lo?, let hi?): count = "from \(lo) to \(hi) options"
                case (let lo?, nil): count = "at least \(lo) options"
                case (nil, let hi?): count = hi == 1 ? "at most 1 option" : "at most \(hi) options"
                default: count = ""
                }
                let message = "Choose \(count) for \"\(label.replacing("{{", with: "\\{{"))\"" + (blocks.scope(of: item.linkId) != nil ? " (in each repetition)." : ".")
                out.append(.object(["when": when, "message": .string(message)]))
            }
        }
        walk(top)
        return out
    }
}

extension FHIRImporter {
    /// The linkIds the Questionnaire's conditions and expressions read: every enableWhen's
    /// `question`, and every quoted name in an expression (`linkId='dose'`; a quoted string that
    /// is no linkId reads nothing, and costs only a nesting the import then declines). The walk
    /// is bounded by the parser's depth limit.
    static func readLinkIds(_ root: JSONObject) -> Set<String> {
        var found = Set<String>()
        func walk(_ value: JSON, key: String?, depth: Int) {
            guard depth < 64 else { return }
            switch value {
            case .object(let o):
                for (k, v) in o.entries { walk(v, key: k, depth: depth + 1) }
            case .array(let a):
                for v in a { walk(v, key: key, depth: depth + 1) }
            case .string(let text) where key == "question":
                found.insert(text)
            case .string(let text) where key == "expression":
                var rest = Substring(text)
                while let open = rest.firstIndex(of: "'") {
                    let after = rest[rest.index(after: open)...]
                    guard let close = after.firstIndex(of: "'") else { break }
                    found.insert(String(after[..<close]))
                    rest = after[after.index(after: close)...]
                }
            default:
                break
            }
        }
        walk(.object(root), key: nil, depth: 0)
        return found
    }
}
