import StepKitBase

/// A compiled task: immutable, validated once, shared by every session on any thread.
///
/// A class: every session holds it, and a session is copied and read on every call (as a
/// struct, each copy retained and released its twenty-odd fields, a sixth of a step's
/// instructions); `routing`, which every move reads, is built once here instead of at each read.
package final class Task: Sendable {
    let identifier: String
    /// Names this exact definition in restoration data.
    let fingerprint: Fingerprint
    /// The steps to present, in order, with sections flattened away.
    let steps: [Step]
    /// Step identifier to its index in `steps`: every look-up by identifier is O(1).
    let stepIndex: [String: Int]
    let sections: [Section]
    let sectionIndex: [String: Int]
    let rules: TaskRules
    /// Bounds on how many steps can still come, worked out once on the rule graph.
    let graph: RuleGraph
    /// Recorders that run across steps (SageResearch's async actions).
    let asyncActions: [AsyncAction]
    /// The FHIR Questionnaire's shape when the task was imported from one (`FHIR/`), for the
    /// QuestionnaireResponse export.
    package let fhir: FHIRLayout?
    /// The named values computed from answers (`calculations`).
    let calculations: Calculations
    /// Which rule governs leaving each step and where its destinations lead.
    package let routing: Routing
    /// The task's languages; this task's texts are in `language`.
    package let languages: TaskLanguages
    /// The language of this task's texts (one of `languages.declared`).
    package let language: String
    /// The same task with its texts in each other declared language, by tag (only on the task
    /// in the default language, which the task handle holds; `Languages/TaskLanguages.swift`).
    let translations: [String: Task]

    init(identifier: String, fingerprint: Fingerprint, steps: [Step], stepIndex: [String: Int], sections: [Section],
         sectionIndex: [String: Int], rules: TaskRules, graph: RuleGraph, asyncActions: [AsyncAction] = [],
         fhir: FHIRLayout? = nil, calculations: Calculations = Calculations(), routing: Routing? = nil,
         languages: TaskLanguages = .plain, language: String = "en", translations: [String: Task] = [:]) {
        self.identifier = identifier
        self.fingerprint = fingerprint
        self.steps = steps
        self.stepIndex = stepIndex
        self.sections = sections
        self.sectionIndex = sectionIndex
        self.rules = rules
        self.graph = graph
        self.asyncActions = asyncActions
        self.fhir = fhir
        self.calculations = calculations
        // The compiler hands over the routing it built the rule graph from (`routing` must be
        // of these steps, sections and rules).
        self.routing = routing ?? Routing(steps: steps, sections: sections, rules: rules)
        self.languages = languages
        self.language = language
        self.translations = translations
    }

    /// This task with the FHIR Questionnaire's shape it was imported from.
    func with(fhir layout: FHIRLayout) -> Task {
        Task(identifier: identifier, fingerprint: fingerprint, steps: steps, stepIndex: stepIndex, sections: sections,
             sectionIndex: sectionIndex, rules: rules, graph: graph, asyncActions: asyncActions, fhir: layout,
             calculations: calculations, routing: routing, languages: languages, language: language,
             translations: translations.mapValues { $0.with(fhir: layout) })
    }

    /// This task (compiled from the default language's texts) with its languages and its
    /// translations, each compiled from its own language's texts.
    func with(languages: TaskLanguages, translations: [String: Task]) -> Task {
        func labelled(_ t: Task, _ language: String, _ translations: [String: Task]) -> Task {
            Task(identifier: t.identifier, fingerprint: t.fingerprint, steps: t.steps, stepIndex: t.stepIndex, sections: t.sections,
                 sectionIndex: t.sectionIndex, rules: t.rules, graph: t.graph, asyncActions: t.asyncActions, fhir: t.fhir,
                 calculations: t.calculations, routing: t.routing, languages: languages, language: language, translations: translations)
        }
        return labelled(self, languages.defaultLanguage, translations.reduce(into: [:]) { $0[$1.key] = labelled($1.value, $1.key, [:]) })
    }

    /// The task with its texts in `language` (a declared language; the default otherwise).
    package func translated(to language: String) -> Task {
        language == self.language ? self : translations[language] ?? self
    }

    /// What the host must ask the participant for before the task's recorders can run
    /// (ResearchKit's `requestedPermissions`), sorted.
    var requestedPermissions: [String] {
        let recorders = steps.flatMap { $0.active?.recorders ?? [] } + asyncActions.map(\.recorder)
        return Array(Set(recorders.compactMap(\.permission))).sorted()
    }

    func step(at index: Int) -> Step? {
        steps[ifPresent: index]
    }

    func section(at index: Int) -> Section? {
        sections[ifPresent: index]
    }
}

/// When a task refuses a missing required answer (the task's `requiredAnswersChecked`).
/// `Session+Answers.swift` (`forwardProblems`) is the one place that reads it.
enum RequiredAnswers: String, Sendable, CaseIterable {
    /// Going forward from a step needs its required answers (ResearchKit's rule; the default).
    case perStep
    /// Going forward leaves a step with required answers missing; only completing the task needs
    /// every required answer on the path (FHIR's rule: a `completed` response has them all).
    case atCompletion
}

/// Everything that makes a task navigable (ResearchKit's `ORKNavigableOrderedTask`), by index.
struct TaskRules: Sendable {
    var stepRules = IndexTable<NavigationRule>()
    var sectionRules = IndexTable<NavigationRule>()
    var stepSkips = IndexTable<Predicate>()
    var sectionSkips = IndexTable<Predicate>()
    var modifiers = IndexTable<StepModifier>()
    /// Form item visibility: step index, then item identifier.
    var visibility = IndexTable<[String: Predicate]>()
    /// Form section headers with a `visibleWhen`, per step, in form order.
    var formHeaders = IndexTable<[FormHeaderRule]>()
    /// Per step: each item under a header with a `visibleWhen` → that header's index in
    /// `formHeaders[step]`.
    var itemHeaders = IndexTable<[String: Int]>()
    /// Per form step with visibility rules: the items an item's or a header's `visibleWhen`
    /// governs, sorted, each with the conditions that govern it (`collectGovernedItems`), so a
    /// call works out what is hidden without gathering them again or looking an item up by name.
    var governedItems = IndexTable<[GovernedItem]>()
    /// Sections' `visibleWhen`, by section index: the section is skipped while it does not hold.
    var sectionVisibility = IndexTable<Predicate>()
    /// Form steps' `validations`, by step index.
    var stepValidations = IndexTable<[Validation]>()
    /// The task's `validations`, checked when going forward would complete the task.
    var taskValidations: [Validation] = []
    /// Per step: the `initial` expressions of its question or form items (`Session+Initial`).
    var initials = IndexTable<[InitialAnswer]>()
    /// When missing required answers are refused (`requiredAnswersChecked`).
    var requiredAnswers = RequiredAnswers.perStep
    /// The steps whose texts (or step modifier's texts) hold `{{placeholders}}` (`Piping`).
    var pipedSteps: Set<Int> = []
    /// Per step: the calculations its state shows (indexes into `Calculations.list`).
    var stepCalculations = IndexTable<[Int]>()
    /// Per step: the conditions on its choice lists (`visibleWhen` of choices, `choicesFrom`).
    var choiceFilters = IndexTable<[ChoiceFilter]>()
    /// The task's `timeLimit` (milliseconds) and what each step's says (`TimeLimits.swift`).
    var timeLimits = TimeLimits()
    /// Whether some step shuffles a list (`Randomization`) or plays a game that draws (`Games/`):
    /// a run then draws a seed.
    var shuffles = false
    /// Per step: the bounds its answer formats give as expressions.
    var answerBounds = IndexTable<[AnswerBounds]>()
    /// The patterns of `matches` conditions, by the step whose answer they read (see
    /// `ConditionPatterns`).
    var conditionPatterns = ConditionPatterns()
    /// Per step: its repeating blocks (`TaskCompiler+Repeats`, `Session+Instances`).
    var repeats = IndexTable<[RepeatingBlock]>()
    /// Whether some repeating block has a `count` expression (`set_answer` then checks each).
    var repeatCounts = false
    /// Per step: the `visibleWhen` of repeating groups' items, evaluated in each instance
    /// (`Session+InstanceReads`), by block then item, in the group's order.
    var instanceVisibility = IndexTable<[(block: String, items: [(item: String, predicate: Predicate)])]>()
    /// Repeating blocks of steps (`repeat` on a section; `TaskCompiler+StepBlocks`,
    /// `Session+StepBlocks`), and per step inside one, its place in `stepBlocks`.
    var stepBlocks: [StepBlock] = []
    var blockOfStep = IndexTable<Int>()
    var blockOfSection = IndexTable<Int>()

    /// Fills `governedItems` from `visibility` and `itemHeaders` (once, when the task compiles).
    mutating func collectGovernedItems() {
        for step in Set(visibility.keys).union(itemHeaders.keys) {
            let items = Set(visibility[step]?.keys.map { $0 } ?? []).union(itemHeaders[step]?.keys.map { $0 } ?? [])
            guard !items.isEmpty else { continue }
            let headers = formHeaders[step] ?? []
            governedItems[step] = items.sorted().map { item in
                let header = itemHeaders[step]?[item].flatMap { headers[ifPresent: $0]?.predicate }
                return GovernedItem(identifier: item, header: header, own: visibility[step]?[item])
            }
        }
    }

    var isEmpty: Bool {
        stepRules.isEmpty && sectionRules.isEmpty && stepSkips.isEmpty && sectionSkips.isEmpty && modifiers.isEmpty && visibility.isEmpty
            && formHeaders.isEmpty && sectionVisibility.isEmpty
    }
}

/// The SHA-256 of a task definition's canonical form (`CanonicalJSON`: keys sorted, whole numbers
/// as integers, no whitespace), worked out the first time it is needed (a save, a restore or
/// `stepkit_task_info`), not at compile time, which stays close to the cost of parsing. The same definition stored another
/// way (a `jsonb` column reorders keys and writes `10` as `10.0`) has the same fingerprint; any
/// change of content gives another. Taking it fails only when libcrypto cannot be loaded
/// (`Digest`, whose `LibCrypto` keeps that outcome); a failure is not cached here.
final class Fingerprint: Sendable {
    private let definition: JSON
    private let cache = Locked<String?>(nil)

    init(_ definition: JSON) { self.definition = definition }

    func value() throws(StepKitError) -> String {
        try cache.withLock { (cached) throws(StepKitError) -> String in
            if let cached { return cached }
            let value = try Digest.sha256(CanonicalJSON.text(definition))
            cached = value
            return value
        }
    }
}
