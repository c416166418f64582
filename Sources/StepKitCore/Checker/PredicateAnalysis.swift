import StepKitBase

/// A number of pairwise comparisons a check may still make: a bound on the work a generated
/// task with huge predicates can cause (beyond it, predicates count as "may hold").
final class WorkBudget {
    private(set) var remaining: Int

    init(_ remaining: Int) { self.remaining = remaining }

    func spend(_ amount: Int) -> Bool {
        guard amount <= remaining else { return false }
        remaining -= amount
        return true
    }
}

/// Decides, without running the task, whether a predicate can never hold or always holds.
///
/// The analysis is conservative: "never" and "always" are claimed only when they follow from
/// the predicate's structure, the answer formats and what the rule graph guarantees (a required
/// question every path passes is answered; a step that cannot come before the rule is not).
/// Anything it cannot decide counts as "may hold".
struct PredicateAnalysis {
    let task: Task
    /// The selector's answer is certainly there where the predicate runs.
    let mustBeAnswered: (Selector) -> Bool
    /// The selector's answer cannot be there yet where the predicate runs.
    let cannotBeAnswered: (Selector) -> Bool
    /// Shared by every analysis of one check: pairwise comparisons stop when it runs out.
    var budget: WorkBudget? = nil

    /// Pairwise comparisons (P and not P, two tests of one question) stop being made beyond this
    /// many parts in one `all` or `any`, so a huge generated predicate cannot make the check
    /// quadratic; such a predicate then simply counts as "may hold".
    static let pairwiseLimit = 256

    // MARK: Never and always

    func never(_ p: Predicate) -> Bool {
        switch p {
        case .always(let b): return !b
        // An expression: a literal-only one, or a comparison out of its answer's range.
        case .expression(let e): return ExpressionFacts(task: task).never(e)
        case .compare(let c): return contradicts([.compare(c)])
        case .not(let q): return always(q)
        case .any(let ps): return ps.allSatisfy(never)
        case .all(let ps): return ps.contains(where: never) || contradicts(PredicateAnalysis.conjuncts(ps))
        }
    }

    func always(_ p: Predicate) -> Bool {
        switch p {
        case .always(let b): return b
        case .expression(let e): return ExpressionFacts(task: task).always(e)
        case .compare(let c): return alwaysHolds(c)
        case .not(let q): return never(q)
        case .all(let ps): return ps.allSatisfy(always)
        case .any(let ps):
            if ps.contains(where: always) { return true }
            let parts = PredicateAnalysis.disjuncts(ps)
            // P or not P.
            if PredicateAnalysis.hasComplementaryPair(parts) { return true }
            guard parts.count <= PredicateAnalysis.pairwiseLimit, budget?.spend(parts.count * parts.count) ?? true else { return false }
            // answered: true or answered: false, on one question.
            let answeredTests = parts.compactMap { part -> (Selector, Bool)? in
                guard case .compare(let c) = part, c.tests.count == 1, case .answered(let b) = c.tests[0] else { return nil }
                return (c.selector, b)
            }
            return answeredTests.contains { a in answeredTests.contains { $0.0 == a.0 && $0.1 != a.1 } }
        }
    }

    /// A comparison that always holds: it tests only `answered` and the answer's presence is
    /// certain either way.
    private func alwaysHolds(_ c: Comparison) -> Bool {
        guard !c.tests.isEmpty else { return false }
        return c.tests.allSatisfy { test in
            guard case .answered(let b) = test else { return false }
            return b ? mustBeAnswered(c.selector) : cannotBeAnswered(c.selector)
        }
    }

    /// Nested `all`s flattened, double negations removed.
    static func conjuncts(_ ps: [Predicate]) -> [Predicate] {
        ps.flatMap { p -> [Predicate] in
            switch p {
            case .all(let inner): return conjuncts(inner)
            case .not(.not(let inner)): return conjuncts([inner])
            case .not(.any(let inner)): return conjuncts(inner.map { .not($0) })
            default: return [p]
            }
        }
    }

    static func disjuncts(_ ps: [Predicate]) -> [Predicate] {
        ps.flatMap { p -> [Predicate] in
            switch p {
            case .any(let inner): return disjuncts(inner)
            case .not(.not(let inner)): return disjuncts([inner])
            case .not(.all(let inner)): return disjuncts(inner.map { .not($0) })
            default: return [p]
            }
        }
    }

    // MARK: Contradictions in a conjunction

    /// What a conjunction requires of one question's answer.
    private struct Requirements {
        var answered: Set<Bool> = []
        var dontKnow: Set<Bool> = []
        /// A test that holds only for a real answer (not unanswered, not "don't know").
        var needsValue = false
        var equals: [JSON] = []
        var notEquals: [JSON] = []
        var negatedEquals: [JSON] = []
        var lower: (value: Double, exclusive: Bool)?
        var upper: (value: Double, exclusive: Bool)?
        /// Bounds from negated comparisons: they hold only where the answer is a value.
        var negatedLower: [(Double, Bool)] = []
        var negatedUpper: [(Double, Bool)] = []
        var contains: [JSON] = []
        var containsAny: [[JSON]] = []
        var containsNone: [[JSON]] = []
        var badOperand = false

        mutating func raise(lower value: Double, exclusive: Bool) {
            if let l = lower, l.value > value || (l.value == value && l.exclusive) { return }
            lower = (value, exclusive)
        }

        mutating func lowerUpper(to value: Double, exclusive: Bool) {
            if let u = upper, u.value < value || (u.value == value && u.exclusive) { return }
            upper = (value, exclusive)
        }
    }

    /// Whether the conjunction of `parts` can never hold.
    func contradicts(_ parts: [Predicate]) -> Bool {
        // P and not P.
        if PredicateAnalysis.hasComplementaryPair(parts) { return true }
        guard parts.count <= PredicateAnalysis.pairwiseLimit, budget?.spend(parts.count * 4) ?? true else { return false }
        var order: [Selector] = []
        var bySelector: [Int: Requirements] = [:]
        func slot(_ s: Selector) -> Int {
            if let i = order.firstIndex(of: s) { return i }
            order.append(s)
            return order.count - 1
        }
        for part in parts {
            switch part {
            case .compare(let c):
                let i = slot(c.selector)
                var r = bySelector[i] ?? Requirements()
                for test in c.tests { add(test, to: &r, type: type(of: c.selector)) }
                bySelector[i] = r
            case .not(.compare(let c)) where c.tests.count == 1:
                let i = slot(c.selector)
                var r = bySelector[i] ?? Requirements()
                addNegated(c.tests[0], to: &r, type: type(of: c.selector))
                bySelector[i] = r
            default:
                continue
            }
        }
        for (i, selector) in order.enumerated() {
            if let r = bySelector[i], impossible(r, selector) { return true }
        }
        return false
    }

    private func type(of selector: Selector) -> ResultType? {
        format(of: selector)?.resultType
    }

    private func format(of selector: Selector) -> AnswerFormat? {
        switch selector {
        case .step(let i): return task.step(at: i)?.format()
        case .item(let i, let item): return task.step(at: i)?.format(item: item)
        case .external, .instance: return nil
        }
    }

    private func magnitude(_ operand: JSON, _ type: ResultType?) -> Double? {
        AnswerValue.magnitude(operand, type ?? .numeric)
    }

    private func add(_ test: Comparison.Test, to r: inout Requirements, type: ResultType?) {
        switch test {
        case .answered(let b): r.answered.insert(b)
        case .dontKnow(let b): r.dontKnow.insert(b); r.answered.insert(true)
        case .equals(let v): r.needsValue = true; r.equals.append(v)
        case .notEquals(let v): r.needsValue = true; r.notEquals.append(v)
        case .contains(let vs): r.needsValue = true; r.contains += vs
        case .containsAny(let vs): r.needsValue = true; r.containsAny.append(vs)
        case .matches: r.needsValue = true
        case .minimum(let v), .exclusiveMinimum(let v):
            r.needsValue = true
            guard let m = magnitude(v, type) else { r.badOperand = true; return }
            if case .exclusiveMinimum = test { r.raise(lower: m, exclusive: true) } else { r.raise(lower: m, exclusive: false) }
        case .maximum(let v), .exclusiveMaximum(let v):
            r.needsValue = true
            guard let m = magnitude(v, type) else { r.badOperand = true; return }
            if case .exclusiveMaximum = test { r.lowerUpper(to: m, exclusive: true) } else { r.lowerUpper(to: m, exclusive: false) }
        }
    }

    /// `{"not": {one test}}`: holds where the test does not, which includes "unanswered" for
    /// every test but `answered`.
    private func addNegated(_ test: Comparison.Test, to r: inout Requirements, type: ResultType?) {
        switch test {
        case .answered(let b): r.answered.insert(!b)
        case .equals(let v): r.notEquals.append(v)
        case .notEquals(let v):
            // Holds when unanswered or equal: only an equality once a value is required.
            r.negatedEquals.append(v)
        case .containsAny(let vs): r.containsNone.append(vs)
        case .contains(let vs) where vs.count == 1: r.containsNone.append(vs)
        case .minimum(let v): if let m = magnitude(v, type) { r.negatedUpper.append((m, true)) }
        case .exclusiveMinimum(let v): if let m = magnitude(v, type) { r.negatedUpper.append((m, false)) }
        case .maximum(let v): if let m = magnitude(v, type) { r.negatedLower.append((m, true)) }
        case .exclusiveMaximum(let v): if let m = magnitude(v, type) { r.negatedLower.append((m, false)) }
        default: break
        }
    }

    private func impossible(_ given: Requirements, _ selector: Selector) -> Bool {
        var r = given
        if r.badOperand { return false }
        let type = type(of: selector)
        let format = format(of: selector)
        if r.needsValue { r.answered.insert(true); r.dontKnow.insert(false) }
        if r.answered.contains(true) && cannotBeAnswered(selector) { return true }
        if r.answered.contains(false) && mustBeAnswered(selector) { return true }
        if r.answered.count > 1 || r.dontKnow.count > 1 { return true }
        if r.dontKnow.contains(true), let format, !format.allowsDontKnow { return true }
        guard r.needsValue else { return false }
        // Negated bounds and equalities apply once the answer must be a value.
        for (v, e) in r.negatedLower { r.raise(lower: v, exclusive: e) }
        for (v, e) in r.negatedUpper { r.lowerUpper(to: v, exclusive: e) }
        r.equals += r.negatedEquals
        // Equalities.
        guard budget?.spend(r.equals.count * (r.equals.count + r.notEquals.count)) ?? true else { return false }
        if let type {
            for (i, a) in r.equals.enumerated() {
                for b in r.equals[(i + 1)...] where !PredicateAnalysis.equal(a, b, type) { return true }
                if r.notEquals.contains(where: { PredicateAnalysis.equal(a, $0, type) }) { return true }
            }
        } else if r.equals.contains(where: { a in r.notEquals.contains { a.sameValue(as: $0) } }) {
            return true
        }
        // Bounds: the comparisons' and the answer format's own (its `valueRange`).
        if let range = format?.rules.valueRange {
            if let low = range.minimum { r.raise(lower: low, exclusive: false) }
            if let high = range.maximum { r.lowerUpper(to: high, exclusive: false) }
        }
        if let l = r.lower, let u = r.upper, l.value > u.value || (l.value == u.value && (l.exclusive || u.exclusive)) {
            return true
        }
        if r.lower != nil || r.upper != nil, let type, type != .choice {
            for e in r.equals {
                guard let m = magnitude(e, type) else { continue }
                if let l = r.lower, m < l.value || (m == l.value && l.exclusive) { return true }
                if let u = r.upper, m > u.value || (m == u.value && u.exclusive) { return true }
            }
        }
        // Choices.
        if type == .choice, let rules = format?.rules, let options = rules.choiceOptions {
            return impossibleChoice(r, options, multiple: rules.allowsMultipleChoices)
        }
        return false
    }

    private func impossibleChoice(_ r: Requirements, _ options: [ChoiceOption], multiple: Bool) -> Bool {
        func index(_ v: JSON) -> Int? { options.index(of: v) }
        var required = Set(r.contains.compactMap(index))
        var fixed: Set<Int>?
        for e in r.equals {
            let set = Set((e.arrayValue ?? [e]).compactMap(index))
            if let f = fixed, f != set { return true }
            fixed = set
        }
        if let fixed {
            if !required.isSubset(of: fixed) { return true }
            required = fixed
            for any in r.containsAny where Set(any.compactMap(index)).isDisjoint(with: fixed) { return true }
        }
        for none in r.containsNone where !Set(none.compactMap(index)).isDisjoint(with: required) { return true }
        if !multiple && required.count > 1 { return true }
        if required.count > 1 && required.contains(where: { options.indices.contains($0) && options[$0].exclusive }) { return true }
        return false
    }

    static func equal(_ a: JSON, _ b: JSON, _ type: ResultType) -> Bool {
        AnswerValue.equal(a, b, type)
    }

    // MARK: Structural equality

    /// A hash consistent with `same`: equal predicates hash alike, so lookups replace pairwise
    /// comparisons.
    static func structuralHash(_ p: Predicate) -> Int {
        var h = Hasher()
        feed(p, into: &h)
        return h.finalize()
    }

    private static func feed(_ p: Predicate, into h: inout Hasher) {
        switch p {
        case .always(let b): h.combine(0); h.combine(b)
        // Expressions are never the same as another predicate (`same`), so one hash serves.
        case .expression: h.combine(5)
        case .not(let q): h.combine(1); feed(q, into: &h)
        case .all(let ps): h.combine(2); h.combine(ps.count); for q in ps { feed(q, into: &h) }
        case .any(let ps): h.combine(3); h.combine(ps.count); for q in ps { feed(q, into: &h) }
        case .compare(let c):
            h.combine(4)
            switch c.selector {
            case .step(let i): h.combine(0); h.combine(i)
            case .item(let i, let item): h.combine(1); h.combine(i); h.combine(item)
            case .external(let t, let st, let item): h.combine(2); h.combine(t); h.combine(st); h.combine(item)
            case .instance(let r): h.combine(3); h.combine(r.block); h.combine(r.item); h.combine(r.index)
            }
            h.combine(c.tests.count)
            for test in c.tests {
                switch test {
                case .answered(let b): h.combine(10); h.combine(b)
                case .dontKnow(let b): h.combine(11); h.combine(b)
                case .equals(let v): h.combine(12); feed(v, into: &h)
                case .notEquals(let v): h.combine(13); feed(v, into: &h)
                case .contains(let vs): h.combine(14); for v in vs { feed(v, into: &h) }
                case .containsAny(let vs): h.combine(15); for v in vs { feed(v, into: &h) }
                case .matches(let pattern): h.combine(16); h.combine(pattern.source)
                case .minimum(let v): h.combine(17); feed(v, into: &h)
                case .maximum(let v): h.combine(18); feed(v, into: &h)
                case .exclusiveMinimum(let v): h.combine(19); feed(v, into: &h)
                case .exclusiveMaximum(let v): h.combine(20); feed(v, into: &h)
                }
            }
        }
    }

    /// Consistent with `JSON.sameValue`: numbers by value, objects whatever their key order.
    private static func feed(_ v: JSON, into h: inout Hasher) {
        switch v {
        case .null: h.combine(0)
        case .bool(let b): h.combine(1); h.combine(b)
        case .int, .double: h.combine(2); h.combine(v.numericValue ?? 0)
        case .string(let s): h.combine(3); h.combine(s)
        case .array(let items): h.combine(4); h.combine(items.count); for item in items { feed(item, into: &h) }
        case .object(let o): h.combine(5); h.combine(o.count)
        }
    }

    /// Whether some part is `{"not": Q}` with Q another part: a hash lookup per part.
    static func hasComplementaryPair(_ parts: [Predicate]) -> Bool {
        var buckets: [Int: [Int]] = [:]
        for (i, part) in parts.enumerated() { buckets[structuralHash(part), default: []].append(i) }
        for part in parts {
            guard case .not(let inner) = part else { continue }
            for j in buckets[structuralHash(inner)] ?? [] where same(parts[j], inner) { return true }
        }
        return false
    }

    static func same(_ a: Predicate, _ b: Predicate) -> Bool {
        switch (a, b) {
        case (.always(let x), .always(let y)): return x == y
        case (.not(let x), .not(let y)): return same(x, y)
        case (.all(let xs), .all(let ys)), (.any(let xs), .any(let ys)):
            return xs.count == ys.count && zip(xs, ys).allSatisfy { same($0, $1) }
        case (.compare(let x), .compare(let y)):
            return x.selector == y.selector && x.tests.count == y.tests.count && zip(x.tests, y.tests).allSatisfy { same($0, $1) }
        default:
            return false
        }
    }

    static func same(_ a: Comparison.Test, _ b: Comparison.Test) -> Bool {
        func list(_ x: [JSON], _ y: [JSON]) -> Bool { x.count == y.count && zip(x, y).allSatisfy { $0.sameValue(as: $1) } }
        switch (a, b) {
        case (.answered(let x), .answered(let y)), (.dontKnow(let x), .dontKnow(let y)): return x == y
        case (.equals(let x), .equals(let y)), (.notEquals(let x), .notEquals(let y)),
             (.minimum(let x), .minimum(let y)), (.maximum(let x), .maximum(let y)),
             (.exclusiveMinimum(let x), .exclusiveMinimum(let y)), (.exclusiveMaximum(let x), .exclusiveMaximum(let y)):
            return x.sameValue(as: y)
        case (.contains(let x), .contains(let y)), (.containsAny(let x), .containsAny(let y)): return list(x, y)
        case (.matches(let x), .matches(let y)): return x.source == y.source
        default: return false
        }
    }
}
