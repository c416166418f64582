import StepKitBase

/// Calculations nothing reads: no rule, condition, validation, bound, step (`calculations`
/// list), placeholder or other calculation. They are still recorded in the result, so a host may
/// want them; the finding is an info.
extension TaskChecker {
    mutating func checkCalculationsUsed() {
        let list = task.calculations.list
        guard !list.isEmpty else { return }
        var used = Set<Int>()
        func mark(_ e: Expression) { used.formUnion(ExpressionDependencies(of: e).calculations) }
        // Predicates nest as deep as the definition's depth limit allows; the walk uses a stack.
        func mark(_ p: Predicate) {
            var stack = [p]
            while let next = stack.popLast() {
                switch next {
                case .all(let ps), .any(let ps): stack += ps
                case .not(let q): stack.append(q)
                case .always, .compare: break
                case .expression(let e): mark(e)
                }
            }
        }
        func markText(_ text: String) {
            guard Piping.mayPipe(text), case .success(let pieces) = Piping.pieces(text) else { return }
            for case .placeholder(let name, _) in pieces { if let i = task.calculations.index(of: name) { used.insert(i) } }
        }
        for c in list { used.formUnion(c.dependencies.calculations) }
        let rules = task.rules
        for shown in rules.stepCalculations.values { used.formUnion(shown) }
        for rule in Array(rules.stepRules.values) + Array(rules.sectionRules.values) {
            if case .predicate(let branches, _) = rule { for b in branches { mark(b.when) } }
        }
        for p in Array(rules.stepSkips.values) + Array(rules.sectionSkips.values) + Array(rules.sectionVisibility.values) { mark(p) }
        for m in rules.modifiers.values {
            mark(m.when)
            for (_, value) in m.fields.entries { if let s = value.stringValue { markText(s) } }
        }
        for items in rules.visibility.values { for p in items.values { mark(p) } }
        for blocks in rules.instanceVisibility.values { for block in blocks { for item in block.items { mark(item.predicate) } } }
        for headers in rules.formHeaders.values { for h in headers { mark(h.predicate) } }
        for v in rules.stepValidations.values.joined() + rules.taskValidations {
            mark(v.when)
            markText(v.message)
        }
        for bound in rules.answerBounds.values.joined() {
            if let e = bound.minimum { mark(e) }
            if let e = bound.maximum { mark(e) }
        }
        for i in rules.pipedSteps {
            guard let step = task.step(at: i) else { continue }
            var fields = step.presentation
            Piping.apply(to: &fields) { markText($0); return $0 }
        }
        for (i, c) in list.enumerated() where !used.contains(i) {
            report(.info, "calculationNeverUsed",
                   "The calculation \"\(c.name)\" is never used: no rule, condition, step, text or other calculation reads it (it is still in the result).",
                   at: JSONPath.root.key("calculations").key(c.name))
        }
    }
}
