import StepKitBase

/// A value as expressions compute with it: what an answer, a literal, a score or a calculation
/// reads as. `null` stands for "no value" (unanswered, "don't know", off the path, `/ 0`).
///
/// This is also where every comparison of answers lives: predicates' `equals`/`minimum`/... and
/// expressions' `==`/`<`/... both end in `equal` and `order`, so the two cannot drift apart.
enum ExpressionValue: Sendable, Equatable {
    case null
    case number(Double)
    case string(String)
    case bool(Bool)
    /// A calendar date: days since 1970-01-01.
    case date(day: Int64)
    /// An instant: milliseconds since the epoch.
    case dateTime(milliseconds: Int64)
    /// A date at reduced precision (`2021`, `2021-05`), as written.
    case partialDate(PartialDate)
    /// A time of day: seconds since midnight, and whether it was written with its seconds
    /// (`HH:mm:ss`; it renders as written, and compares by seconds either way).
    case time(seconds: Int, withSeconds: Bool)
    /// The selected values of a choice answer, and the format's choices in order (for ordering
    /// by position, and for piping the choices' texts; nil when unknown, as for another task's
    /// answer or a literal).
    case choice([JSON], order: [ChoiceOption]?)
    /// A value of no other kind (a location, a multiple-component answer, or JSON that does not
    /// fit its declared type): compares equal by JSON value only, never orders.
    case other(JSON)

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as a condition: true only when it is `true` (null reads false).
    var isTrue: Bool { self == .bool(true) }

    // MARK: From answers

    /// An answer (with its result type) as a value; nil and "don't know" are null. Choice
    /// answers keep their values (an "other" choice with text counts as its value).
    static func answer(_ value: JSON?, _ type: ResultType?, order: [ChoiceOption]? = nil) -> ExpressionValue {
        guard let value, !value.isNull, !AnswerFormat.isDontKnow(value) else { return .null }
        guard let type else { return dynamic(value) }
        switch type {
        case .boolean:
            if case .bool(let b) = value { return .bool(b) }
        case .choice:
            return .choice(AnswerValue.choiceValues(value), order: order)
        case .scale, .numeric, .timeInterval, .ses:
            if let d = value.numericValue { return .number(d) }
        case .text:
            if case .string(let s) = value { return .string(s) }
        case .date:
            if let s = value.stringValue, let parsed = CalendarValue.parse(s) { return ExpressionValue(parsed) }
            if let s = value.stringValue, let partial = PartialDate.parse(s) { return .partialDate(partial) }
        case .timeOfDay:
            if let t = value.stringValue.flatMap(TimeOfDay.seconds) { return .time(seconds: t.seconds, withSeconds: t.withSeconds) }
        case .location, .multipleComponent, .file, .report:
            break
        }
        return .other(value)
    }

    /// A JSON value of unknown type read as what it looks like.
    static func dynamic(_ value: JSON) -> ExpressionValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int, .double: return value.numericValue.map { .number($0) } ?? .other(value)
        case .string(let s): return .string(s)
        default: return .other(value)
        }
    }

    init(_ calendar: CalendarValue) {
        switch calendar {
        case .date(let day): self = .date(day: day)
        case .dateTime(let ms): self = .dateTime(milliseconds: ms)
        }
    }

    // MARK: To JSON

    /// The value as results, the state and `stepkit_task_info` write it.
    var json: JSON {
        switch self {
        case .null: return .null
        case .number(let d): return d.isFinite ? .number(d) : .null
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .date(let day): return .string(ExpressionValue.dateText(day))
        case .dateTime(let ms): return .string(CivilTime.iso8601(milliseconds: ms))
        case .partialDate(let p): return .string(p.text)
        case .time(let s, let withSeconds):
            let hm = CivilTime.pad(Int64(s / 3600), 2) + ":" + CivilTime.pad(Int64(s / 60 % 60), 2)
            return .string(withSeconds ? hm + ":" + CivilTime.pad(Int64(s % 60), 2) : hm)
        case .choice(let values, _): return .array(values)
        case .other(let json): return json
        }
    }

    /// `YYYY-MM-DD` for a day number.
    static func dateText(_ day: Int64) -> String {
        let (y, m, d) = CivilTime.civil(fromDayNumber: day)
        return CivilTime.pad(y, 4) + "-" + CivilTime.pad(m, 2) + "-" + CivilTime.pad(d, 2)
    }

    // MARK: Comparison (the one implementation)

    /// The instant of a date or date-time (a date is the start of its day in UTC).
    private var instant: Int64? {
        switch self {
        case .date(let day): return day.multipliedSaturated(by: CivilTime.millisecondsPerDay)
        case .dateTime(let ms): return ms
        default: return nil
        }
    }

    /// Whether two values are equal; false when either is null. Choices compare as sets, and a
    /// choice with one selected value equals that value.
    static func equal(_ a: ExpressionValue, _ b: ExpressionValue) -> Bool {
        switch (a, b) {
        case (.null, _), (_, .null):
            return false
        case (.number(let x), .number(let y)):
            return x == y
        case (.string(let x), .string(let y)):
            return x == y
        case (.bool(let x), .bool(let y)):
            return x == y
        case (.time(let x, _), .time(let y, _)):
            return x == y
        case (.partialDate(let x), .partialDate(let y)):
            return x == y
        case (.choice(let x, _), .choice(let y, _)):
            return x.count == y.count && y.allSatisfy { e in x.contains { $0.sameValue(as: e) } }
        case (.choice(let x, _), .number), (.choice(let x, _), .string):
            return x.count == 1 && x[0].sameValue(as: b.json)
        case (.number, .choice), (.string, .choice):
            return equal(b, a)
        case (.other(let x), _):
            return x.sameValue(as: b.json)
        case (_, .other(let y)):
            return a.json.sameValue(as: y)
        default:
            if let x = a.instant, let y = b.instant { return x == y }
            return false
        }
    }

    /// -1, 0 or 1 as `a` is below, at or above `b`; nil when they do not order (either null,
    /// different kinds, booleans, choices without a known order). Strings order by Unicode scalar
    /// values when `strings` is true; a choice with one selected value orders by its position in
    /// the format's choices.
    static func order(_ a: ExpressionValue, _ b: ExpressionValue, strings: Bool = true) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
        switch (a, b) {
        case (.number(let x), .number(let y)):
            return x.isNaN || y.isNaN ? nil : sign(x, y)
        case (.string(let x), .string(let y)):
            guard strings else { return nil }
            return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) ? -1 : (equal(a, b) ? 0 : 1)
        case (.time(let x, _), .time(let y, _)):
            return sign(x, y)
        case (.partialDate, _), (_, .partialDate):
            return ExpressionValue.orderAtPrecision(a, b)
        case (.choice, _), (_, .choice):
            guard let x = a.choicePosition(orderOf: b), let y = b.choicePosition(orderOf: a) else { return nil }
            return sign(x, y)
        default:
            guard let x = a.instant, let y = b.instant else { return nil }
            return sign(x, y)
        }
    }

    /// FHIRPath's order of dates of different precision: by year, then month, then day, as far
    /// as both sides have them; nil (FHIRPath's empty) when they agree that far and one side
    /// stops (`2021` against `2021-05-03`).
    private static func orderAtPrecision(_ a: ExpressionValue, _ b: ExpressionValue) -> Int? {
        func parts(_ v: ExpressionValue) -> [Int64]? {
            switch v {
            case .partialDate(let p): return [p.year] + (p.month.map { [$0] } ?? [])
            case .date, .dateTime:
                guard let c = DateArithmetic.civil(v) else { return nil }
                return [c.year, c.month, c.dayOfMonth]
            default: return nil
            }
        }
        guard let x = parts(a), let y = parts(b) else { return nil }
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return nil
    }

    /// A single choice's position in its choices; a plain value's position in the other side's
    /// choices.
    private func choicePosition(orderOf other: ExpressionValue) -> Int? {
        switch self {
        case .choice(let values, let order):
            guard values.count == 1, let order else { return nil }
            return order.index(of: values[0])
        case .number, .string:
            guard case .choice(_, let order?) = other else { return nil }
            let mine = json
            return order.index(of: mine)
        default:
            return nil
        }
    }
}
