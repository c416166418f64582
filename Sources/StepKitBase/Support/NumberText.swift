/// Numbers as people read them in messages: `18`, not `18.0`.
package enum NumberText {
    package static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// `1 character`, `2 characters`: a count with its noun in the number English gives it, so a
    /// limit of one never reads "Enter at most 1 characters." (issue 26). `plural` is for the
    /// nouns that do not just add an s.
    package static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? noun : plural ?? noun + "s")
    }

    /// True when `value` has no more than `digits` digits after the decimal point (allowing for
    /// binary rounding: 0.1 has one).
    package static func hasAtMost(fractionDigits digits: Int, _ value: Double) -> Bool {
        var scale = 1.0
        for _ in 0..<max(0, min(digits, 15)) { scale *= 10 }
        let scaled = value * scale
        return abs(scaled - scaled.rounded()) <= 1e-9 * max(1, abs(scaled))
    }
}
