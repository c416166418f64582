import StepKitBase

/// The `matches` conditions of a task, by the step whose answer they read, so that setting an
/// answer can match it against every pattern that will read it: an answer too long or too
/// repetitive for a pattern's bound is refused when it is given (the participant can fix it),
/// rather than quietly read as "no match" by a condition later; and the outcome, remembered by the
/// pattern, is not computed again when navigation re-reads the condition.
struct ConditionPatterns: Sendable {
    struct Entry: Sendable {
        /// The form item read, or nil for a question step's answer.
        let item: String?
        let pattern: Pattern
    }

    private(set) var byStep = IndexTable<[Entry]>()

    /// Collects the `matches` tests of `predicate` (nesting is bounded by the definition's depth
    /// limit, checked before compiling).
    mutating func collect(_ predicate: Predicate) {
        switch predicate {
        case .all(let ps), .any(let ps):
            for p in ps { collect(p) }
        case .not(let p):
            collect(p)
        case .always:
            break
        case .expression(let e):
            for c in e.comparisons { collect(.compare(c)) }
        case .compare(let comparison):
            for case .matches(let pattern) in comparison.tests {
                switch comparison.selector {
                case .step(let index): byStep[index, default: []].append(Entry(item: nil, pattern: pattern))
                case .item(let index, let item): byStep[index, default: []].append(Entry(item: item, pattern: pattern))
                case .external, .instance: break
                }
            }
        }
    }

    /// Every predicate of `rules`.
    mutating func collect(from rules: TaskRules) {
        for rule in Array(rules.stepRules.values) + Array(rules.sectionRules.values) {
            if case .predicate(let branches, _) = rule { for branch in branches { collect(branch.when) } }
        }
        for p in rules.stepSkips.values { collect(p) }
        for p in rules.sectionSkips.values { collect(p) }
        for m in rules.modifiers.values { collect(m.when) }
        for items in rules.visibility.values { for p in items.values { collect(p) } }
        for headers in rules.formHeaders.values { for h in headers { collect(h.predicate) } }
        for p in rules.sectionVisibility.values { collect(p) }
        for list in rules.stepValidations.values { for v in list { collect(v.when) } }
        for v in rules.taskValidations { collect(v.when) }
    }

    /// Problems of a step's new answer `value`: a value some condition's pattern cannot match
    /// within its bound.
    func problems(step index: Int, value: JSON?) -> [Problem] {
        guard let entries = byStep[index], let value else { return [] }
        var problems: [Problem] = []
        for entry in entries {
            let read: JSON?
            if let item = entry.item { read = value.objectValue?[item] } else { read = value }
            guard let read else { continue }
            let texts = AnswerValue.choiceValues(read).compactMap(\.stringValue)
            for text in texts where entry.pattern.match(text) == .tooComplex {
                let rejection = AnswerRejection.patternTooComplex
                let path: JSONPath = entry.item.map { JSONPath.root.key($0) } ?? .root
                if !problems.contains(where: { $0.path == path }) {
                    problems.append(rejection.problem(at: path, item: entry.item))
                }
            }
        }
        return problems
    }
}
