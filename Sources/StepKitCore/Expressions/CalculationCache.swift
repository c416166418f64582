import StepKitBase

/// A session's calculation values, kept between reads and computed again only where something a
/// calculation reads has changed.
///
/// Each value is kept with the inputs it was computed from: the answers it reads (as the lookup
/// showed them), the values of the calculations it reads, and the clock where it reads `now` or
/// `today`. A read re-reads those inputs (a dictionary look-up each) and computes again only the
/// calculations whose inputs differ, in dependency order. Validating by content rather than by
/// hooks on every change means no mutation of a session can forget to invalidate it, and copies
/// of a session (which share the cache) can never read each other's stale values.
final class CalculationCache: Sendable {
    /// Which answers the values were computed on: the path as predicates see it, or the stored
    /// answers `visibleWhen` reads (no item hidden).
    enum View: Int, Sendable { case path = 0, stored = 1 }

    struct Entry: Sendable {
        let inputs: [JSON?]
        let time: Int64?
        let value: ExpressionValue
    }

    private let entries = Locked<[[Entry?]]>([[], []])

    /// How many calculations were computed (not reused) since the cache was made: what tests and
    /// the benchmark read to see that unchanged inputs cost no computation.
    let computed = Locked<Int>(0)

    init() {}

    /// The values of every calculation of `calculations` on what `lookup` shows. The lock is not
    /// held while computing: reading an answer may evaluate a `visibleWhen`, which may read the
    /// stored view's values.
    func values(_ calculations: Calculations, view: View, lookup: some AnswerLookup) -> [ExpressionValue] {
        let list = calculations.list
        guard !list.isEmpty else { return [] }
        let previous = entries.withLock { $0[view.rawValue] }
        var values = Array(repeating: ExpressionValue.null, count: list.count)
        var changed = Array(repeating: true, count: list.count)
        var next = Array<Entry?>(repeating: nil, count: list.count)
        var fresh = 0
        for i in calculations.order where list.indices.contains(i) {
            let c = list[i]
            var inputs = c.dependencies.selectors.map { lookup.answerValue($0) }
            // A block's instances as the lookup shows them (their count, hidden items left out).
            for block in c.dependencies.blocks { inputs.append(lookup.instancesDigest(block)) }
            let time: Int64?
            switch c.dependencies.time {
            case .none: time = nil
            case .day: time = ExpressionEvaluator<NoAnswers>.day(of: lookup.evaluationTime)
            case .instant: time = lookup.evaluationTime
            }
            let old = previous[ifPresent: i] ?? nil
            if let old, old.inputs == inputs, old.time == time,
               !c.dependencies.calculations.contains(where: { changed.indices.contains($0) && changed[$0] }) {
                values[i] = old.value
                changed[i] = false
                next[i] = old
                continue
            }
            var evaluator = ExpressionEvaluator(lookup, calculations: values)
            let value = c.block.map { evaluator.everyInstance(c.expression, of: $0) } ?? evaluator.value(c.expression)
            fresh += 1
            values[i] = value
            changed[i] = old?.value != value
            next[i] = Entry(inputs: inputs, time: time, value: value)
        }
        entries.withLock { $0[view.rawValue] = next }
        if fresh > 0 { computed.withLock { $0 += fresh } }
        return values
    }
}
