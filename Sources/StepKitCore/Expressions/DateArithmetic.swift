import StepKitBase

/// Whole-unit date differences and offsets for expressions, on the UTC calendar. Every result
/// stays within years 0…9999 or is null, so nothing can overflow.
enum DateArithmetic {
    struct Civil {
        let day: Int64
        let year: Int64
        let month: Int64
        let dayOfMonth: Int64
        /// Milliseconds into the day (0 for a date).
        let time: Int64
    }

    /// Day numbers of 0000-01-01 and 9999-12-31.
    static let firstDay: Int64 = -719_528
    static let lastDay: Int64 = 2_932_896

    static func civil(_ value: ExpressionValue) -> Civil? {
        let day: Int64, time: Int64
        switch value {
        case .date(let d):
            day = d; time = 0
        case .dateTime(let ms):
            day = ExpressionEvaluator<NoAnswers>.day(of: ms)
            time = ms - day.multipliedSaturated(by: CivilTime.millisecondsPerDay)
        default:
            return nil
        }
        guard day >= firstDay, day <= lastDay else { return nil }
        let (y, m, d) = CivilTime.civil(fromDayNumber: day)
        return Civil(day: day, year: y, month: m, dayOfMonth: d, time: time)
    }

    /// Whole months from `from` to `to` (negative when `to` is earlier): a month counts once its
    /// day of month (and time) is reached, so 2000-01-31 to 2000-02-29 is 0 months.
    static func months(from: Civil, to: Civil) -> Int64 {
        var months = (to.year * 12 + to.month) - (from.year * 12 + from.month)
        let toRest = (to.dayOfMonth, to.time), fromRest = (from.dayOfMonth, from.time)
        if months > 0 && toRest < fromRest { months -= 1 }
        if months < 0 && toRest > fromRest { months += 1 }
        return months
    }

    enum Unit { case days, months, years }

    /// `value` moved by `n` whole units (n truncated toward zero); a month offset that lands past
    /// the month's end keeps to its last day (2024-01-31 + 1 month = 2024-02-29).
    static func add(_ unit: Unit, _ n: Double, to value: ExpressionValue) -> ExpressionValue {
        guard n.isFinite, abs(n) <= 4_000_000, let c = civil(value) else { return .null }
        let count = Int64(n.rounded(.towardZero))
        var day: Int64
        switch unit {
        case .days:
            day = c.day + count
        case .months, .years:
            let total = c.year * 12 + (c.month - 1) + (unit == .years ? count * 12 : count)
            let year = total >= 0 ? total / 12 : -((-total + 11) / 12)
            let month = total - year * 12 + 1
            guard year >= 0, year <= 9999 else { return .null }
            let dom = min(c.dayOfMonth, CivilTime.daysInMonth(year: year, month: month))
            day = CivilTime.dayNumber(year: year, month: month, day: dom)
        }
        guard day >= firstDay, day <= lastDay else { return .null }
        if case .dateTime = value {
            return .dateTime(milliseconds: day * CivilTime.millisecondsPerDay + c.time)
        }
        return .date(day: day)
    }
}

/// A lookup with no answers, no calculations and time zero.
struct NoAnswers: AnswerLookup {
    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? { nil }
}
