import StepKitBase

/// `numeric`: a typed number, whole or decimal, with optional bounds and unit
/// (ResearchKit's `ORKNumericAnswerFormat`).
struct NumericFormat: AnswerFormatRules {
    let range: NumberRange
    let fractionDigits: Int?
    /// Reported with the result; left out of messages, which read "between 18 and 90."
    let unit: String?
    /// `minimum`/`maximum` written as expressions.
    var boundExpressions = JSONObject()

    var resultType: ResultType { .numeric }
    /// The literal bounds (a bound written as an expression is not known before it is set).
    var valueRange: ValueRange? { range.valueRange }
    var boundKeys: BoundKeys? { NumericFormat.boundKeys }
    static let boundKeys = BoundKeys(minimum: "minimum", maximum: "maximum", type: .number)
    /// Read once, not made per format read (an array literal is allocated on each call).
    private static let boundKeyList = [boundKeys.minimum, boundKeys.maximum]
    private static let styles = ["integer", "decimal"]
    private static let displayStrings = ["displayUnit", "placeholder"]

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let style = r.choice("style", of: styles, required: true)
        let whole = style == "integer"
        let expressions = expressionBounds(r, boundKeyList)
        let (minimum, maximum) = readBounds(r, minimumKey: "minimum", maximumKey: "maximum", whole: false, skipping: expressions)
        let unit = r.string("unit")
        r.accept(strings: displayStrings)
        _ = r.bool("hideUnitWhenAnswerIsEmpty")
        let digits = r.integer("maximumFractionDigits", in: 0...15)
        if whole, digits != nil {
            r.diagnostics.error("invalidValue", "\"maximumFractionDigits\" applies to the decimal style only.", at: r.path.key("maximumFractionDigits"))
        }
        let format = NumericFormat(range: NumberRange(minimum: minimum, maximum: maximum, wholeNumbers: whole),
                                   fractionDigits: digits, unit: unit, boundExpressions: expressions)
        format.checkDefault("defaultNumericAnswer", in: r)
        return style == nil ? nil : format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        let value = try range.check(answer)
        if let fractionDigits, !NumberText.hasAtMost(fractionDigits: fractionDigits, value) {
            throw AnswerRejection("tooPrecise", "number.tooPrecise", ["range": .clause(range.instruction), "count": .count(fractionDigits)])
        }
        return range.wholeNumbers ? .int(Int64(value)) : answer
    }

    /// Outside the bounds as they evaluate now: the message is the format's own sentence with
    /// the evaluated bounds in it (a bound that evaluates to null is none).
    func boundRejection(_ answer: JSON, minimum: ExpressionValue?, maximum: ExpressionValue?) -> AnswerRejection? {
        guard let value = answer.numericValue else { return nil }
        var bounded = range
        if let minimum { bounded.minimum = nil; if case .number(let d) = minimum { bounded.minimum = d } }
        if let maximum { bounded.maximum = nil; if case .number(let d) = maximum { bounded.maximum = d } }
        let below = bounded.minimum.map { value < $0 } ?? false
        let above = bounded.maximum.map { value > $0 } ?? false
        return below || above ? AnswerRejection("outOfRange", bounded.instruction) : nil
    }
}

/// `height` (centimetres) and `weight` (kilograms): ResearchKit's `ORKHeightAnswerFormat` and
/// `ORKWeightAnswerFormat`, whose pickers bound the value; StepKit bounds it the same way.
struct MeasurementFormat: AnswerFormatRules {
    enum Kind: Sendable { case height, weight }

    let range: NumberRange

    var resultType: ResultType { .numeric }
    var valueRange: ValueRange? { range.valueRange }
    var unit: String? { range.unit }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { range.defaults(minimumKey: "minimumValue", maximumKey: "maximumValue", add) }

    static func parse(_ r: FieldReader, kind: Kind) -> (any AnswerFormatRules)? {
        _ = r.choice("measurementSystem", of: ["local", "metric", "USC"])
        if kind == .weight { _ = r.choice("numericPrecision", of: ["default", "low", "high"]) }
        let (minimum, maximum) = readBounds(r, minimumKey: "minimumValue", maximumKey: "maximumValue", whole: false)
        let defaultMax: Double = kind == .height ? 300 : 657
        let format = MeasurementFormat(range: NumberRange(minimum: minimum ?? 0, maximum: maximum ?? defaultMax, wholeNumbers: false,
                                                          unit: kind == .height ? "cm" : "kg"))
        format.checkDefault("defaultValue", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        _ = try range.check(answer)
        return answer
    }
}

/// `age`: whole years between `minimumAge` and `maximumAge` (ResearchKit's `ORKAgeAnswerFormat`).
struct AgeFormat: AnswerFormatRules {
    let range: NumberRange

    var resultType: ResultType { .numeric }
    var valueRange: ValueRange? { range.valueRange }
    var unit: String? { "years" }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { range.defaults(minimumKey: "minimumAge", maximumKey: "maximumAge", add) }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let (minimum, maximum) = readBounds(r, minimumKey: "minimumAge", maximumKey: "maximumAge", whole: true)
        r.accept(strings: ["minimumAgeCustomText", "maximumAgeCustomText"])
        r.accept(bools: ["showYear", "treatMinAgeAsRange", "treatMaxAgeAsRange", "useYearForResult"])
        _ = r.integer("relativeYear", in: 1...9999)
        let format = AgeFormat(range: NumberRange(minimum: minimum ?? 0, maximum: maximum ?? 125, wholeNumbers: true, unit: "years"))
        format.checkDefault("defaultValue", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        .int(Int64(try range.check(answer)))
    }
}

/// `ses`: the rung a participant picks on the socio-economic ladder, 0 (bottom) to 9 (top)
/// (ResearchKit's `ORKSESAnswerFormat`).
struct SESFormat: AnswerFormatRules {
    static let range = NumberRange(minimum: 0, maximum: 9, wholeNumbers: true)

    var resultType: ResultType { .ses }
    var valueRange: ValueRange? { SESFormat.range.valueRange }
    /// The ladder's rungs, which a definition cannot change.
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { SESFormat.range.defaults(minimumKey: "minimum", maximumKey: "maximum", add) }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        r.accept(strings: ["topRungText", "bottomRungText"])
        return SESFormat()
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        .int(Int64(try SESFormat.range.check(answer)))
    }
}

/// `timeInterval`: a duration in seconds, picked in steps of whole minutes
/// (ResearchKit's `ORKTimeIntervalAnswerFormat`).
struct TimeIntervalFormat: AnswerFormatRules {
    let maximum: Double
    let stepMinutes: Int

    var resultType: ResultType { .timeInterval }
    /// Seconds, from none to `maximumInterval`.
    var valueRange: ValueRange? { ValueRange(minimum: 0, maximum: maximum) }
    /// Answers are seconds: the unit is stated for the host, not written with the result.
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {
        add("maximumInterval", .number(maximum))
        add("step", .int(Int64(stepMinutes)))
        add("unit", .string("s"))
    }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let step = r.integer("step", in: 1...30) ?? 1
        let maximum = r.number("maximumInterval") ?? 86_340
        if maximum <= 0 {
            r.diagnostics.error("outOfRange", "\"maximumInterval\" must be above 0.", at: r.path.key("maximumInterval"))
        }
        let format = TimeIntervalFormat(maximum: maximum, stepMinutes: step)
        format.checkDefault("defaultInterval", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        let message = Message("interval.range", ["maximum": .text(NumberText.format(maximum)), "count": .count(stepMinutes)])
        guard let seconds = answer.numericValue, seconds.isFinite, seconds >= 0, seconds <= maximum else {
            throw AnswerRejection(answer.numericValue == nil ? "wrongType" : "outOfRange", message)
        }
        let stepSeconds = Double(stepMinutes * 60)
        guard seconds.truncatingRemainder(dividingBy: stepSeconds) == 0 else {
            throw AnswerRejection("notOnStep", message)
        }
        return answer
    }
}
