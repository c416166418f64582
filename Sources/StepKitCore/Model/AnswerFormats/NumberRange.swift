import StepKitBase

/// The range check and message shared by every format answered with a number.
struct NumberRange: Sendable {
    var minimum: Double?
    var maximum: Double?
    var wholeNumbers: Bool
    var unit: String?

    /// "Enter a whole number between 18 and 90." — the sentence a host shows as it is.
    var instruction: String {
        let noun = wholeNumbers ? "a whole number" : "a number"
        let unitText = unit.map { $0.isEmpty ? "" : " " + $0 } ?? ""
        switch (minimum, maximum) {
        case let (min?, max?):
            return "Enter \(noun) between \(NumberText.format(min)) and \(NumberText.format(max))\(unitText)."
        case let (min?, nil):
            return "Enter \(noun) of at least \(NumberText.format(min))\(unitText)."
        case let (nil, max?):
            return "Enter \(noun) of at most \(NumberText.format(max))\(unitText)."
        case (nil, nil):
            return "Enter \(noun)."
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
    func defaults(minimumKey: String, maximumKey: String) -> JSONObject {
        var fields = JSONObject()
        if let minimum { fields[minimumKey] = .number(minimum) }
        if let maximum { fields[maximumKey] = .number(maximum) }
        if let unit { fields["unit"] = .string(unit) }
        return fields
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
