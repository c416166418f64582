import StepKitBase

/// A compiled expression: a tree checked and typed at compile time, at most
/// `ExpressionLimits.maxNodes` nodes and `ExpressionLimits.maxDepth` deep, so evaluating it is
/// bounded in time and stack. Immutable and shared by every session.
indirect enum Expression: Sendable {
    case literal(ExpressionValue)
    /// `{"answer": SEL}`: the answer on the path (null when unanswered or "don't know"). The
    /// type is nil for another task's answer; `order` lists a choice format's choices.
    case answer(Selector, ResultType?, order: [ChoiceOption]?)
    /// `{"score": SEL}`: the sum of the selected choices' scores.
    case score(Selector, ScoreTable)
    /// `{"answered": SEL}`: whether the question has an answer ("don't know" included).
    case answered(Selector)
    /// `{"calc": NAME}`: a calculation's value, by its index in `Calculations.list`.
    case calculation(Int)
    /// `{"now": []}`: the session's time.
    case now
    /// `{"today": []}`: the session's date in UTC.
    case today
    /// A predicate's comparison `{"result": SEL, OPERATOR: OPERAND}` used as a boolean.
    case comparison(Comparison)
    /// `{"round": [x, digits]}`: digits is a literal 0…6.
    case round(Expression, digits: Int)
    /// Every other operator and its arguments (arity checked at compile time).
    case apply(ExpressionOperator, [Expression])
    /// `{"count"|"sum"|...: {"over": BLOCK, ...}}`: over a repeating block's instances.
    case aggregate(Aggregate)
    /// `{"calc": NAME}` of a per-instance calculation, read inside its block's instance.
    case instanceCalculation(InstanceCalculation)
}

/// The operators written `{"OP": [args...]}`.
enum ExpressionOperator: String, Sendable, CaseIterable {
    case add = "+", subtract = "-", multiply = "*", divide = "/"
    case min, max, sum, avg, count
    case `if`, coalesce
    case concat, length
    /// Strings, counted and indexed in Unicode scalars (FHIRPath's characters).
    case substring, upper, lower, startsWith, contains, replace
    /// Numbers: null where the result is not a finite number (`ln` of 0, `sqrt` of -1).
    case ln, exp, power, sqrt, abs, truncate
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case and, or, not, `in`
    case daysBetween, monthsBetween, yearsBetween
    case addDays, addMonths, addYears
}

/// The scores of a choice or boolean format, for `{"score": SEL}`.
struct ScoreTable: Sendable {
    /// Choice value → score, for the choices that have one.
    var choices: [(value: JSON, score: Double)] = []
    var yes: Double?
    var no: Double?

    var isEmpty: Bool { choices.isEmpty && yes == nil && no == nil }

    /// The score of an answer: the sum of its selected choices' scores (the yes or no score of a
    /// boolean); null when unanswered or when nothing selected has a score.
    func score(of answer: JSON?) -> ExpressionValue {
        guard let answer, !AnswerFormat.isDontKnow(answer) else { return .null }
        if case .bool(let b) = answer { return (b ? yes : no).map { .number($0) } ?? .null }
        var total = 0.0
        var any = false
        for value in AnswerValue.choiceValues(answer) {
            if let entry = choices.first(where: { $0.value.sameValue(as: value) }) {
                total += entry.score
                any = true
            }
        }
        return any && total.isFinite ? .number(total) : .null
    }
}

/// The bounds on one expression (a definition error past either).
enum ExpressionLimits {
    static let maxNodes = 1_000
    static let maxDepth = 32
    /// A string an operator builds (`concat`, `replace`, `upper`, ...) has at most this many
    /// Unicode scalars; a longer one is null, so no answer can make an expression's work or
    /// memory grow past it.
    static let maxStringLength = 65_536
    /// The most nodes one evaluation may visit (`Expression.cost`): aggregates visit their
    /// `where` and `of` once per instance, so this bounds the work an answer can cause.
    static let maxCost = 1_000_000.0
}
