/// Turns a task definition (JSON) into a `Task`, or reports every problem it has at once.
///
/// Two passes: the steps first (sections flattened, answer formats compiled), then everything
/// that refers to steps by identifier (rules, skip rules, step modifiers, item visibility), so a
/// rule may name a step defined after it.
enum TaskCompiler {
    private static let commonStepKeys = ["title", "text", "detailText", "footnote"]
    private static let stepTypes = ["instruction", "completion", "question", "form", "section", "active", "countdown", "wait"]
    private static let laterStepTypes = ["review", "page", "consentReview", "signature", "table"]

    /// The state of one compilation.
    private final class Builder {
        let d: Diagnostics
        var steps: [Step] = []
        var stepIndex: [String: Int] = [:]
        var sections: [Section] = []
        var sectionIndex: [String: Int] = [:]
        var seen: Set<String> = []
        /// Recorder identifiers, unique across the task (they name files and results).
        var recorders: Set<String> = []
        /// `visibleWhen` predicates, compiled once every step is known.
        var pendingVisibility: [(step: Int, item: String, value: JSON, path: JSONPath)] = []
        /// Form section headers' `visibleWhen`, compiled with the item rules.
        var pendingHeaders: [(step: Int, entry: Int, title: String, items: [String], value: JSON, path: JSONPath)] = []
        /// Sections' `visibleWhen`, compiled with the item rules.
        var pendingSections: [(section: Int, value: JSON, path: JSONPath)] = []
        /// Form steps' `validations`, compiled with the item rules.
        var pendingValidations: [(step: Int, value: JSON, path: JSONPath)] = []
        /// Questions' and form items' `initial` expressions, compiled once every step is known.
        var pendingInitials: [(step: Int, item: String?, value: JSON, path: JSONPath)] = []

        init(_ d: Diagnostics) { self.d = d }
    }

    static func compile(_ definition: JSON, maxSteps: Int = CompileOptions.defaultMaxSteps) throws(StepKitError) -> Task {
        let d = Diagnostics()
        guard let r = FieldReader(definition, at: .root, d, what: "a task") else {
            throw StepKitError(.definition, problems: d.problems)
        }
        let b = Builder(d)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        if let items = r.array("steps", required: true) {
            if items.isEmpty {
                d.error("emptySteps", "A task needs at least one step.", at: .root.key("steps"))
            }
            compileSteps(items, at: .root.key("steps"), in: [], b)
        }
        if b.steps.count + b.sections.count > maxSteps {
            d.error("tooManySteps", "The task has more than \(maxSteps) steps and sections (the limit \"maxSteps\").", at: .root.key("steps"))
        }
        let predicates = PredicateCompiler(steps: b.steps, stepIndex: b.stepIndex, sectionIdentifiers: Set(b.sectionIndex.keys), diagnostics: d)
        var rules = TaskRules()
        if r.choice("requiredAnswersChecked", of: RequiredAnswers.allCases.map(\.rawValue)) == RequiredAnswers.atCompletion.rawValue {
            rules.requiredAnswers = .atCompletion
        }
        // Calculations first: every rule may read them.
        let calculations = r.value("calculations").map { Calculations.compile($0, predicates) } ?? Calculations()
        compileStepExpressions(b, predicates, &rules)
        if let value = r.value("navigationRules") {
            compileNavigationRules(value, b, predicates, &rules)
        }
        if let value = r.value("skipRules") {
            compileSkipRules(value, b, predicates, &rules)
        }
        if let value = r.value("stepModifiers") {
            compileModifiers(value, b, predicates, &rules)
        }
        var asyncActions: [AsyncAction] = []
        if let items = r.array("asyncActions") {
            asyncActions = compileAsyncActions(items, b)
        }
        for pending in b.pendingVisibility {
            if let predicate = predicates.compile(pending.value, at: pending.path) {
                rules.visibility[pending.step, default: [:]][pending.item] = predicate
            }
        }
        compileVisibilityAndValidations(b, predicates, r, &rules)
        compileInitials(b, predicates, &rules)
        compilePiping(b, calculations, definition, &rules)
        r.finish()
        guard d.isEmpty, let identifier else { throw StepKitError(.definition, problems: d.problems) }
        rules.conditionPatterns.collect(from: rules)
        rules.collectGovernedItems()
        for c in calculations.list { rules.conditionPatterns.collect(.expression(c.expression)) }
        for bound in rules.answerBounds.values.joined() {
            for e in [bound.minimum, bound.maximum].compactMap({ $0 }) { rules.conditionPatterns.collect(.expression(e)) }
        }
        let routing = Routing(steps: b.steps, sections: b.sections, rules: rules)
        return Task(identifier: identifier, fingerprint: Fingerprint(definition), steps: b.steps, stepIndex: b.stepIndex, sections: b.sections,
                    sectionIndex: b.sectionIndex, rules: rules, graph: RuleGraph(routing), asyncActions: asyncActions,
                    calculations: calculations, routing: routing)
    }

    /// What steps hold that reads other steps or calculations: the calculations a step shows and
    /// answer bounds written as expressions.
    private static func compileStepExpressions(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for (index, step) in b.steps.enumerated() {
            var shown: [Int] = []
            for (i, name) in step.calculationNames.enumerated() {
                if let c = predicates.calculations.index[name] {
                    shown.append(c)
                } else {
                    b.d.error("unknownCalculation", "No calculation is called \"\(name)\".", at: step.definitionPath.key("calculations").index(i))
                }
            }
            if !shown.isEmpty { rules.stepCalculations[index] = shown }
            var bounds: [AnswerBounds] = []
            switch step.content {
            case .message:
                break
            case .question(let format):
                if let bound = AnswerBounds.compile(format, item: nil, at: step.definitionPath.key("answerFormat"), predicates) { bounds.append(bound) }
            case .form(let form):
                for (i, item) in form.items.enumerated() {
                    let path = formItemPath(step, item.identifier) ?? step.definitionPath.key("formItems").index(i)
                    if let bound = AnswerBounds.compile(item.format, item: item.identifier, at: path.key("answerFormat"), predicates) { bounds.append(bound) }
                }
            }
            if !bounds.isEmpty { rules.answerBounds[index] = bounds }
        }
    }

    /// The path of a form item in the definition (section headers count among `formItems`).
    private static func formItemPath(_ step: Step, _ identifier: String) -> JSONPath? {
        guard let entries = step.presentation["formItems"]?.arrayValue,
              let i = entries.firstIndex(where: { $0.objectValue?["identifier"]?.stringValue == identifier }) else { return nil }
        return step.definitionPath.key("formItems").index(i)
    }

    // MARK: Steps and sections

    private static func compileSteps(_ items: [JSON], at path: JSONPath, in sections: [Int], _ b: Builder) {
        for (i, item) in items.enumerated() {
            let itemPath = path.index(i)
            // Identifiers are checked for duplicates even on steps with other problems.
            if let id = item.objectValue?["identifier"]?.stringValue, !id.isEmpty, !b.seen.insert(id).inserted {
                b.d.error("duplicateIdentifier", "Another step or section is already called \"\(id)\".", at: itemPath.key("identifier"))
                // Its other problems are reported too; the step itself is left out.
                if item.objectValue?["type"] != .string("section") {
                    _ = compileStep(item, at: itemPath, in: sections, b)
                }
                continue
            }
            if item.objectValue?["type"] == .string("section") {
                compileSection(item, at: itemPath, in: sections, b)
                continue
            }
            guard let step = compileStep(item, at: itemPath, in: sections, b) else { continue }
            b.stepIndex[step.identifier] = b.steps.count
            b.steps.append(step)
        }
    }

    private static func compileSection(_ value: JSON, at path: JSONPath, in outer: [Int], _ b: Builder) {
        guard let r = FieldReader(value, at: path, b.d, what: "a section") else { return }
        _ = r.string("type")
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        r.accept(strings: commonStepKeys)
        let visibleWhen = r.value("visibleWhen")
        let first = b.steps.count
        let index = b.sections.count
        // Reserve the section's place so nested sections get later indexes.
        b.sections.append(Section(identifier: identifier ?? "", firstStep: first, lastStep: first, sections: outer))
        if let items = r.array("steps", required: true) {
            if items.isEmpty {
                b.d.error("emptySection", "A section needs at least one step.", at: path.key("steps"))
            }
            compileSteps(items, at: path.key("steps"), in: outer + [index], b)
        }
        r.finish()
        let last = b.steps.count - 1
        b.sections[index] = Section(identifier: identifier ?? "", firstStep: first, lastStep: max(first, last), sections: outer, definitionPath: path)
        if let identifier, last >= first { b.sectionIndex[identifier] = index }
        if let visibleWhen { b.pendingSections.append((index, visibleWhen, path.key("visibleWhen"))) }
    }

    private static func compileStep(_ value: JSON, at path: JSONPath, in sections: [Int], _ b: Builder) -> Step? {
        let d = b.d
        guard let r = FieldReader(value, at: path, d, what: "a step") else { return nil }
        let before = d.problems.count
        let type = r.string("type", required: true)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        let optional = r.bool("optional") ?? false
        // An author's mark that the task may deliberately end after this step (a screening
        // that stops); only the checker reads it (`endsBeforeCompletion`).
        _ = r.bool("terminal")
        r.accept(strings: commonStepKeys)
        var calculationNames: [String] = []
        for (i, name) in (r.array("calculations") ?? []).enumerated() {
            if let name = name.stringValue { calculationNames.append(name) } else {
                d.error("wrongType", "\"calculations\" lists calculation names (strings).", at: path.key("calculations").index(i))
            }
        }
        var content: Step.Content?
        var active: ActiveStepSettings?
        switch type {
        case "instruction", "completion":
            _ = r.string("image")
            content = .message
        case "active", "countdown", "wait":
            let kind = ActiveStepSettings.Kind(rawValue: type ?? "") ?? .active
            active = ActiveStepSettings.parse(r, kind: kind, path: path, seenRecorders: &b.recorders)
            content = .message
        case "question":
            _ = r.string("placeholder")
            _ = r.string("question")
            if let initial = r.value("initial") { b.pendingInitials.append((b.steps.count, nil, initial, path.key("initial"))) }
            if let format = r.value("answerFormat", required: true) {
                content = AnswerFormat.compile(format, at: path.key("answerFormat"), d).map { .question($0) }
                if case .question(let f)? = content, f.rules is ConfirmTextFormat {
                    d.error("confirmTextOutsideForm", "A \"confirmText\" answer confirms another item of the same form; use it in a form step.", at: path.key("answerFormat").key("type"))
                }
            }
        case "form":
            _ = r.bool("useCardView")
            if let validations = r.value("validations") {
                b.pendingValidations.append((b.steps.count, validations, path.key("validations")))
            }
            if let items = r.array("formItems", required: true) {
                content = compileForm(items, at: path.key("formItems"), stepIndex: b.steps.count, b).map { .form($0) }
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
        switch content {
        case .message:
            break
        case .question(let format):
            presentation["answerFormat"] = .object(format.presentation)
        case .form(let form):
            presentation["formItems"] = presentation["formItems"].map { withEffectiveFormats($0, of: form) }
        }
        if let active {
            // The host reads the effective settings, ResearchKit's defaults included.
            presentation["stepDuration"] = .number(Double(active.duration) / 1000)
            presentation["shouldStartTimerAutomatically"] = .bool(active.startsAutomatically)
            presentation["shouldContinueOnFinish"] = .bool(active.continuesOnFinish)
        }
        return Step(type: type, identifier: identifier, optional: optional, content: content, presentation: presentation,
                    sections: sections, definitionPath: path, active: active, calculationNames: calculationNames)
    }

    /// A form's `formItems` with each item's answer format as `AnswerFormat.presentation`.
    private static func withEffectiveFormats(_ entries: JSON, of form: Form) -> JSON {
        guard case .array(let items) = entries else { return entries }
        return .array(items.map { entry in
            guard var item = entry.objectValue, let id = item["identifier"]?.stringValue,
                  let format = form.item(id)?.format else { return entry }
            item["answerFormat"] = .object(format.presentation)
            return .object(item)
        })
    }

    private static func compileForm(_ entries: [JSON], at path: JSONPath, stepIndex: Int, _ b: Builder) -> Form? {
        let d = b.d
        let before = d.problems.count
        var items: [Form.Item] = []
        var index: [String: Int] = [:]
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
            r.accept(strings: ["detailText", "placeholder", "learnMoreText"])
            let format = r.value("answerFormat", required: true).flatMap { AnswerFormat.compile($0, at: itemPath.key("answerFormat"), d) }
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

    // MARK: Section visibility and validations

    /// Form section headers' and sections' `visibleWhen`, and the forms' and the task's
    /// `validations`, compiled once every step is known (kept out of `compile` so its frame stays
    /// small under the recursion of compiling expressions).
    private static func compileVisibilityAndValidations(_ b: Builder, _ predicates: PredicateCompiler, _ r: FieldReader, _ rules: inout TaskRules) {
        for pending in b.pendingHeaders {
            guard let predicate = predicates.compile(pending.value, at: pending.path) else { continue }
            let position = rules.formHeaders[pending.step]?.count ?? 0
            rules.formHeaders[pending.step, default: []].append(FormHeaderRule(entry: pending.entry, title: pending.title, items: pending.items, predicate: predicate))
            for item in pending.items { rules.itemHeaders[pending.step, default: [:]][item] = position }
        }
        for pending in b.pendingValidations {
            let list = Validation.compileList(pending.value, at: pending.path, predicates)
            if !list.isEmpty { rules.stepValidations[pending.step] = list }
        }
        if let value = r.value("validations") {
            rules.taskValidations = Validation.compileList(value, at: .root.key("validations"), predicates)
        }
        for pending in b.pendingSections {
            if let predicate = predicates.compile(pending.value, at: pending.path) {
                rules.sectionVisibility[pending.section] = predicate
            }
        }
    }

    // MARK: Initial answers

    /// `initial` expressions: each must have the type its answer format's answers have (a choice
    /// format takes a choice, a string or a number: the value of one choice).
    private static func compileInitials(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for pending in b.pendingInitials {
            guard let step = b.steps.indices.contains(pending.step) ? b.steps[pending.step] : nil,
                  let format = step.format(item: pending.item) else { continue }
            let dateTime = (format.rules as? DateFormat)?.withTime ?? false
            guard let answerType = ExpressionType.of(format.resultType, dateTime: dateTime) else {
                b.d.error("wrongType", "A \(format.resultType.rawValue) answer has no initial value an expression can give.", at: pending.path)
                continue
            }
            let expecting: ExpressionType? = answerType == .choice ? nil : answerType
            guard let (expression, type) = ExpressionCompiler(predicates: predicates).compile(pending.value, at: pending.path, expecting: expecting) else { continue }
            if answerType == .choice, ![.choice, .string, .number, .any].contains(type) {
                b.d.error("wrongType", "The initial value of a choice is a choice's value (a string or a number), found \(type.described).", at: pending.path)
                continue
            }
            rules.initials[pending.step, default: []].append(InitialAnswer(item: pending.item, expression: expression, path: pending.path))
        }
    }

    // MARK: Piping

    /// Checks the `{{placeholders}}` of every step's texts, step modifiers' texts and validation
    /// messages against the calculations, and notes the steps that hold some.
    private static func compilePiping(_ b: Builder, _ calculations: Calculations, _ definition: JSON, _ rules: inout TaskRules) {
        let known: (String) -> Bool = { calculations.index(of: $0) != nil }
        for (i, step) in b.steps.enumerated() where Piping.checkStep(step.presentation, at: step.definitionPath, known: known, b.d) {
            rules.pipedSteps.insert(i)
        }
        let root = definition.objectValue
        for (key, modifier) in (root?["stepModifiers"]?.objectValue?.entries ?? []) {
            let setPath = JSONPath.root.key("stepModifiers").key(key).key("set")
            for (field, value) in modifier.objectValue?["set"]?.objectValue?.entries ?? [] {
                if let s = value.stringValue, Piping.check(s, at: setPath.key(field), known: known, b.d), let i = b.stepIndex[key] {
                    rules.pipedSteps.insert(i)
                }
            }
        }
        func messages(_ list: JSON?, at path: JSONPath) {
            for (i, entry) in (list?.arrayValue ?? []).enumerated() {
                if let s = entry.objectValue?["message"]?.stringValue { Piping.check(s, at: path.index(i).key("message"), known: known, b.d) }
            }
        }
        messages(root?["validations"], at: .root.key("validations"))
        for pending in b.pendingValidations { messages(pending.value, at: pending.path) }
    }

    // MARK: Async actions

    private static func compileAsyncActions(_ items: [JSON], _ b: Builder) -> [AsyncAction] {
        var actions: [AsyncAction] = []
        for (i, item) in items.enumerated() {
            let path = JSONPath.root.key("asyncActions").index(i)
            guard let r = FieldReader(item, at: path, b.d, what: "an async action") else { continue }
            let recorder = RecorderSettings.parse(r, at: path, seen: &b.recorders)
            let start = r.string("startStepIdentifier", required: true)
            let stop = r.string("stopStepIdentifier")
            r.finish()
            var startIndex: Int?, stopIndex: Int?
            if let start {
                startIndex = b.stepIndex[start]
                if startIndex == nil { b.d.error("unknownStep", "No step is called \"\(start)\".", at: path.key("startStepIdentifier")) }
            }
            if let stop {
                stopIndex = b.stepIndex[stop]
                if stopIndex == nil { b.d.error("unknownStep", "No step is called \"\(stop)\".", at: path.key("stopStepIdentifier")) }
            }
            if let recorder, let startIndex, stop == nil || stopIndex != nil {
                actions.append(AsyncAction(recorder: recorder, startStep: startIndex, stopStep: stopIndex))
            }
        }
        return actions
    }

    // MARK: Rules

    /// A rule's key: a step or a section.
    private enum Owner {
        case step(Int), section(Int)
    }

    private static func owner(_ key: String, at path: JSONPath, _ b: Builder, what: String) -> Owner? {
        if let i = b.stepIndex[key] { return .step(i) }
        if let s = b.sectionIndex[key] { return .section(s) }
        if !b.seen.contains(key) {
            b.d.error("unknownStep", "\(what) names \"\(key)\", which is no step or section of this task.", at: path)
        }
        return nil
    }

    private static func destination(_ value: JSON, at path: JSONPath, _ b: Builder) -> Destination? {
        guard let id = value.stringValue else {
            b.d.error("wrongType", "A destination is a step or section identifier, or \"$end\".", at: path)
            return nil
        }
        if id == "$end" { return .end }
        if let i = b.stepIndex[id] { return .step(i) }
        if let s = b.sectionIndex[id] { return .section(s) }
        if !b.seen.contains(id) {
            b.d.error("unknownDestination", "No step or section is called \"\(id)\".", at: path)
        }
        return nil
    }

    private static func compileNavigationRules(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        let path = JSONPath.root.key("navigationRules")
        guard case .object(let object) = value else {
            b.d.error("wrongType", "\"navigationRules\" is an object: step identifier → rule.", at: path)
            return
        }
        for (key, ruleValue) in object.entries {
            let rulePath = path.key(key)
            let target = owner(key, at: rulePath, b, what: "A navigation rule")
            guard let r = FieldReader(ruleValue, at: rulePath, b.d, what: "a navigation rule") else { continue }
            var rule: NavigationRule?
            switch r.choice("type", of: ["predicate", "direct"], required: true) {
            case "direct":
                rule = r.value("destination", required: true).flatMap { destination($0, at: rulePath.key("destination"), b) }.map { .direct($0) }
            case "predicate":
                var branches: [NavigationRule.Branch] = []
                var complete = true
                for (i, item) in (r.array("branches", required: true) ?? []).enumerated() {
                    let branchPath = rulePath.key("branches").index(i)
                    guard let br = FieldReader(item, at: branchPath, b.d, what: "a branch") else { complete = false; continue }
                    let condition = br.value("when", required: true)
                    let when = condition.flatMap { predicates.compile($0, at: branchPath.key("when")) }
                    let to = br.value("destination", required: true).flatMap { destination($0, at: branchPath.key("destination"), b) }
                    br.finish()
                    if let when, let condition, let to {
                        branches.append(.init(when: when, condition: condition, destination: to))
                    } else {
                        complete = false
                    }
                }
                let fallback = r.value("defaultDestination").flatMap { destination($0, at: rulePath.key("defaultDestination"), b) }
                if r.has("defaultDestination") && fallback == nil { complete = false }
                if complete { rule = .predicate(branches: branches, defaultDestination: fallback) }
            default:
                break
            }
            r.finish()
            switch (target, rule) {
            case (.step(let i)?, let rule?): rules.stepRules[i] = rule
            case (.section(let s)?, let rule?): rules.sectionRules[s] = rule
            default: break
            }
        }
    }

    private static func compileSkipRules(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        let path = JSONPath.root.key("skipRules")
        guard case .object(let object) = value else {
            b.d.error("wrongType", "\"skipRules\" is an object: step identifier → predicate.", at: path)
            return
        }
        for (key, predicateValue) in object.entries {
            let target = owner(key, at: path.key(key), b, what: "A skip rule")
            guard let predicate = predicates.compile(predicateValue, at: path.key(key)) else { continue }
            switch target {
            case .step(let i)?: rules.stepSkips[i] = predicate
            case .section(let s)?: rules.sectionSkips[s] = predicate
            case nil: break
            }
        }
    }

    private static func compileModifiers(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        let path = JSONPath.root.key("stepModifiers")
        guard case .object(let object) = value else {
            b.d.error("wrongType", "\"stepModifiers\" is an object: step identifier → {\"when\", \"set\"}.", at: path)
            return
        }
        for (key, modifierValue) in object.entries {
            let modifierPath = path.key(key)
            let target = owner(key, at: modifierPath, b, what: "A step modifier")
            if case .section? = target {
                b.d.error("sectionModifier", "Step modifiers apply to steps; \"\(key)\" is a section.", at: modifierPath)
            }
            guard let r = FieldReader(modifierValue, at: modifierPath, b.d, what: "a step modifier") else { continue }
            let when = r.value("when", required: true).flatMap { predicates.compile($0, at: modifierPath.key("when")) }
            var fields = JSONObject()
            if let set = r.value("set", required: true) {
                if case .object(let object) = set, object.count > 0 {
                    for (field, fieldValue) in object.entries {
                        if !StepModifier.settableFields.contains(field) {
                            b.d.error("unknownKey", "A step modifier sets " + StepModifier.settableFields.joined(separator: ", ") + "; not \"\(field)\".", at: modifierPath.key("set").key(field))
                        } else if fieldValue.stringValue == nil {
                            b.d.error("wrongType", "\"\(field)\" must be a string.", at: modifierPath.key("set").key(field))
                        } else {
                            fields[field] = fieldValue
                        }
                    }
                } else {
                    b.d.error("wrongType", "\"set\" is a non-empty object of the fields to set.", at: modifierPath.key("set"))
                }
            }
            r.finish()
            if case .step(let i)? = target, let when {
                rules.modifiers[i] = StepModifier(when: when, fields: fields)
            }
        }
    }
}

/// Options of `stepkit_task_compile_with_options`: the limits on a definition.
struct CompileOptions: Sendable {
    /// 200,000 steps and sections: about 250 MiB at the compile's peak for the smallest steps
    /// (an instruction costs about 1.2 KiB while compiling), within what the size limit allows.
    static let defaultMaxSteps = 200_000

    var input = InputLimits.definition
    var maxSteps = defaultMaxSteps

    /// `defaults`: the input limits that apply unless `limits` overrides them (a FHIR
    /// Questionnaire nests deeper than a task definition: `InputLimits.questionnaire`).
    static func parse(_ value: JSON?, defaults: InputLimits = .definition) throws(StepKitError) -> CompileOptions {
        var options = CompileOptions()
        options.input = defaults
        guard let value, !value.isNull else { return options }
        let d = Diagnostics()
        if let r = FieldReader(value, at: .root, d, what: "compile options") {
            if let limits = r.value("limits") {
                let l = FieldReader(limits, at: .root.key("limits"), d, what: "limits")
                options.input = defaults.overridden(by: l, bytesKey: "maxDefinitionBytes", depthKey: "maxDepth", stringKey: "maxStringBytes")
                if let v = l?.integer("maxSteps", in: 1...100_000_000) { options.maxSteps = v }
                l?.finish()
            }
            r.finish()
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return options
    }
}
