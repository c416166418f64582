import StepKitBase

/// Branches that can never be taken, branches shadowed by an earlier one that always matches,
/// and skip rules and step modifiers that never (or always) apply.
extension TaskChecker {
    /// What becomes of each branch of a predicate rule.
    enum BranchFate: Equatable {
        case live
        /// Its condition can never hold.
        case never
        /// An earlier branch always matches.
        case shadowed(by: Int)
        /// An earlier branch has the same condition.
        case twin(of: Int)
    }

    /// The fate of each branch of a rule, and the branch that always matches (if any), which
    /// leaves the rule's fallback unused.
    func branchFates(key: String, rule: NavigationRule, step: Int, path: JSONPath) -> (fates: [BranchFate], alwaysMatches: Int?) {
        if let cached = graph.fates[path.description] { return cached }
        let result = computeBranchFates(key: key, rule: rule, step: step, path: path)
        graph.fates[path.description] = result
        return result
    }

    private func computeBranchFates(key: String, rule: NavigationRule, step: Int, path: JSONPath) -> (fates: [BranchFate], alwaysMatches: Int?) {
        guard case .predicate(let branches, _) = rule else { return ([], nil) }
        var fates: [BranchFate] = []
        var coveredBy: Int?
        var earlier: [Int: [Int]] = [:]  // structural hash → branches with it
        for (b, branch) in branches.enumerated() {
            let hash = PredicateAnalysis.structuralHash(branch.when)
            defer { earlier[hash, default: []].append(b) }
            if let earlier = coveredBy {
                fates.append(.shadowed(by: earlier))
                continue
            }
            if let twin = earlier[hash]?.first(where: { PredicateAnalysis.same(branches[$0].when, branch.when) }) {
                fates.append(.twin(of: twin))
                continue
            }
            let site = RuleSite(kind: .branch(rule: key, index: b), predicate: branch.when, path: path.key("branches").index(b).key("when"),
                                step: step, afterStep: true, readsOwnLive: false)
            let analysis = analysis(at: site)
            if analysis.never(branch.when) {
                fates.append(.never)
            } else {
                if analysis.always(branch.when) { coveredBy = b }
                fates.append(.live)
            }
        }
        return (fates, coveredBy)
    }

    mutating func checkBranches() {
        for (key, rule, step, path) in navigationRules() {
            guard case .predicate(_, let fallback) = rule else { continue }
            let (fates, alwaysMatches) = branchFates(key: key, rule: rule, step: step, path: path)
            for (b, fate) in fates.enumerated() {
                let branchPath = path.key("branches").index(b)
                switch fate {
                case .live:
                    continue
                case .never:
                    report(.warning, "branchNeverTaken",
                           "Branch \(b) of the rule of \"\(key)\" is never taken: its condition can never hold.", at: branchPath)
                case .shadowed(let earlier):
                    report(.warning, "branchShadowed",
                           "Branch \(b) of the rule of \"\(key)\" is never taken: branch \(earlier) before it always matches.", at: branchPath)
                case .twin(let earlier):
                    report(.warning, "branchShadowed",
                           "Branch \(b) of the rule of \"\(key)\" is never taken: branch \(earlier) before it has the same condition.", at: branchPath)
                }
            }
            if let earlier = alwaysMatches, fallback != nil {
                report(.warning, "defaultNeverUsed",
                       "The defaultDestination of the rule of \"\(key)\" is never used: branch \(earlier) always matches.", at: path.key("defaultDestination"))
            }
        }
    }

    /// Where navigation can really go after step `i`: the rule graph's edges (`Routing`'s) without
    /// the branches that are never taken (and without the fallback when a branch always matches).
    func liveSuccessors(_ i: Int) -> [Int] {
        guard let governing = governingRule(i), case .predicate = governing.rule else { return graph.successors(i) }
        let (fates, alwaysMatches) = branchFates(key: governing.key, rule: governing.rule, step: i, path: governing.path)
        let n = task.steps.count
        var next: [Int] = []
        for edge in task.routing.edges(leaving: i) {
            switch edge.kind {
            case .branch(let b):
                guard fates.indices.contains(b), fates[b] == .live else { continue }
            case .fallback, .otherwise:
                guard alwaysMatches == nil else { continue }
            case .next, .direct:
                break
            }
            next.append(edge.target ?? n)
        }
        return Array(Set(next)).sorted()
    }

    /// The rule that applies after step `i`: its own, else that of the innermost section it ends.
    func governingRule(_ i: Int) -> (key: String, rule: NavigationRule, path: JSONPath)? { graph.governingRule(i) }

    /// A section's rule applies after its last step only when that step (or a section nested
    /// inside ending with it) has no rule of its own.
    mutating func checkSectionRules() {
        for (s, _) in task.rules.sectionRules.sorted(by: { $0.key < $1.key }) {
            // In a section that shuffles its steps, other steps may be shown last.
            guard let section = task.section(at: s), task.routing.movable[ifPresent: section.lastStep] ?? -1 < 0,
                  let governing = governingRule(section.lastStep),
                  governing.key != section.identifier, let last = task.step(at: section.lastStep) else { continue }
            report(.warning, "sectionRuleNeverUsed",
                   "The rule of the section \"\(section.identifier)\" is never used: its last step \"\(last.identifier)\" follows the rule of \"\(governing.key)\".",
                   at: JSONPath.root.key("navigationRules").key(section.identifier))
        }
    }

    mutating func checkSkipRulesAndModifiers() {
        for site in ruleSites() {
            let analysis = analysis(at: site)
            switch site.kind {
            case .skipRule(let key):
                if analysis.never(site.predicate) {
                    report(.warning, "skipRuleNeverApplies", "The skip rule of \"\(key)\" can never hold: the step is never skipped by it.", at: site.path)
                } else if analysis.always(site.predicate) {
                    report(.warning, "alwaysSkipped", "The skip rule of \"\(key)\" always holds: \"\(key)\" is never shown.", at: site.path)
                }
            case .modifier(let key):
                if analysis.never(site.predicate) {
                    report(.warning, "modifierNeverApplies", "The step modifier of \"\(key)\" can never apply: its condition never holds.", at: site.path)
                }
            case .sectionVisibility(let key):
                if analysis.never(site.predicate) {
                    report(.warning, "sectionAlwaysHidden", "The visibleWhen of the section \"\(key)\" can never hold: the section is never shown.", at: site.path)
                }
            case .branch, .visibility, .headerVisibility:
                continue
            }
        }
    }
}
