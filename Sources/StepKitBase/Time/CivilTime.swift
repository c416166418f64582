/// Calendar arithmetic for ISO 8601 without Foundation: proleptic Gregorian dates as day numbers
/// (days since 1970-01-01), after Howard Hinnant's `days_from_civil`.
package enum CivilTime {
    package static let millisecondsPerDay: Int64 = 86_400_000

    package static func dayNumber(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func civil(fromDayNumber z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    package static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `value` in decimal, left-padded with zeros to `width` digits (for dates and times shown
    /// as text, e.g. an expression's date value).
    package static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// `2026-11-22T13:27:27.123Z` for a time in milliseconds since the epoch.
    ///
    /// Written digit by digit into the string's own 24 bytes: every state, result and event
    /// carries dates, and building them by concatenating padded pieces was a fifth of a step
    /// (`benchmarks/README.md`).
    package static func iso8601(milliseconds ms: Int64) -> String {
        String(unsafeUninitializedCapacity: 24) { buffer in
            writeISO8601(milliseconds: ms, to: buffer.baseAddress!)
            return 24
        }
    }

    /// `iso8601`'s 24 bytes written at `out` (for `JSONOutput`, which writes dates in place).
    package static func writeISO8601(milliseconds ms: Int64, to out: UnsafeMutablePointer<UInt8>) {
        // Clamp to years 0...9999 so the text keeps its shape whatever a host clock says.
        let clamped = min(max(ms, -62_167_219_200_000), 253_402_300_799_999)
        let days = clamped >= 0 ? clamped / millisecondsPerDay : (clamped - millisecondsPerDay + 1) / millisecondsPerDay
        let rest = clamped - days * millisecondsPerDay
        let (y, m, d) = civil(fromDayNumber: days)
        let hour = rest / 3_600_000, minute = rest / 60_000 % 60, second = rest / 1000 % 60, milli = rest % 1000
        // The clamp keeps every field within its width (year 0...9999), so no digit is lost.
        var start = 0
        // Writes `value` in `width` digits, then `separator`.
        func put(_ value: Int64, _ width: Int, _ separator: Unicode.Scalar) {
            var v = value
            var i = start + width - 1
            while i >= start {
                out[i] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                v /= 10
                i -= 1
            }
            out[start + width] = UInt8(ascii: separator)
            start += width + 1
        }
        put(y, 4, "-")
        put(m, 2, "-")
        put(d, 2, "T")
        put(hour, 2, ":")
        put(minute, 2, ":")
        put(second, 2, ".")
        put(milli, 3, "Z")
    }
}

/// A calendar date or a date-time with its UTC offset, as answers and date limits spell them.
package enum CalendarValue: Sendable, Equatable {
    /// `YYYY-MM-DD`: a day number.
    case date(day: Int64)
    /// `YYYY-MM-DDTHH:mm[:ss[.sss]](Z|±HH:mm)`: an instant in milliseconds since the epoch.
    case dateTime(milliseconds: Int64)

    /// A value comparable across both forms: a date counts as the start of its day in UTC.
    package var instant: Int64 {
        switch self {
        case .date(let day): return day.multipliedSaturated(by: CivilTime.millisecondsPerDay)
        case .dateTime(let ms): return ms
        }
    }

    /// Parses the text, or returns nil when it is not one of the two forms or names no real day.
    ///
    /// The bytes are read in place (`utf8.span`, bounds-checked): copying them into an array
    /// was a third of validating a date answer.
    package static func parse(_ text: String) -> CalendarValue? {
        let b = text.utf8.span
        func digits(_ start: Int, _ count: Int) -> Int64? { CalendarValue.digits(b, start, count) }
        func char(_ i: Int, _ c: Unicode.Scalar) -> Bool { CalendarValue.byte(b, i, is: c) }
        guard b.count >= 10, let year = digits(0, 4), char(4, "-"), let month = digits(5, 2), char(7, "-"),
              let day = digits(8, 2), (1...12).contains(month), day >= 1,
              day <= CivilTime.daysInMonth(year: year, month: month) else { return nil }
        let dayNumber = CivilTime.dayNumber(year: year, month: month, day: day)
        if b.count == 10 { return .date(day: dayNumber) }
        guard char(10, "T"), let hour = digits(11, 2), char(13, ":"), let minute = digits(14, 2),
              hour < 24, minute < 60 else { return nil }
        var i = 16
        var second: Int64 = 0, milli: Int64 = 0
        if char(i, ":") {
            guard let s = digits(i + 1, 2), s < 60 else { return nil }
            second = s
            i += 3
            if char(i, ".") {
                var count = 0
                var fraction: Int64 = 0
                i += 1
                while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                    if count < 3 { fraction = fraction * 10 + Int64(b[i] - 0x30) }
                    count += 1
                    i += 1
                }
                guard count > 0, count <= 9 else { return nil }
                var scaled = count
                while scaled < 3 { fraction *= 10; scaled += 1 }
                milli = fraction
            }
        }
        var offsetMinutes: Int64 = 0
        if char(i, "Z") {
            i += 1
        } else if char(i, "+") || char(i, "-") {
            let sign: Int64 = char(i, "-") ? -1 : 1
            guard let oh = digits(i + 1, 2), char(i + 3, ":"), let om = digits(i + 4, 2), oh < 24, om < 60 else { return nil }
            offsetMinutes = sign * (oh * 60 + om)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let local = dayNumber * CivilTime.millisecondsPerDay + ((hour * 60 + minute) * 60 + second) * 1000 + milli
        return .dateTime(milliseconds: local - offsetMinutes * 60_000)
    }

    /// The number spelt by `count` ASCII digits at `start`, or nil.
    private static func digits(_ b: Span<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        guard start >= 0, count > 0, start + count <= b.count else { return nil }
        var v: Int64 = 0
        for i in start..<(start + count) {
            let c = b[i]
            guard c >= 0x30 && c <= 0x39 else { return nil }
            v = v * 10 + Int64(c - 0x30)
        }
        return v
    }

    /// Whether the byte at `i` is the ASCII character `c`. The byte itself is compared (a
    /// `Character` literal here was turned into its ASCII value on every comparison, most of
    /// the parse's cost).
    private static func byte(_ b: Span<UInt8>, _ i: Int, is c: Unicode.Scalar) -> Bool {
        i >= 0 && i < b.count && UInt32(b[i]) == c.value
    }
}

/// `HH:mm` as minutes since midnight.
/// A date at reduced precision, as FHIR's `date` and `dateTime` allow: `YYYY` or `YYYY-MM`
/// (years 0001-9999). It is kept as written and compared at the precision both sides have.
package struct PartialDate: Sendable, Equatable {
    package let year: Int64
    package let month: Int64?

    package static func parse(_ text: String) -> PartialDate? {
        let b = Array(text.utf8)
        guard b.count == 4 || b.count == 7 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var v: Int64 = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[i] - 0x30)
            }
            return v
        }
        guard let year = number(0..<4), year >= 1 else { return nil }
        if b.count == 4 { return PartialDate(year: year, month: nil) }
        guard b[4] == UInt8(ascii: "-"), let month = number(5..<7), (1...12).contains(month) else { return nil }
        return PartialDate(year: year, month: month)
    }

    package var text: String { CivilTime.pad(year, 4) + (month.map { "-" + CivilTime.pad($0, 2) } ?? "") }
}

package enum TimeOfDay {
    /// Seconds since midnight of `HH:mm` or `HH:mm:ss` (nil otherwise), and whether the text
    /// has its seconds (a time renders as it was written).
    package static func seconds(_ text: String) -> (seconds: Int, withSeconds: Bool)? {
        if let m = minutes(text) { return (m * 60, false) }
        let b = Array(text.utf8)
        guard b.count == 8, b[5] == UInt8(ascii: ":"), let m = minutes(String(decoding: b[0..<5], as: UTF8.self)),
              b[6] >= 0x30, b[6] <= 0x35, b[7] >= 0x30, b[7] <= 0x39 else { return nil }
        return (m * 60 + Int(b[6] - 0x30) * 10 + Int(b[7] - 0x30), true)
    }

    /// Minutes since midnight of `HH:mm`, or nil.
    static func minutes(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count == 5, b[2] == UInt8(ascii: ":") else { return nil }
        var values: [Int] = []
        for range in [0..<2, 3..<5] {
            var v = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            values.append(v)
        }
        guard values.count == 2, values[0] < 24, values[1] < 60 else { return nil }
        return values[0] * 60 + values[1]
    }
}
