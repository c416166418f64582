import StepKitBase

/// `scale`: a discrete slider of whole numbers (ResearchKit's `ORKScaleAnswerFormat`).
///
/// ResearchKit's limits apply: minimum and maximum within ±10000, a step of at least 1 that
/// divides the range into 1 to 13 steps. ResearchKit checks that the answer sits on a step only
/// in its slider; StepKit checks it too.
struct ScaleFormat: AnswerFormatRules {
    let range: NumberRange
    let minimum: Int
    let step: Int

    var resultType: ResultType { .scale }
    var valueRange: ValueRange? { range.valueRange }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { add("step", .int(Int64(step))) }
    /// Display settings, read once, not made per format read (an array literal is allocated
    /// on each call).
    static let displayBools = ["vertical", "hideSelectedValue", "hideRanges", "hideLabels"]
    static let displayStrings = ["minimumValueDescription", "maximumValueDescription", "gradientColors"]

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let minimum = r.integer("minimum", required: true, in: -10_000...10_000)
        let maximum = r.integer("maximum", required: true, in: -10_000...10_000)
        let step = r.integer("step", in: 1...20_000) ?? 1
        r.accept(bools: ScaleFormat.displayBools)
        r.accept(strings: ScaleFormat.displayStrings)
        guard let minimum, let maximum else { _ = r.value("defaultValue"); return nil }
        if minimum >= maximum {
            d.error("minimumAboveMaximum", "\"minimum\" (\(minimum)) must be below \"maximum\" (\(maximum)).", at: r.path.key("minimum"))
            _ = r.value("defaultValue")
            return nil
        }
        let span = maximum - minimum
        if span % step != 0 {
            d.error("invalidStep", "\"step\" (\(step)) must divide the range \(minimum)...\(maximum) evenly.", at: r.path.key("step"))
        } else if span / step > 13 {
            d.error("tooManySteps", "A scale has at most 13 steps; \(minimum)...\(maximum) by \(step) has \(span / step). For a finer range use \"continuousScale\" (a slider of any number of values) or \"numeric\" (a typed number with \"minimum\" and \"maximum\").", at: r.path.key("step"))
        }
        let format = ScaleFormat(range: NumberRange(minimum: Double(minimum), maximum: Double(maximum), wholeNumbers: true),
                                 minimum: minimum, step: step)
        format.checkDefault("defaultValue", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        let value = Int(try range.check(answer))
        guard (value - minimum) % step == 0 else {
            throw AnswerRejection("notOnScale", "scale.notOnScale", ["minimum": .text(String(minimum)), "step": .text(String(step))])
        }
        return answer
    }
}

/// `continuousScale`: a slider of real numbers (ResearchKit's `ORKContinuousScaleAnswerFormat`).
/// The answer may not have more fraction digits than the slider shows.
struct ContinuousScaleFormat: AnswerFormatRules {
    let range: NumberRange
    let fractionDigits: Int

    var resultType: ResultType { .scale }
    var valueRange: ValueRange? { range.valueRange }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { add("maximumFractionDigits", .int(Int64(fractionDigits))) }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let minimum = r.number("minimum", required: true)
        let maximum = r.number("maximum", required: true)
        let digits = r.integer("maximumFractionDigits", in: 0...4) ?? 0
        _ = r.choice("numberStyle", of: ["default", "percent"])
        r.accept(bools: ["vertical", "hideSelectedValue", "hideRanges", "hideLabels"])
        r.accept(strings: ["minimumValueDescription", "maximumValueDescription"])
        _ = r.value("defaultValue")
        guard let minimum, let maximum else { return nil }
        for (key, v) in [("minimum", minimum), ("maximum", maximum)] where abs(v) > 10_000 {
            d.error("outOfRange", "\"\(key)\" must be between -10000 and 10000.", at: r.path.key(key))
        }
        if minimum >= maximum {
            d.error("minimumAboveMaximum", "\"minimum\" (\(NumberText.format(minimum))) must be below \"maximum\" (\(NumberText.format(maximum))).", at: r.path.key("minimum"))
            return nil
        }
        let format = ContinuousScaleFormat(range: NumberRange(minimum: minimum, maximum: maximum, wholeNumbers: false), fractionDigits: digits)
        format.checkDefault("defaultValue", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        let value = try range.check(answer)
        guard NumberText.hasAtMost(fractionDigits: fractionDigits, value) else {
            throw fractionDigits == 0 ? AnswerRejection("tooPrecise", "number.noDecimals", ["range": .clause(range.instruction)])
                : AnswerRejection("tooPrecise", "number.tooPrecise", ["range": .clause(range.instruction), "count": .count(fractionDigits)])
        }
        return answer
    }
}
