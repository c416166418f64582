import StepKitBase

/// What the checker can tell about an expression condition without answers: one that reads
/// nothing (literals only) has one value, and a comparison of a number answer with a literal
/// outside the answer format's range never holds (an unanswered value makes it false too).
struct ExpressionFacts {
    let task: Task

    /// The condition's value when it reads no answer, calculation or clock; nil otherwise.
    func constant(_ e: Expression) -> Bool? {
        let deps = ExpressionDependencies(of: e)
        guard deps.selectors.isEmpty, deps.calculations.isEmpty, deps.time == .none else { return nil }
        var evaluator = ExpressionEvaluator(NoAnswers())
        if case .bool(let b) = evaluator.value(e) { return b }
        return false
    }

    /// Whether the condition can never hold: a false constant, an `and` with a part that never
    /// holds, an `or` whose parts never hold, or a comparison out of the answer's range.
    func never(_ e: Expression, depth: Int = 0) -> Bool {
        if constant(e) == false { return true }
        guard depth < ExpressionLimits.maxDepth, case .apply(let op, let args) = e else { return false }
        switch op {
        case .and: return args.contains { never($0, depth: depth + 1) }
        case .or: return !args.isEmpty && args.allSatisfy { never($0, depth: depth + 1) }
        case .equal, .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard args.count == 2 else { return false }
            if case .answer(let s, _, _) = args[0], case .literal(.number(let x)) = args[1] { return outOfRange(s, op, x) }
            if case .literal(.number(let x)) = args[0], case .answer(let s, _, _) = args[1] { return outOfRange(s, mirrored(op), x) }
            return false
        default:
            return false
        }
    }

    /// Whether the condition always holds: a true constant.
    func always(_ e: Expression) -> Bool { constant(e) == true }

    private func mirrored(_ op: ExpressionOperator) -> ExpressionOperator {
        switch op {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return op
        }
    }

    /// `answer OP x` can never hold for any answer the format accepts.
    private func outOfRange(_ s: Selector, _ op: ExpressionOperator, _ x: Double) -> Bool {
        guard let range = range(s) else { return false }
        let low = range.minimum, high = range.maximum
        switch op {
        case .equal: return (low.map { x < $0 } ?? false) || (high.map { x > $0 } ?? false)
        case .greater: return high.map { x >= $0 } ?? false
        case .greaterOrEqual: return high.map { x > $0 } ?? false
        case .less: return low.map { x <= $0 } ?? false
        case .lessOrEqual: return low.map { x < $0 } ?? false
        default: return false
        }
    }

    /// The range of a question's or form item's answer when expressions read it as a number:
    /// its format's `valueRange`, the one the predicate analysis reads too.
    private func range(_ s: Selector) -> ValueRange? {
        let rules: (any AnswerFormatRules)?
        switch s {
        case .step(let i): rules = task.step(at: i)?.format()?.rules
        case .item(let i, let item): rules = task.step(at: i)?.format(item: item)?.rules
        case .external, .instance: rules = nil
        }
        guard let rules, rules.expressionType == .number else { return nil }
        return rules.valueRange
    }
}
