import StepKitBase

/// Predicates that read a step that cannot have been answered yet where they run: the step is
/// on no path from the start to the rule's step, so the comparison sees no answer.
extension TaskChecker {
    mutating func checkReadsUnanswered() {
        for site in ruleSites() {
            var named: Set<Int> = []
            var steps: [Int] = []
            for selector in TaskChecker.selectors(in: site.predicate) {
                if let q = TaskChecker.step(of: selector), named.insert(q).inserted { steps.append(q) }
            }
            for q in steps {
                guard !canBeAnswered(.step(q), at: site), let read = task.step(at: q), let at = task.step(at: site.step) else { continue }
                let when: String
                switch site.kind {
                case .branch: when = "after \"\(at.identifier)\""
                case .skipRule, .modifier, .sectionVisibility: when = "when navigation reaches \"\(at.identifier)\""
                case .visibility, .headerVisibility: when = "on the form \"\(at.identifier)\""
                }
                report(.warning, "readsUnansweredStep",
                       "\(site.what) reads \"\(read.identifier)\", which cannot have been answered \(when): no path passes \"\(read.identifier)\" before it. The comparison always sees no answer.",
                       at: site.path)
            }
        }
    }

    /// `initial` expressions that read a step which cannot have been answered when their step
    /// is first shown (when they are evaluated): they always see no answer there.
    mutating func checkInitialReads() {
        for (index, initials) in task.rules.initials {
            guard let at = task.step(at: index) else { continue }
            for initial in initials {
                var named: Set<Int> = []
                for selector in ExpressionDependencies(of: initial.expression).selectors {
                    guard let q = TaskChecker.step(of: selector), q != index, named.insert(q).inserted,
                          !graph.canPrecede(q, index), let read = task.step(at: q) else { continue }
                    report(.warning, "readsUnansweredStep",
                           "The initial value of \(initial.item.map { "\"\($0)\" on " } ?? "")\"\(at.identifier)\" reads \"\(read.identifier)\", which cannot have been answered when \"\(at.identifier)\" is first shown: no path passes \"\(read.identifier)\" before it. It always sees no answer.",
                           at: initial.path)
                }
            }
        }
    }

    /// Every selector a predicate reads, in order.
    static func selectors(in p: Predicate) -> [Selector] {
        switch p {
        case .always: return []
        case .compare(let c): return [c.selector]
        case .expression(let e): return ExpressionDependencies(of: e).selectors
        case .not(let q): return selectors(in: q)
        case .all(let ps), .any(let ps): return ps.flatMap { selectors(in: $0) }
        }
    }
}
