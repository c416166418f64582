/// FHIR R4 `Questionnaire` → StepKit task: the translated task definition, the import report
/// and the layout the export needs. JSON to JSON: the task is then compiled like any other, so
/// an imported task behaves exactly as its translation reads.
enum FHIRImporter {
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

    static func translate(_ q: JSON, requiredAnswers: RequiredAnswers = .atCompletion) throws(StepKitError) -> Translation {
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
        let top = root["item"].map { FHIRItem.parseList($0, at: JSONPath.root.key("item"), depth: 0, d) } ?? []
        let index = FHIRItemIndex(top, d)

        // Each item's format and choices.
        let formats = FHIRAnswerFormat(report: report, choiceReader: FHIRChoiceReader(valueSets: valueSets, diagnostics: d, report: report))
        var prepared: [String: FHIRPrepared] = [:]
        func prepare(_ items: [FHIRItem], hidden: Bool) {
            for item in items {
                prepared[item.linkId] = formats.prepare(item, hiddenAncestor: hidden)
                checkInitial(item, d)
                prepare(item.children, hidden: hidden || FHIRExtension.isHidden(item.extensions))
            }
        }
        prepare(top, hidden: false)

        let builder = FHIRTaskBuilder(index: index, prepared: prepared, report: report)
        builder.assignLocations(top)
        let conditions = FHIRConditions(index: index, prepared: prepared, locations: builder.locations, diagnostics: d, report: report)
        func translateConditions(_ items: [FHIRItem]) {
            for item in items {
                if let c = conditions.condition(item) { builder.conditions[item.linkId] = c }
                translateConditions(item.children)
            }
        }
        translateConditions(top)
        guard d.isEmpty else { throw StepKitError(.definition, problems: d.problems) }

        // Calculated items: their expressions, with the variables in scope, as task calculations.
        var asked: [String] = []
        func collect(_ items: [FHIRItem]) {
            for item in items {
                if builder.locations[item.linkId] != nil { asked.append(item.linkId) }
                collect(item.children)
            }
        }
        collect(top)
        let calcs = FHIRCalculations(prepared: prepared, locations: builder.locations, order: asked,
                                     topLevel: Set(top.map(\.linkId)), index: index)
        let calculations = calculations(calcs, builder: builder, root: root, top: top, prepared: prepared, report: report)
        let nodes = builder.build(top)
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

        var canonical: String?
        if let url = root["url"]?.stringValue {
            canonical = url + (root["version"]?.stringValue.map { "|" + $0 } ?? "")
        } else if let id = root["id"]?.stringValue {
            canonical = "Questionnaire/" + id
        }
        return Translation(task: .object(task), report: report, layout: FHIRLayout(questionnaire: canonical, items: nodes))
    }

    /// The task calculations of the calculated items, named `fhir_1`, `fhir_2`, ... in document
    /// order (`FHIRTaskBuilder.calculationNames` says which item shows which). The `variable`
    /// extensions are read in scope — the Questionnaire's, then each enclosing item's, each
    /// element's in order, a later one seeing the earlier — and each one outside the subset is
    /// reported; a calculatedExpression outside it (or reading such a variable) is reported too.
    private static func calculations(_ calcs: FHIRCalculations, builder: FHIRTaskBuilder, root: JSONObject, top: [FHIRItem],
                                     prepared: [String: FHIRPrepared], report: FHIRReport) -> JSONObject {
        var calculations = JSONObject()
        func readVariables(_ list: [JSON], at path: JSONPath, linkId: String, into scope: inout [String: FHIRCalculations.Value]) {
            for (i, e) in list.enumerated() {
                guard let o = e.objectValue, o["url"]?.stringValue == FHIRCalculations.variableURL else { continue }
                let v = o["valueExpression"]?.objectValue
                let name = v?["name"]?.stringValue ?? ""
                if v?["language"]?.stringValue == "text/fhirpath", !name.isEmpty, let text = v?["expression"]?.stringValue,
                   let value = calcs.translateValue(text, variables: scope) {
                    scope[name] = value
                } else {
                    report.add(linkId, path.key("extension").index(i), "unsupportedExtension",
                               "The FHIRPath variable \"\(name)\" is outside the subset StepKit translates.")
                }
            }
        }
        var rootScope: [String: FHIRCalculations.Value] = [:]
        readVariables(root["extension"]?.arrayValue ?? [], at: .root, linkId: "", into: &rootScope)
        func walk(_ items: [FHIRItem], _ scope: [String: FHIRCalculations.Value]) {
            for item in items {
                var here = scope
                readVariables(item.extensions, at: item.path, linkId: item.linkId, into: &here)
                if prepared[item.linkId]?.disposition == .calculated, let (text, path) = FHIRCalculations.expression(of: item) {
                    if let expression = calcs.translate(text, variables: here) {
                        let name = "fhir_" + String(calculations.count + 1)
                        calculations[name] = expression
                        builder.calculationNames[item.linkId] = name
                    } else {
                        report.add(item.linkId, path, "unsupportedExpression",
                                   "The calculatedExpression is outside the FHIRPath subset StepKit translates: the item is not computed or asked.")
                    }
                }
                walk(item.children, here)
            }
        }
        walk(top, rootScope)
        return calculations
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

    /// Translates, then compiles the task; with `strict`, any report entry is a definition
    /// error. The compiled task keeps the layout for the export.
    static func compile(_ q: JSON, options: FHIRImportOptions) throws(StepKitError) -> (task: Task, report: FHIRReport, definition: JSON) {
        let t = try translate(q, requiredAnswers: options.requiredAnswers)
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
}
