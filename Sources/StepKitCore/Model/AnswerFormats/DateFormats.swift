import StepKitBase

/// `date`: a calendar date or a date and time, within optional limits (ResearchKit's
/// `ORKDateAnswerFormat`, whose picker enforces the limits; StepKit enforces them on the answer).
struct DateFormat: AnswerFormatRules {
    let withTime: Bool
    let minimum: (text: String, value: CalendarValue)?
    let maximum: (text: String, value: CalendarValue)?
    let minuteInterval: Int
    /// `"partial": true`: a year (`2021`) or a month (`2021-05`) is an answer too (FHIR's
    /// reduced precision), kept as written.
    var partial = false
    /// `minimumDate`/`maximumDate` written as expressions.
    var boundExpressions = JSONObject()

    var resultType: ResultType { .date }
    var expressionType: ExpressionType? { withTime ? .dateTime : .date }
    /// The literal limits as instants; none for partial answers, which a limit refuses only
    /// when they lie wholly outside it.
    var valueRange: ValueRange? {
        guard !partial, minimum != nil || maximum != nil else { return nil }
        return ValueRange(minimum: minimum.map { Double($0.value.instant) }, maximum: maximum.map { Double($0.value.instant) })
    }
    var boundKeys: BoundKeys? { BoundKeys(minimum: DateFormat.minimumKey, maximum: DateFormat.maximumKey, type: withTime ? .dateTime : .date) }
    static let minimumKey = "minimumDate", maximumKey = "maximumDate"
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {
        add("style", .string(withTime ? "dateTime" : "date"))
        add("minuteInterval", .int(Int64(minuteInterval)))
    }

    /// The message key asking for this format's date shape.
    private var shape: String { withTime ? "date.enterDateTime" : "date.enterDate" }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let withTime = r.choice("style", of: ["date", "dateTime"]) == "dateTime"
        let minuteInterval = r.integer("minuteInterval", in: 1...30) ?? 1
        if 60 % minuteInterval != 0 {
            d.error("invalidValue", "\"minuteInterval\" must divide 60.", at: r.path.key("minuteInterval"))
        }
        _ = r.string("calendar")
        let expressions = expressionBounds(r, [minimumKey, maximumKey])
        func limit(_ key: String) -> (String, CalendarValue)? {
            guard expressions[key] == nil, let text = r.string(key) else { return nil }
            guard let value = CalendarValue.parse(text), value.isDateTime == withTime else {
                d.error("invalidDate", "\"\(key)\" must be " + (withTime ? "a date and time with its UTC offset (2026-11-22T13:30:00Z)" : "a date as YYYY-MM-DD") + ".", at: r.path.key(key))
                return nil
            }
            return (text, value)
        }
        let minimum = limit(minimumKey), maximum = limit(maximumKey)
        if let minimum, let maximum, minimum.1.instant > maximum.1.instant {
            d.error("minimumAboveMaximum", "\"minimumDate\" is after \"maximumDate\".", at: r.path.key("minimumDate"))
        }
        let format = DateFormat(withTime: withTime, minimum: minimum, maximum: maximum, minuteInterval: minuteInterval,
                                partial: r.bool("partial") ?? false, boundExpressions: expressions)
        format.checkDefault("defaultDate", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        if partial, case .string(let text) = answer {
            if let p = PartialDate.parse(text) { return try validatePartial(p, answer) }
            // A date where a date and time is asked: FHIR's dateTime at the precision of a day.
            if withTime, case .date? = CalendarValue.parse(text) { return try validatePartial(nil, answer) }
        }
        guard case .string(let text) = answer, let value = CalendarValue.parse(text), value.isDateTime == withTime else {
            throw AnswerRejection("invalidDate", partial ? (withTime ? "date.enterDateTimePartial" : "date.enterDatePartial") : shape)
        }
        if let minimum, value.instant < minimum.value.instant {
            throw AnswerRejection("outOfRange", rangeMessage)
        }
        if let maximum, value.instant > maximum.value.instant {
            throw AnswerRejection("outOfRange", rangeMessage)
        }
        if withTime && minuteInterval > 1, case .dateTime(let ms) = value {
            let minuteOfHour = ((ms % 3_600_000) + 3_600_000) % 3_600_000 / 60_000
            if minuteOfHour % Int64(minuteInterval) != 0 || ms % 60_000 != 0 {
                throw AnswerRejection("notOnStep", "time.notOnStep", ["count": .count(minuteInterval)])
            }
        }
        return answer
    }

    /// A reduced-precision answer is outside the limits only when it is wholly outside them
    /// (`2019` is before 2020-05-01; `2020` may not be).
    private func validatePartial(_ p: PartialDate?, _ answer: JSON) throws(AnswerRejection) -> JSON? {
        let value: ExpressionValue = p.map { .partialDate($0) } ?? ExpressionValue.answer(answer, .date)
        if let minimum, let o = ExpressionValue.order(value, ExpressionValue(minimum.value)), o < 0 {
            throw AnswerRejection("outOfRange", rangeMessage)
        }
        if let maximum, let o = ExpressionValue.order(value, ExpressionValue(maximum.value)), o > 0 {
            throw AnswerRejection("outOfRange", rangeMessage)
        }
        return answer
    }

    private var rangeMessage: Message {
        DateFormat.rangeMessage(minimum?.text, maximum?.text, neither: Message(shape))
    }

    private static func rangeMessage(_ minimum: String?, _ maximum: String?, neither: Message) -> Message {
        switch (minimum, maximum) {
        case let (min?, max?): return Message("date.between", ["minimum": .text(min), "maximum": .text(max)])
        case let (min?, nil): return Message("date.onOrAfter", ["minimum": .text(min)])
        case let (nil, max?): return Message("date.onOrBefore", ["maximum": .text(max)])
        case (nil, nil): return neither
        }
    }

    /// Outside the bounds written as expressions, as they evaluate now (a literal limit is this
    /// format's own check; here it only completes the message).
    func boundRejection(_ answer: JSON, minimum low: ExpressionValue?, maximum high: ExpressionValue?) -> AnswerRejection? {
        guard let text = answer.stringValue, let parsed = CalendarValue.parse(text) else { return nil }
        let low = low ?? .null, high = high ?? .null
        let value = ExpressionValue(parsed)
        let lowText = low.isNull ? minimum?.text : low.json.stringValue
        let highText = high.isNull ? maximum?.text : high.json.stringValue
        let below = ExpressionValue.order(value, low).map { $0 < 0 } ?? false
        let above = ExpressionValue.order(value, high).map { $0 > 0 } ?? false
        guard below || above else { return nil }
        return AnswerRejection("outOfRange", DateFormat.rangeMessage(lowText, highText, neither: Message("date.withinRange")))
    }
}

extension CalendarValue {
    var isDateTime: Bool {
        if case .dateTime = self { return true }
        return false
    }
}

/// `timeOfDay`: a time on the clock, `"HH:mm"` (ResearchKit's `ORKTimeOfDayAnswerFormat`); with
/// `"seconds": true`, `"HH:mm:ss"` (FHIR's `time`).
struct TimeOfDayFormat: AnswerFormatRules {
    let minuteInterval: Int
    var seconds = false

    var resultType: ResultType { .timeOfDay }
    /// Seconds since midnight: the last time on the interval is 24:00 less one interval (and
    /// its 59th second, when seconds are written).
    var valueRange: ValueRange? { ValueRange(minimum: 0, maximum: Double((24 * 60 - minuteInterval) * 60 + (seconds ? 59 : 0))) }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { add("minuteInterval", .int(Int64(minuteInterval))) }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let minuteInterval = r.integer("minuteInterval", in: 1...30) ?? 1
        if 60 % minuteInterval != 0 {
            r.diagnostics.error("invalidValue", "\"minuteInterval\" must divide 60.", at: r.path.key("minuteInterval"))
        }
        let format = TimeOfDayFormat(minuteInterval: minuteInterval, seconds: r.bool("seconds") ?? false)
        format.checkDefault("defaultComponents", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .string(let text) = answer, let time = TimeOfDay.seconds(text), time.withSeconds == seconds else {
            throw AnswerRejection("invalidTime", seconds ? "time.enterWithSeconds" : "time.enter")
        }
        guard time.seconds / 60 % minuteInterval == 0 else {
            throw AnswerRejection("notOnStep", "time.notOnStep", ["count": .count(minuteInterval)])
        }
        return answer
    }
}
