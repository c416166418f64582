import StepKitBase

/// Paths that end the task without passing a completion step (only for tasks that have one).
extension TaskChecker {
    mutating func checkEndsBeforeCompletion() {
        let n = task.steps.count
        guard task.steps.contains(where: { $0.type == "completion" }) else { return }
        // A completion step, or a step the author marks `"terminal": true` (a deliberate early
        // end), stops the search unless a skip rule may pass over it.
        let barrier = (0..<n).map { (task.steps[$0].type == "completion" || task.steps[$0].isTerminal) && !graph.skippable($0) }
        // Over the edges navigation can really take (never-taken branches left out).
        let reached = graph.reach(from: [0], over: { liveSuccessors($0) }, stoppingAt: { barrier[$0] })
        for i in 0..<n where reached[i] && !barrier[i] && liveSuccessors(i).contains(n) {
            let step = task.steps[i]
            if step.type == "completion" || step.isTerminal {
                report(.warning, "endsBeforeCompletion",
                       "The \(step.type == "completion" ? "completion" : "terminal") step \"\(step.identifier)\" may be passed over by a skip rule, and the task then ends without a completion step.",
                       at: stepPath(i))
            } else {
                report(.warning, "endsBeforeCompletion",
                       "After the step \"\(step.identifier)\" the task can end without reaching a completion step.", at: endPath(after: i))
            }
        }
    }

    /// Where the move to the end after step `i` is written: a `$end` destination of its rule (or
    /// of the section rule that applies), else the step itself (the last step in order).
    func endPath(after i: Int) -> JSONPath {
        guard let (key, rule, path) = governingRule(i) else { return stepPath(i) }
        switch rule {
        case .direct(let d):
            return d == .end ? path.key("destination") : stepPath(i)
        case .predicate(let branches, let fallback):
            let fates = branchFates(key: key, rule: rule, step: i, path: path).fates
            if let b = branches.indices.first(where: { branches[$0].destination == .end && fates.indices.contains($0) && fates[$0] == .live }) {
                return path.key("branches").index(b).key("destination")
            }
            return fallback == .end ? path.key("defaultDestination") : stepPath(i)
        }
    }
}
