/// `JSON` to text, compact, written directly (no intermediate jansson tree: every call's output
/// and every state read goes through here, and building then dumping a tree cost more than the
/// rest of a state read together), through `JSONOutput`, the buffer the engine's own writers
/// (the result) write into without a value tree.
///
/// The text is byte for byte what jansson's `json_dumps` gave with `JSON_COMPACT` and
/// `JSON_REAL_PRECISION` (saved restoration data and fingerprints are digests of it, so it must
/// not change): keys in insertion order, `"` `\` and control characters escaped (`\b \f \n \r
/// \t`, others `\u00XX`), everything else as UTF-8. Reals are written with as many significant
/// digits as the most demanding real in the document needs to read back exactly (Swift's
/// shortest round-trip form tells how many), so `0.1` is written `0.1`, not
/// `0.10000000000000001`, and every value survives a save and a restore.
package enum JSONWriter {
    /// The document as a `malloc`'d C string, for handing to a C caller (freed with `free`).
    package static func mallocString(_ value: JSON) -> UnsafeMutablePointer<CChar>? {
        var out = JSONOutput(capacity: 512)
        out.value(value)
        return out.finish()
    }

    /// The document as a Swift string.
    package static func string(_ value: JSON) -> String {
        var out = JSONOutput(capacity: 512)
        out.value(value)
        return out.finishString()
    }

    /// The document's UTF-8 bytes, written by `JSONOutput` (one pass: reals, whose precision
    /// depends on every real in the document, are noted where they go and written in at the end).
    static func encode(_ value: JSON) -> [UInt8] {
        var out = JSONOutput(capacity: 512)
        out.value(value)
        return out.finishBytes()
    }

    /// How many significant digits the shortest exact decimal form of `d` has (1...17).
    static func significantDigits(_ d: Double) -> Int {
        shortDecimalDigits(d) ?? describedDigits(d)
    }

    /// The significant digits of `d` when it is a decimal of at most 15 significant digits and
    /// at most 8 after the point (most reals in answers: 47.1, 0.25), by arithmetic alone;
    /// nil for any other, which `describedDigits` counts from the shortest text instead (making
    /// that text was most of writing a result with reals in it).
    ///
    /// Why it is exact: `r / 10^k` is the double nearest the decimal r×10⁻ᵏ (r and 10ᵏ are exact
    /// doubles, and division rounds correctly), so when it equals `d`, that decimal of at most
    /// 15 significant digits reads back as `d`; and no two different decimals of at most 15
    /// significant digits read back as the same double, so no shorter decimal does either.
    static func shortDecimalDigits(_ d: Double) -> Int? {
        let magnitude = d.magnitude
        var scale = 1.0
        for _ in 0...8 {
            let scaled = magnitude * scale
            guard scaled < 1e15 else { return nil }
            let r = scaled.rounded()
            if r >= 1 && r / scale == magnitude {
                var n = UInt64(r)
                while n % 10 == 0 { n /= 10 }
                var count = 0
                while n > 0 { count += 1; n /= 10 }
                return count
            }
            scale *= 10
        }
        return nil
    }

    /// `significantDigits` counted from `d`'s shortest text (Swift's `description`).
    static func describedDigits(_ d: Double) -> Int {
        var count = 0
        var trailingZeros = 0
        var started = false
        for ch in d.magnitude.description.utf8 {
            if ch == UInt8(ascii: "e") || ch == UInt8(ascii: "E") { break }
            guard ch >= 0x30 && ch <= 0x39 else { continue }
            if ch == 0x30 {
                if started { count += 1; trailingZeros += 1 }
            } else {
                started = true
                count += 1
                trailingZeros = 0
            }
        }
        return min(max(count - trailingZeros, 1), 17)
    }
}
