import StepKitBase

/// The type of an expression, known at compile time from the answer formats it reads.
enum ExpressionType: String, Sendable, Equatable {
    case number, string, boolean, date, dateTime, time, choice
    /// Unknown until run time: another task's answer, or the literal `null`. It fits wherever a
    /// type is expected; the run-time value decides.
    case any

    /// Whether a value of this type may stand where `expected` is asked for.
    func fits(_ expected: ExpressionType) -> Bool {
        self == expected || self == .any || expected == .any
    }

    /// The type two values share (for `if`, `coalesce`), `any` giving way to the other; nil when
    /// they differ.
    static func common(_ a: ExpressionType, _ b: ExpressionType) -> ExpressionType? {
        if a == .any { return b }
        if b == .any || a == b { return a }
        return nil
    }

    var isDate: Bool { self == .date || self == .dateTime }

    /// "a number", "a date": for messages.
    var described: String {
        switch self {
        case .number: return "a number"
        case .string: return "a string"
        case .boolean: return "a boolean"
        case .date: return "a date"
        case .dateTime: return "a date-time"
        case .time: return "a time of day"
        case .choice: return "a choice answer"
        case .any: return "a value"
        }
    }
}
