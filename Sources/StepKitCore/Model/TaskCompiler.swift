import StepKitBase

/// Turns a task definition (JSON) into a `Task`, or reports every problem it has at once.
///
/// Two passes: the steps first (sections flattened, answer formats compiled), then everything
/// that refers to steps by identifier (rules, skip rules, step modifiers, item visibility), so a
/// rule may name a step defined after it.
package enum TaskCompiler {
    /// The state of one compilation.
    final class Builder {
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
        /// Repeating blocks' `count` expressions, compiled once every step is known.
        var pendingCounts: [(step: Int, item: String?, value: JSON, path: JSONPath)] = []
        /// Repeating groups' items' `initial`, compiled in their block's instance scope.
        var pendingInstanceInitials: [(step: Int, block: String, item: String, value: JSON, path: JSONPath)] = []
        /// Repeating groups' items' `visibleWhen`, compiled in their block's instance scope.
        var pendingInstanceVisibility: [(step: Int, block: String, item: String, value: JSON, path: JSONPath)] = []
        /// Repeating sections (`TaskCompiler+StepBlocks`): the section, its bounds, its path.
        var pendingStepBlocks: [(section: Int, bounds: RepeatBounds, path: JSONPath)] = []
        /// How many repeating groups the items being compiled are inside (0: a step's own items;
        /// 1: a repeating group's, which may hold one repeating group; 2: that one's, which may
        /// hold none): bounds the nesting (`TaskCompiler+Repeats`).
        var groupDepth = 0
        /// `consentDocument`, read before the steps that show it (`Model/ConsentDocument.swift`);
        /// whether the definition has one (a document with problems is reported where it is).
        var consentDocument: ConsentDocument?
        var consentDocumentGiven = false

        init(_ d: Diagnostics) { self.d = d }
    }

    /// Compiles `definition` once per declared language (`Languages/TaskLanguages.swift`): the
    /// task in the default language, holding the others. All are fingerprinted as `definition`.
    package static func compile(_ definition: JSON, maxSteps: Int = CompileOptions.defaultMaxSteps) throws(StepKitError) -> Task {
        let d = Diagnostics()
        guard let (languages, resolved) = TaskLanguages.read(definition, d), let home = resolved.first else {
            throw StepKitError(.definition, problems: d.problems)
        }
        guard languages.isDeclared else { return try compile(home.definition, fingerprinted: definition, maxSteps: maxSteps) }
        let task = try compile(home.definition, fingerprinted: definition, maxSteps: maxSteps)
        var translations: [String: Task] = [:]
        for other in resolved.dropFirst() {
            translations[other.language] = try compile(other.definition, fingerprinted: definition, maxSteps: maxSteps)
        }
        return task.with(languages: languages, translations: translations)
    }

    /// About how many steps and sections `items` holds, sections' steps included (a sensor task
    /// template counts one): the room the builder reserves. Bounded by the definition's nesting.
    private static func stepCount(_ items: [JSON]) -> Int {
        var count = items.count
        for item in items {
            guard case .object(let object) = item, case .string("section")? = object["type"],
                  case .array(let inner)? = object["steps"] else { continue }
            count += stepCount(inner)
        }
        return count
    }

    /// Compiles a definition whose texts are plain strings.
    private static func compile(_ definition: JSON, fingerprinted original: JSON, maxSteps: Int) throws(StepKitError) -> Task {
        let d = Diagnostics()
        guard let r = FieldReader(definition, at: .root, d, what: "a task") else {
            throw StepKitError(.definition, problems: d.problems)
        }
        let b = Builder(d)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        if let document = r.value("consentDocument") {
            b.consentDocumentGiven = true
            b.consentDocument = ConsentDocument.compile(document, at: .root.key("consentDocument"), d)
        }
        if let items = r.array("steps", required: true) {
            if items.isEmpty {
                d.error("emptySteps", "A task needs at least one step.", at: .root.key("steps"))
            }
            // Room for every step up front: grown step by step, the identifier set and index
            // were rehashed at every doubling (a twentieth of compiling the survey).
            let count = stepCount(items)
            b.seen.reserveCapacity(count)
            b.stepIndex.reserveCapacity(count)
            b.steps.reserveCapacity(count)
            compileSteps(items, at: .root.key("steps"), in: [], b)
        }
        if b.steps.count + b.sections.count > maxSteps {
            d.error("tooManySteps", "The task has more than \(maxSteps) steps and sections (the limit \"maxSteps\").", at: .root.key("steps"))
        }
        var predicates = PredicateCompiler(steps: b.steps, stepIndex: b.stepIndex, sectionIdentifiers: Set(b.sectionIndex.keys), diagnostics: d)
        predicates.repeatingSections = repeatingSections(b)
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
        compileVisibilityAndValidations(b, predicates, r, &rules)
        compileChoiceFilters(b, predicates, &rules)
        rules.timeLimits = compileTimeLimits(r, b)
        // A game that draws (spatial span, PSAT, Stroop) needs the run's seed as a shuffled list does.
        rules.shuffles = b.steps.contains { !Randomization.lists(of: $0).isEmpty || $0.active?.game?.usesSeed == true }
            || b.sections.contains(where: \.shuffled)
        compileInitials(b, predicates, &rules)
        compileRepeats(b, predicates, &rules)
        compileStepBlocks(b, predicates, &rules)
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
        return Task(identifier: identifier, fingerprint: Fingerprint(original), steps: b.steps, stepIndex: b.stepIndex, sections: b.sections,
                    sectionIndex: b.sectionIndex, rules: rules, graph: RuleGraph(routing), asyncActions: asyncActions,
                    calculations: calculations, routing: routing)
    }
}
