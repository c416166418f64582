/// Bounds given as expressions: `minimum`/`maximum` of a numeric format and
/// `minimumDate`/`maximumDate` of a date format may be an expression ("today", "the start date
/// answered earlier") instead of a literal. They are evaluated when the answer is set, on the
/// session's answers as they will be with it; a bound that is null is no bound.
struct AnswerBounds: Sendable {
    enum Kind: Sendable {
        /// A numeric format: its literal range (for the bounds given as literals, whole numbers
        /// and the unit in the message).
        case number(NumberRange)
        case date(DateFormat)
    }

    /// The form item bounded, or nil for a question step's answer.
    let item: String?
    let kind: Kind
    let minimum: Expression?
    let maximum: Expression?

    /// The keys of a format whose bounds may be expressions, and the type each must have.
    static func keys(of rules: any AnswerFormatRules) -> (minimum: String, maximum: String, type: ExpressionType)? {
        if rules is NumericFormat { return ("minimum", "maximum", .number) }
        if let date = rules as? DateFormat { return ("minimumDate", "maximumDate", date.withTime ? .dateTime : .date) }
        return nil
    }

    /// Compiles the bound expressions `format` kept; nil when it has none.
    static func compile(_ format: AnswerFormat, item: String?, at path: JSONPath, _ predicates: PredicateCompiler) -> AnswerBounds? {
        let raw = format.rules.boundExpressions
        guard raw.count > 0, let keys = keys(of: format.rules) else { return nil }
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
        let kind: Kind
        if let numeric = format.rules as? NumericFormat {
            kind = .number(numeric.range)
        } else if let date = format.rules as? DateFormat {
            kind = .date(date)
        } else {
            return nil
        }
        return AnswerBounds(item: item, kind: kind, minimum: minimum.1, maximum: maximum.1)
    }

    /// The problem with `answer` (an item's or a question's value as kept), if it lies outside
    /// the bounds as they evaluate on `lookup`.
    func problem(_ answer: JSON?, on lookup: some AnswerLookup) -> Problem? {
        guard let answer, !AnswerFormat.isDontKnow(answer) else { return nil }
        var evaluator = ExpressionEvaluator(lookup)
        let low = minimum.map { evaluator.value($0) } ?? .null
        let high = maximum.map { evaluator.value($0) } ?? .null
        let path: JSONPath = item.map { JSONPath.root.key($0) } ?? .root
        switch kind {
        case .number(let literal):
            guard let value = answer.numericValue else { return nil }
            var range = literal
            if minimum != nil { range.minimum = nil }
            if maximum != nil { range.maximum = nil }
            if case .number(let d) = low { range.minimum = d }
            if case .number(let d) = high { range.maximum = d }
            let below = range.minimum.map { value < $0 } ?? false
            let above = range.maximum.map { value > $0 } ?? false
            return below || above ? Problem(code: "outOfRange", message: range.instruction, path: path) : nil
        case .date(let format):
            guard let text = answer.stringValue, let parsed = CalendarValue.parse(text) else { return nil }
            let value = ExpressionValue(parsed)
            let lowText = low.isNull ? format.minimum?.text : low.json.stringValue
            let highText = high.isNull ? format.maximum?.text : high.json.stringValue
            let below = ExpressionValue.order(value, low).map { $0 < 0 } ?? false
            let above = ExpressionValue.order(value, high).map { $0 > 0 } ?? false
            guard below || above else { return nil }
            let message: String
            switch (lowText, highText) {
            case let (min?, max?): message = "Enter a date between \(min) and \(max)."
            case let (min?, nil): message = "Enter a date on or after \(min)."
            case let (nil, max?): message = "Enter a date on or before \(max)."
            case (nil, nil): message = "Enter a date within the allowed range."
            }
            return Problem(code: "outOfRange", message: message, path: path)
        }
    }

    /// The bound's value now, for the state's answer format (nil: no bound).
    func evaluated(on lookup: some AnswerLookup) -> (minimum: JSON?, maximum: JSON?) {
        var evaluator = ExpressionEvaluator(lookup)
        let low = minimum.map { evaluator.value($0).json }
        let high = maximum.map { evaluator.value($0).json }
        return (low, high)
    }
}
