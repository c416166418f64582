import StepKitBase

/// The rule graph as the checker reads it: which steps can come before which, which steps every
/// path passes, which steps may be passed over by a skip rule. Answers are cached per step, since
/// a check asks about the few steps predicates read, not about every pair.
final class CheckerGraph {
    let task: Task
    /// Steps; `count` stands for the end of the task.
    let count: Int
    private var predecessorsCache: [[Int]]?
    private(set) lazy var fromStart: [Bool] = reach(from: [0], over: successors)
    private(set) lazy var navigationRules: [(key: String, rule: NavigationRule, step: Int, path: JSONPath)] = computeNavigationRules()
    private(set) lazy var ruleSites: [RuleSite] = computeRuleSites()
    /// Pairwise comparisons of predicates left for this check (see `PredicateAnalysis`).
    let budget = WorkBudget(4_000_000)
    /// The fate of each rule's branches (by the rule's path), worked out once for every check.
    var fates: [String: (fates: [TaskChecker.BranchFate], alwaysMatches: Int?)] = [:]

    init(task: Task) {
        self.task = task
        self.count = task.steps.count
    }

    func successors(_ i: Int) -> [Int] {
        task.graph.successors[ifPresent: i] ?? []
    }

    /// Whether a skip rule (the step's own or one of its sections') may pass over the step.
    func skippable(_ i: Int) -> Bool { task.routing.skippable(i) }

    /// The one breadth-first search of the checker: from `starts` (which are marked) over `next`,
    /// not going on from a step where `stops` holds. The result has `count + 1` entries, the last
    /// one for the end (marked when reached, never gone on from).
    func reach(from starts: [Int], over next: (Int) -> [Int], stoppingAt stops: (Int) -> Bool = { _ in false }) -> [Bool] {
        var seen = Array(repeating: false, count: count + 1)
        var queue: [Int] = []
        for s in starts where s >= 0 && s <= count && !seen[s] {
            seen[s] = true
            queue.append(s)
        }
        var head = 0
        while head < queue.count {
            let v = queue[head]
            head += 1
            guard v < count, !stops(v) else { continue }
            for s in next(v) where s >= 0 && s <= count && !seen[s] {
                seen[s] = true
                queue.append(s)
            }
        }
        return seen
    }

    /// Whether step `q` can have been visited (and left) before navigation reaches step `x`:
    /// some path from the start passes `q` and then reaches `x` (in at least one move).
    ///
    /// Strongly connected components answer most questions at once: inside one component (a
    /// loop) every step can follow every other; a component later in topological order never
    /// leads back to an earlier one. Otherwise a breadth-first search from `q` stops as soon as
    /// it finds `x`, so a rule reading the step just before it costs a few steps, not the task.
    func canPrecede(_ q: Int, _ x: Int) -> Bool {
        guard fromStart.indices.contains(q), fromStart[q], x >= 0, x <= count else { return false }
        let c = components
        if c.component[q] == c.component[x] { return c.looping[c.component[q]] }
        // Tarjan numbers components in reverse topological order: edges go to lower numbers.
        if c.component[x] > c.component[q] { return false }
        stamp += 1
        if visited.count != count + 1 { visited = Array(repeating: 0, count: count + 1) }
        var queue = successors(q)
        var head = 0
        while head < queue.count {
            let v = queue[head]
            head += 1
            guard v >= 0, v <= count, visited[v] != stamp else { continue }
            if v == x { return true }
            visited[v] = stamp
            // A component numbered below x's cannot lead to x.
            guard c.component[v] >= c.component[x] else { continue }
            queue.append(contentsOf: successors(v))
        }
        return false
    }

    private var stamp = 0
    private var visited: [Int] = []

    /// Strongly connected components (Tarjan, iterative), numbered in the order Tarjan emits
    /// them: every edge goes from a component to one with the same or a lower number.
    private(set) lazy var components: (component: [Int], looping: [Bool]) = {
        let total = count + 1
        var component = Array(repeating: -1, count: total)
        var looping: [Bool] = []
        StronglyConnected.components(count: total, successors: { v in v < count ? successors(v) : [] }) { members, loops in
            for w in members { component[w] = looping.count }
            looping.append(loops)
        }
        return (component, looping)
    }()

    /// Whether every path from the start to `x` passes `q` (q ≠ x), from the dominator tree.
    func dominates(_ q: Int, _ x: Int) -> Bool {
        guard q != x, fromStart.indices.contains(x), fromStart[x], fromStart.indices.contains(q), fromStart[q] else { return false }
        let d = dominatorIntervals
        return d.enter[q] <= d.enter[x] && d.exit[x] <= d.exit[q]
    }

    /// The dominator tree of the steps reachable from the start (Cooper, Harvey and Kennedy's
    /// iterative algorithm over reverse postorder), as entry and exit times of a depth-first walk
    /// of the tree: `q` dominates `x` when `x`'s interval lies inside `q`'s.
    private(set) lazy var dominatorIntervals: (enter: [Int], exit: [Int]) = {
        let total = count + 1
        var enter = Array(repeating: -1, count: total), exit = Array(repeating: -1, count: total)
        guard count > 0 else { return (enter, exit) }
        // Postorder of the nodes reachable from 0.
        var order: [Int] = []
        var post = Array(repeating: -1, count: total)
        var seen = Array(repeating: false, count: total)
        var work: [(node: Int, edge: Int)] = [(0, 0)]
        seen[0] = true
        while let top = work.last {
            let edges = top.node < count ? successors(top.node) : []
            if top.edge < edges.count {
                work[work.count - 1].edge += 1
                let w = edges[top.edge]
                if w >= 0, w < total, !seen[w] {
                    seen[w] = true
                    work.append((w, 0))
                }
                continue
            }
            work.removeLast()
            post[top.node] = order.count
            order.append(top.node)
        }
        var idom = Array(repeating: -1, count: total)
        idom[0] = 0
        func intersect(_ a: Int, _ b: Int) -> Int {
            var a = a, b = b
            while a != b {
                while post[a] < post[b] { a = idom[a] }
                while post[b] < post[a] { b = idom[b] }
            }
            return a
        }
        var changed = true
        while changed {
            changed = false
            for v in order.reversed() where v != 0 {
                var candidate = -1
                for p in predecessors(v) where p >= 0 && p < total && idom[p] >= 0 {
                    candidate = candidate < 0 ? p : intersect(p, candidate)
                }
                if candidate >= 0 && idom[v] != candidate {
                    idom[v] = candidate
                    changed = true
                }
            }
        }
        var children = Array(repeating: [Int](), count: total)
        for v in order where v != 0 && idom[v] >= 0 { children[idom[v]].append(v) }
        var clock = 0
        var walk: [(node: Int, child: Int)] = [(0, 0)]
        enter[0] = clock; clock += 1
        while let top = walk.last {
            if top.child < children[top.node].count {
                walk[walk.count - 1].child += 1
                let c = children[top.node][top.child]
                enter[c] = clock; clock += 1
                walk.append((c, 0))
            } else {
                exit[top.node] = clock; clock += 1
                walk.removeLast()
            }
        }
        return (enter, exit)
    }()

    /// Steps that lead to `x` in one move.
    func predecessors(_ x: Int) -> [Int] {
        if predecessorsCache == nil { predecessorsCache = RuleGraph.predecessors(task.graph.successors) }
        guard let p = predecessorsCache, p.indices.contains(x) else { return [] }
        return p[x]
    }
}

/// One predicate of the task and where it runs: a branch of a navigation rule, a skip rule, a
/// step modifier or a form item's `visibleWhen`.
struct RuleSite {
    enum Kind {
        /// A branch of the navigation rule named `rule` (a step or a section), at `index`.
        case branch(rule: String, index: Int)
        case skipRule(String)
        case modifier(String)
        case visibility(item: String)
        /// A form section header's `visibleWhen` (the header at `entry` of `formItems`).
        case headerVisibility(title: String, entry: Int)
        /// A section's `visibleWhen` (the section is skipped while it does not hold).
        case sectionVisibility(String)
    }

    let kind: Kind
    let predicate: Predicate
    /// Where the predicate is in the definition.
    let path: JSONPath
    /// The step at which it is evaluated.
    let step: Int
    /// Whether it runs after `step` was left (a navigation rule), so `step`'s own answer counts;
    /// whether it reads `step`'s live answers (a form's `visibleWhen` reading the same form).
    let afterStep, readsOwnLive: Bool

    var what: String {
        switch kind {
        case .branch(let rule, let index): return "Branch \(index) of the navigation rule of \"\(rule)\""
        case .skipRule(let key): return "The skip rule of \"\(key)\""
        case .modifier(let key): return "The step modifier of \"\(key)\""
        case .visibility(let item): return "The visibleWhen of the item \"\(item)\""
        case .headerVisibility(let title, _): return "The visibleWhen of the section header \"\(title)\""
        case .sectionVisibility(let key): return "The visibleWhen of the section \"\(key)\""
        }
    }
}

extension CheckerGraph {
    /// Where a step is in the definition, for messages: `steps[3]`, or inside sections.
    func stepPath(_ index: Int) -> JSONPath {
        task.step(at: index)?.definitionPath ?? JSONPath.root.key("steps").index(index)
    }

    /// The rule that applies after step `i` (`Routing`'s answer), with its key and path in
    /// `navigationRules`.
    func governingRule(_ i: Int) -> (key: String, rule: NavigationRule, path: JSONPath)? {
        guard let governing = task.routing.governing(leaving: i) else { return nil }
        let key = task.routing.identifier(of: governing.owner)
        return (key, governing.rule, JSONPath.root.key("navigationRules").key(key))
    }

    fileprivate func computeNavigationRules() -> [(key: String, rule: NavigationRule, step: Int, path: JSONPath)] {
        var rules: [(key: String, rule: NavigationRule, step: Int, path: JSONPath)] = []
        let root = JSONPath.root.key("navigationRules")
        for (i, rule) in task.rules.stepRules {
            guard let step = task.step(at: i) else { continue }
            rules.append((step.identifier, rule, i, root.key(step.identifier)))
        }
        for (s, rule) in task.rules.sectionRules {
            guard let section = task.section(at: s) else { continue }
            rules.append((section.identifier, rule, section.lastStep, root.key(section.identifier)))
        }
        return rules.sorted { ($0.step, $0.key) < ($1.step, $1.key) }
    }

    fileprivate func computeRuleSites() -> [RuleSite] {
        var sites: [RuleSite] = []
        for (key, rule, step, path) in navigationRules {
            guard case .predicate(let branches, _) = rule else { continue }
            for (b, branch) in branches.enumerated() {
                sites.append(RuleSite(kind: .branch(rule: key, index: b), predicate: branch.when,
                                      path: path.key("branches").index(b).key("when"), step: step, afterStep: true, readsOwnLive: false))
            }
        }
        let skips = JSONPath.root.key("skipRules")
        for (i, predicate) in task.rules.stepSkips.sorted(by: { $0.key < $1.key }) {
            guard let step = task.step(at: i) else { continue }
            sites.append(RuleSite(kind: .skipRule(step.identifier), predicate: predicate, path: skips.key(step.identifier),
                                  step: i, afterStep: false, readsOwnLive: false))
        }
        for (s, predicate) in task.rules.sectionSkips.sorted(by: { $0.key < $1.key }) {
            guard let section = task.section(at: s) else { continue }
            sites.append(RuleSite(kind: .skipRule(section.identifier), predicate: predicate, path: skips.key(section.identifier),
                                  step: section.firstStep, afterStep: false, readsOwnLive: false))
        }
        let modifiers = JSONPath.root.key("stepModifiers")
        for (i, modifier) in task.rules.modifiers.sorted(by: { $0.key < $1.key }) {
            guard let step = task.step(at: i) else { continue }
            sites.append(RuleSite(kind: .modifier(step.identifier), predicate: modifier.when, path: modifiers.key(step.identifier).key("when"),
                                  step: i, afterStep: false, readsOwnLive: false))
        }
        for (i, items) in task.rules.visibility.sorted(by: { $0.key < $1.key }) {
            for (item, predicate) in items.sorted(by: { $0.key < $1.key }) {
                sites.append(RuleSite(kind: .visibility(item: item), predicate: predicate, path: itemPath(step: i, item: item).key("visibleWhen"),
                                      step: i, afterStep: false, readsOwnLive: true))
            }
        }
        for (i, headers) in task.rules.formHeaders.sorted(by: { $0.key < $1.key }) {
            for header in headers {
                sites.append(RuleSite(kind: .headerVisibility(title: header.title, entry: header.entry), predicate: header.predicate,
                                      path: stepPath(i).key("formItems").index(header.entry).key("visibleWhen"),
                                      step: i, afterStep: false, readsOwnLive: true))
            }
        }
        for (s, predicate) in task.rules.sectionVisibility.sorted(by: { $0.key < $1.key }) {
            guard let section = task.section(at: s) else { continue }
            sites.append(RuleSite(kind: .sectionVisibility(section.identifier), predicate: predicate, path: section.definitionPath.key("visibleWhen"),
                                  step: section.firstStep, afterStep: false, readsOwnLive: false))
        }
        return sites
    }

    /// Where a form item is in the definition: `steps[2].formItems[3]`.
    func itemPath(step i: Int, item: String) -> JSONPath {
        let entries = task.step(at: i)?.presentation["formItems"]?.arrayValue ?? []
        let index = entries.firstIndex { $0.objectValue?["identifier"]?.stringValue == item }
        return stepPath(i).key("formItems").index(index ?? 0)
    }

    /// Whether the answer a selector reads can exist when the predicate at `site` runs.
    func canBeAnswered(_ selector: Selector, at site: RuleSite) -> Bool {
        guard let q = TaskChecker.step(of: selector) else { return true }
        if q == site.step && (site.afterStep || site.readsOwnLive) { return true }
        return canPrecede(q, site.step)
    }

    /// Whether the answer a selector reads is certainly there when the predicate at `site` runs:
    /// a required question (or required, always visible form item) of a step that cannot be
    /// skipped and that every path to the site passes.
    /// With `requiredAnswersChecked: "atCompletion"` no answer is certain before the task
    /// completes: a step may be left with its required answers missing.
    func mustBeAnswered(_ selector: Selector, at site: RuleSite) -> Bool {
        guard task.rules.requiredAnswers == .perStep else { return false }
        guard let q = TaskChecker.step(of: selector), let step = task.step(at: q), !step.optional, !skippable(q) else { return false }
        switch (selector, step.content) {
        case (.step, .question):
            break
        case (.item(_, let item), .form(let form)):
            guard let found = form.item(item), !found.optional, task.rules.visibility[q]?[item] == nil,
                  task.rules.itemHeaders[q]?[item] == nil else { return false }
        default:
            return false
        }
        if q == site.step { return site.afterStep }
        return dominates(q, site.step)
    }
}

extension TaskChecker {
    /// The navigation rules in definition order of their steps: (key, rule, step it runs after,
    /// path of the rule).
    func navigationRules() -> [(key: String, rule: NavigationRule, step: Int, path: JSONPath)] { graph.navigationRules }

    /// Every predicate of the task with where it runs, in a stable order.
    func ruleSites() -> [RuleSite] { graph.ruleSites }

    func itemPath(step i: Int, item: String) -> JSONPath { graph.itemPath(step: i, item: item) }

    /// The step a selector reads, if it is a step of this task.
    static func step(of selector: Selector) -> Int? {
        switch selector {
        case .step(let i): return i
        case .item(let i, _): return i
        case .instance(let r): return r.step ?? r.block.step
        case .external: return nil
        }
    }

    func canBeAnswered(_ selector: Selector, at site: RuleSite) -> Bool { graph.canBeAnswered(selector, at: site) }

    func mustBeAnswered(_ selector: Selector, at site: RuleSite) -> Bool { graph.mustBeAnswered(selector, at: site) }

    /// The analysis of predicates as they run at `site`. With `usingUnanswerable` false, a
    /// read of a step that cannot have been answered yet is not exploited (`readsUnansweredStep`
    /// reports it already, with the reason).
    func analysis(at site: RuleSite, usingUnanswerable: Bool = false) -> PredicateAnalysis {
        let graph = self.graph
        return PredicateAnalysis(task: graph.task,
                                 mustBeAnswered: { [graph] in graph.mustBeAnswered($0, at: site) },
                                 cannotBeAnswered: { [graph] in usingUnanswerable && !graph.canBeAnswered($0, at: site) },
                                 budget: graph.budget)
    }
}
