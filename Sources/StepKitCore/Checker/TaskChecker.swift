import StepKitBase

/// The static checker (`stepkit_task_check`): what compiles but is probably wrong. Each check is
/// a small function over the compiled task and its rule graph; see docs/checker.md.
package struct TaskChecker {
    enum Severity: String { case error, warning, info }

    struct Finding {
        var severity: Severity
        var code, message: String
        var path: JSONPath
    }

    let task: Task
    /// Reachability and dominance on the rule graph, cached as the checks ask.
    let graph: CheckerGraph
    private(set) var findings: [Finding] = []

    init(task: Task) {
        self.task = task
        self.graph = CheckerGraph(task: task)
    }

    package static func check(_ task: Task) -> JSON {
        var checker = TaskChecker(task: task)
        checker.run()
        let findings = checker.findings
        return .object([
            "problems": .array(findings.map { f in
                .object(["severity": .string(f.severity.rawValue), "code": .string(f.code), "message": .string(f.message), "path": .string(f.path.description)])
            }),
            "errors": .int(Int64(findings.filter { $0.severity == .error }.count)),
            "warnings": .int(Int64(findings.filter { $0.severity == .warning }.count)),
        ])
    }

    mutating func report(_ severity: Severity, _ code: String, _ message: String, at path: JSONPath) {
        findings.append(Finding(severity: severity, code: code, message: message, path: path))
    }

    mutating func run() {
        checkReachability()
        checkBranches()
        checkSectionRules()
        checkDestinationsInShuffledSections()
        checkSkipRulesAndModifiers()
        checkReadsUnanswered()
        checkInitialReads()
        checkHiddenItems()
        checkEndsBeforeCompletion()
        checkDuplicateTexts()
        checkCalculationsUsed()
        checkTranslations()
        checkChoiceFilters()
        checkConsent()
        checkReviewsHaveAnswers()
        checkInstanceReads()
    }

    /// A text without one of the task's declared languages: participants in that language read
    /// the default language's text there.
    mutating func checkTranslations() {
        for (path, language) in task.languages.missing {
            report(.warning, "missingTranslation", "This text has no \"\(language)\" version, a language the task declares; it is shown in \"\(task.languages.defaultLanguage)\" there.", at: path)
        }
    }

    /// The steps navigation can reach from the first one, over every edge of the rule graph that
    /// can be taken (see `liveSuccessors`); the last entry is the end.
    func reachable() -> [Bool] {
        graph.reach(from: [0], over: { liveSuccessors($0) })
    }

    /// Steps no path reaches, and steps from which no path ends the task (a loop with no way out).
    mutating func checkReachability() {
        let seen = reachable()
        for (i, step) in task.steps.enumerated() {
            let path = stepPath(i)
            if !seen[i] {
                report(.warning, "unreachable", "No path reaches the step \"\(step.identifier)\".", at: path)
            } else if task.graph.fewestAfter.indices.contains(i), task.graph.fewestAfter[i] == nil {
                report(.error, "noWayOut", "From the step \"\(step.identifier)\" no path ends the task: a loop with no way out.", at: path)
            }
        }
    }

    /// Where a step is in the definition, for messages (`CheckerGraph.stepPath`).
    func stepPath(_ index: Int) -> JSONPath { graph.stepPath(index) }
}
