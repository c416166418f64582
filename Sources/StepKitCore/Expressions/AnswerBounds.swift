import StepKitBase

/// Bounds given as expressions: the bounds a format names in its `boundKeys` (`minimum`/
/// `maximum` of a numeric format, `minimumDate`/`maximumDate` of a date format) may be an expression ("today", "the start date
/// answered earlier") instead of a literal. They are evaluated when the answer is set, on the
/// session's answers as they will be with it; a bound that is null is no bound.
struct AnswerBounds: Sendable {
    /// The form item bounded, or nil for a question step's answer.
    let item: String?
    /// The format bounded: its keys, and what it tells an answer outside the bounds.
    let rules: any AnswerFormatRules
    let keys: BoundKeys
    let minimum: Expression?
    let maximum: Expression?

    /// Compiles the bound expressions `format` kept; nil when it has none.
    static func compile(_ format: AnswerFormat, item: String?, at path: JSONPath, _ predicates: PredicateCompiler) -> AnswerBounds? {
        let raw = format.rules.boundExpressions
        guard raw.count > 0, let keys = format.rules.boundKeys else { return nil }
        func bound(_ key: String) -> (ok: Bool, Expression?) {
            guard let value = raw[key] else { return (true, nil) }
            var expected = keys.type
            // A date-time bound may be a date (the start of its day in UTC), and the reverse.
            if keys.type.isDate { expected = .any }
            guard let (expression, type) = ExpressionCompiler(predicates: predicates).compile(value, at: path.key(key), expecting: expected) else { return (false, nil) }
            if keys.type.isDate && !type.isDate && type != .any {
                predicates.diagnostics.error("wrongType", "\"\(key)\" must be a date, found \(type.described).", at: path.key(key))
                return (false, nil)
            }
            return (true, expression)
        }
        let minimum = bound(keys.minimum), maximum = bound(keys.maximum)
        guard minimum.ok, maximum.ok else { return nil }
        return AnswerBounds(item: item, rules: format.rules, keys: keys, minimum: minimum.1, maximum: maximum.1)
    }

    /// The problem with `answer` (an item's or a question's value as kept), if it lies outside
    /// the bounds as they evaluate on `lookup`; the format words it (`boundRejection`).
    func problem(_ answer: JSON?, on lookup: some AnswerLookup) -> Problem? {
        guard let answer, !AnswerFormat.isDontKnow(answer) else { return nil }
        var evaluator = ExpressionEvaluator(lookup)
        let low = minimum.map { evaluator.value($0) }
        let high = maximum.map { evaluator.value($0) }
        guard let rejection = rules.boundRejection(answer, minimum: low, maximum: high) else { return nil }
        return rejection.problem(at: item.map { JSONPath.root.key($0) } ?? .root)
    }

    /// The bound's value now, for the state's answer format (nil: no bound).
    func evaluated(on lookup: some AnswerLookup) -> (minimum: JSON?, maximum: JSON?) {
        var evaluator = ExpressionEvaluator(lookup)
        let low = minimum.map { evaluator.value($0).json }
        let high = maximum.map { evaluator.value($0).json }
        return (low, high)
    }
}
