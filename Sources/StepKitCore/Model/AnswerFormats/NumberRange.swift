import StepKitBase

/// The range check and message shared by every format answered with a number.
struct NumberRange: Sendable {
    var minimum: Double?
    var maximum: Double?
    var wholeNumbers: Bool
    var unit: String?

    /// "Enter a whole number between 18 and 90." — the sentence a participant is shown, in
    /// their language (`{unit}` is empty or the unit after a space).
    var instruction: Message {
        let whole = wholeNumbers
        let unitText = Message.Argument.text(unit.map { $0.isEmpty ? "" : " " + $0 } ?? "")
        switch (minimum, maximum) {
        case let (min?, max?):
            return Message(whole ? "number.wholeBetween" : "number.between",
                           ["minimum": .text(NumberText.format(min)), "maximum": .text(NumberText.format(max)), "unit": unitText])
        case let (min?, nil):
            return Message(whole ? "number.wholeAtLeast" : "number.atLeast", ["minimum": .text(NumberText.format(min)), "unit": unitText])
        case let (nil, max?):
            return Message(whole ? "number.wholeAtMost" : "number.atMost", ["maximum": .text(NumberText.format(max)), "unit": unitText])
        case (nil, nil):
            return Message(whole ? "number.whole" : "number.any")
        }
    }

    /// Whole numbers are kept as 64-bit integers and refused from 9e15 on (`check`).
    static let wholeLimit = 9.0e15

    /// Where the numbers `check` accepts lie (`AnswerFormatRules.valueRange`).
    var valueRange: ValueRange {
        guard wholeNumbers else { return ValueRange(minimum: minimum, maximum: maximum) }
        let largest = NumberRange.wholeLimit - 1
        return ValueRange(minimum: Swift.max(minimum ?? -largest, -largest), maximum: Swift.min(maximum ?? largest, largest))
    }

    /// The bounds and unit under a format's keys, for `AnswerFormatRules.defaults`.
    func defaults(minimumKey: String, maximumKey: String, _ add: (_ key: String, _ value: JSON) -> Void) {
        if let minimum { add(minimumKey, .number(minimum)) }
        if let maximum { add(maximumKey, .number(maximum)) }
        if let unit { add("unit", .string(unit)) }
    }

    func check(_ answer: JSON) throws(AnswerRejection) -> Double {
        guard let value = answer.numericValue, value.isFinite else {
            throw AnswerRejection("wrongType", instruction)
        }
        if wholeNumbers && value != value.rounded() {
            throw AnswerRejection("notAnInteger", instruction)
        }
        // Whole numbers are kept as 64-bit integers; beyond 2^53 they would not be exact anyway.
        if wholeNumbers && abs(value) >= NumberRange.wholeLimit { throw AnswerRejection("outOfRange", instruction) }
        if let minimum, value < minimum { throw AnswerRejection("outOfRange", instruction) }
        if let maximum, value > maximum { throw AnswerRejection("outOfRange", instruction) }
        return value
    }
}

/// Reads `minimum`/`maximum`-style bounds and reports a minimum above the maximum.
/// Keys in `skipping` (bounds written as expressions) are left to `AnswerBounds`.
func readBounds(_ r: FieldReader, minimumKey: String, maximumKey: String, whole: Bool, skipping: JSONObject = JSONObject()) -> (Double?, Double?) {
    func read(_ key: String) -> Double? {
        if skipping[key] != nil { return nil }
        return whole ? r.integer(key).map(Double.init) : r.number(key)
    }
    let minimum = read(minimumKey)
    let maximum = read(maximumKey)
    if let minimum, let maximum, minimum > maximum {
        r.diagnostics.error("minimumAboveMaximum", "\"\(minimumKey)\" (\(NumberText.format(minimum))) is above \"\(maximumKey)\" (\(NumberText.format(maximum))).", at: r.path.key(minimumKey))
    }
    return (minimum, maximum)
}
