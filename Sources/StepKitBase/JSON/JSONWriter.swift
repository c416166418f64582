import Glibc
import CJansson

/// `JSON` to text, compact, written directly (no intermediate jansson tree: every call's output
/// and every state read goes through here, and building then dumping a tree cost more than the
/// rest of a state read together).
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
        let bytes = encode(value)
        guard let raw = malloc(bytes.count + 1) else { return nil }
        let text = raw.assumingMemoryBound(to: CChar.self)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { memcpy(text, base, source.count) }
        }
        text[bytes.count] = 0
        return text
    }

    /// The document as a Swift string.
    package static func string(_ value: JSON) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    /// The document's UTF-8 bytes. Recursive: documents are bounded in depth (input limits, and
    /// the engine's own output is shallow).
    ///
    /// One pass: reals, whose precision depends on every real in the document, are left out and
    /// noted where they go, then written in once the pass knows the precision (most documents
    /// have none, and a separate walk to find it first cost a sixth of writing a result).
    static func encode(_ value: JSON) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        var reals = Reals()
        write(value, to: &out, reals: &reals)
        guard !reals.places.isEmpty else { return out }
        var spliced: [UInt8] = []
        spliced.reserveCapacity(out.count + reals.places.count * 24)
        var copied = 0
        out.withUnsafeBufferPointer { written in
            for (offset, real) in reals.places {
                spliced.append(contentsOf: UnsafeBufferPointer(rebasing: written[copied..<offset]))
                writeReal(real, precision: reals.digits, to: &spliced)
                copied = offset
            }
            spliced.append(contentsOf: UnsafeBufferPointer(rebasing: written[copied...]))
        }
        return spliced
    }

    /// The finite reals met while writing, with the byte offset each goes to, and the
    /// significant digits the most demanding of them needs.
    private struct Reals {
        var places: [(offset: Int, value: Double)] = []
        var digits = 1
    }

    private static func write(_ value: JSON, to out: inout [UInt8], reals: inout Reals) {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i):
            out.append(contentsOf: String(i).utf8)
        case .double(let d):
            guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
            reals.places.append((out.count, d))
            reals.digits = max(reals.digits, significantDigits(d))
        case .string(let s):
            writeString(s, to: &out)
        // Members are read in place, through buffer pointers, not copied out one by one: a
        // state holds the task's own values (the step's presentation), shared by every session,
        // and each copy's retain and release would land on memory all threads write to.
        case .array(let items):
            out.append(UInt8(ascii: "["))
            items.withUnsafeBufferPointer { buffer in
                for i in buffer.indices {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    write(buffer[i], to: &out, reals: &reals)
                }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            object.withUnsafeEntries { keys, values in
                for i in keys.indices {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    writeString(keys[i], to: &out)
                    out.append(UInt8(ascii: ":"))
                    write(values[i], to: &out, reals: &reals)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Per byte: 0 when it is written as it is, else the letter of its short escape (`b f n r t
    /// " \\`) or `u` for `\\u00XX`. One lookup a byte, so the common case costs one test (and one
    /// comparison a fuzzer's instrumentation traces, not one per case of a switch).
    private static let escapes: [UInt8] = (0..<256).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x22: return UInt8(ascii: "\"")
        case 0x5C: return UInt8(ascii: "\\")
        case 0x08: return UInt8(ascii: "b")
        case 0x0C: return UInt8(ascii: "f")
        case 0x0A: return UInt8(ascii: "n")
        case 0x0D: return UInt8(ascii: "r")
        case 0x09: return UInt8(ascii: "t")
        case 0..<0x20: return UInt8(ascii: "u")
        default: return 0
        }
    }

    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // A native string's bytes are read where they are; any other is made contiguous first.
        if s.utf8.withContiguousStorageIfAvailable({ writeEscaped($0, to: &out) }) == nil {
            var copy = s
            copy.withUTF8 { writeEscaped($0, to: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `bytes` with `"`, `\\` and control characters escaped.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for i in bytes.indices {
            let escape = escapes[Int(bytes[i])]
            if escape == 0 { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            runStart = i + 1
            out.append(UInt8(ascii: "\\"))
            out.append(escape)
            if escape == UInt8(ascii: "u") {
                out.append(contentsOf: "00".utf8)
                out.append(hex[Int(bytes[i] >> 4)])
                out.append(hex[Int(bytes[i] & 0x0F)])
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
    }

    /// `%.{precision}g`, then as jansson does: a `.0` when there is neither a point nor an
    /// exponent (so the value reads back as a real), and no `+` or leading zeros in the exponent.
    /// Formatted on the stack and tidied as it is copied out (no array is made per real).
    private static func writeReal(_ d: Double, precision: Int, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            guard let base = buffer.baseAddress else { out.append(contentsOf: "null".utf8); return }
            let n = Int(sk_format_real(base, buffer.count, Int32(clamping: precision), d))
            guard n > 0 && n < buffer.count else { out.append(contentsOf: "null".utf8); return }
            let text = UnsafeRawBufferPointer(start: base, count: n)
            var i = 0
            var pointOrExponent = false
            while i < text.count {
                let byte = text[i]
                i += 1
                switch byte {
                case UInt8(ascii: ","), UInt8(ascii: "."):
                    // A locale's decimal comma is written as a point, as jansson does.
                    out.append(UInt8(ascii: "."))
                    pointOrExponent = true
                case UInt8(ascii: "e"):
                    out.append(byte)
                    pointOrExponent = true
                    // The exponent's sign: `-` is kept, anything else (printf's `+`) dropped;
                    // then its leading zeros.
                    if i < text.count {
                        if text[i] == UInt8(ascii: "-") { out.append(UInt8(ascii: "-")) }
                        i += 1
                    }
                    while i < text.count && text[i] == UInt8(ascii: "0") { i += 1 }
                default:
                    out.append(byte)
                }
            }
            if !pointOrExponent { out.append(contentsOf: ".0".utf8) }
        }
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
