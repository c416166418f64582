/// Paths that end the task without passing a completion step (only for tasks that have one).
extension TaskChecker {
    mutating func checkEndsBeforeCompletion() {
        let n = task.steps.count
        guard task.steps.contains(where: { $0.type == "completion" }) else { return }
        // A completion step stops the search unless a skip rule may pass over it.
        let barrier = (0..<n).map { task.steps[$0].type == "completion" && !graph.skippable($0) }
        // Over the edges navigation can really take (never-taken branches left out).
        var next: [[Int]] = Array(repeating: [], count: n)
        var reached = Array(repeating: false, count: n + 1)
        var queue = [0]
        if n > 0 { reached[0] = true }
        var head = 0
        while head < queue.count {
            let v = queue[head]
            head += 1
            guard v < n, !barrier[v] else { continue }
            next[v] = liveSuccessors(v)
            for s in next[v] where s >= 0 && s <= n && !reached[s] {
                reached[s] = true
                queue.append(s)
            }
        }
        for i in 0..<n where reached[i] && !barrier[i] && next[i].contains(n) {
            let step = task.steps[i]
            if step.type == "completion" {
                report(.warning, "endsBeforeCompletion",
                       "The completion step \"\(step.identifier)\" may be passed over by a skip rule, and the task then ends without a completion step.",
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
