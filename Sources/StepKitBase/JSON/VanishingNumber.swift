/// Numbers whose text is not zero but which read as 0: `1e-400`, `0.000…0001` with 400 zeros.
///
/// A `Double` reaches down to about 4.9e-324; a smaller number rounds to 0, and jansson's
/// `strtod` reads it so without a word (it refuses only numbers too large, as "real number
/// overflow"). An answer of `1e-400` was accepted as 0 (issue 26): a host that sent a value the
/// engine cannot hold must hear so, as it does for `1e400`. `InputLimits.checkText`, the pass
/// over every text before jansson parses it, calls `check` at each number's `.`, `e` or `E`;
/// `PlainJSON` leaves such a number to that path.
enum VanishingNumber {
    /// Below this decimal exponent of its first digit a number may round to 0 (the smallest
    /// `Double` is about 4.9e-324); at or above it, it cannot.
    static let mayVanishBelow = -320
    /// Below this, it surely does (it is less than 10^-330).
    static let vanishesBelow = -330

    /// Refuses the number around `at` (an index inside it) in `bytes` when its digits are not all
    /// zero but its value reads as 0; returns where the number ends, so the caller checks each
    /// run of number characters once (`1.1.1.1…`, not JSON, would otherwise be scanned again at
    /// every dot: quadratic). The run is read no further than `limit` (and the byte there, the
    /// text's end or more of it): a run going on past it is left to the caller, whose size limit
    /// refuses the text there, so a 100 MB run of digits is not read whole first.
    @discardableResult
    static func check(_ bytes: UnsafePointer<UInt8>, at: Int, limit: Int) throws(StepKitError) -> Int {
        var start = at
        while start > 0, isNumberByte(bytes[start - 1]) { start -= 1 }
        var end = at
        while end < limit, isNumberByte(bytes[end]) { end += 1 }
        // Every byte before `end` is a number's, none the NUL, so the byte at `end` is readable.
        if end == limit, isNumberByte(bytes[end]) { return end }
        guard vanishes(bytes, from: start, to: end) else { return end }
        let shown = String(decoding: UnsafeBufferPointer(start: bytes + start, count: min(end - start, 40)), as: UTF8.self)
        throw StepKitError(.parse, code: "invalidJSON",
                           message: "Invalid JSON: the number \(shown)\(end - start > 40 ? "…" : "") is too close to 0 to be read: it is not 0, but would read as 0.")
    }

    /// Whether the number text in `from..<to` has a non-zero digit and yet reads as 0. A text
    /// that is not a number's is the parser's to refuse: false.
    static func vanishes(_ bytes: UnsafePointer<UInt8>, from: Int, to end: Int) -> Bool {
        var i = from
        if i < end, bytes[i] == UInt8(ascii: "-") { i += 1 }
        // The decimal exponent of the first non-zero digit, before the exponent part.
        var lead: Int?
        var wholeDigits = 0
        while i < end, isDigit(bytes[i]) {
            if lead == nil, bytes[i] != UInt8(ascii: "0") { lead = 0 }
            if lead != nil { wholeDigits += 1 }
            i += 1
        }
        if lead != nil { lead = wholeDigits - 1 }
        if i < end, bytes[i] == UInt8(ascii: ".") {
            i += 1
            var place = -1
            while i < end, isDigit(bytes[i]) {
                if lead == nil, bytes[i] != UInt8(ascii: "0") { lead = place }
                place -= 1
                i += 1
            }
        }
        guard let first = lead else { return false }
        var exponent = 0
        if i < end, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            let negative = i < end && bytes[i] == UInt8(ascii: "-")
            if i < end, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
            // Saturates: an exponent of a million digits is as good as a million.
            while i < end, isDigit(bytes[i]) {
                exponent = min(exponent * 10 + Int(bytes[i] - UInt8(ascii: "0")), 1_000_000)
                i += 1
            }
            if negative { exponent = -exponent }
        }
        let magnitude = first + exponent
        if magnitude >= mayVanishBelow { return false }
        if magnitude < vanishesBelow { return true }
        // In between, as `strtod` reads it (Swift's `Double(String)` rounds the same way).
        let text = String(decoding: UnsafeBufferPointer(start: bytes + from, count: end - from), as: UTF8.self)
        return Double(text) == 0
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private static func isNumberByte(_ c: UInt8) -> Bool {
        isDigit(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
            || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
    }
}
