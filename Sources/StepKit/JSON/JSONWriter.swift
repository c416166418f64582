import Glibc

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
enum JSONWriter {
    /// The document as a `malloc`'d C string, for handing to a C caller (freed with `free`).
    static func mallocString(_ value: JSON) -> UnsafeMutablePointer<CChar>? {
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
    static func string(_ value: JSON) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    /// The document's UTF-8 bytes. Recursive: documents are bounded in depth (input limits, and
    /// the engine's own output is shallow).
    static func encode(_ value: JSON) -> [UInt8] {
        var digits = 1
        realDigits(value, &digits)
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, digits: digits, to: &out)
        return out
    }

    private static func realDigits(_ value: JSON, _ digits: inout Int) {
        switch value {
        case .double(let d) where d.isFinite:
            digits = max(digits, significantDigits(d))
        case .array(let items):
            for item in items { realDigits(item, &digits) }
        case .object(let object):
            object.forEachEntry { _, item in realDigits(item, &digits) }
        default:
            break
        }
    }

    private static func write(_ value: JSON, digits: Int, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i):
            out.append(contentsOf: String(i).utf8)
        case .double(let d):
            guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
            writeReal(d, precision: digits, to: &out)
        case .string(let s):
            writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, digits: digits, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            var first = true
            object.forEachEntry { key, item in
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(item, digits: digits, to: &out)
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
        var s = s
        s.withUTF8 { bytes in
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
        out.append(UInt8(ascii: "\""))
    }

    /// `%.{precision}g`, then as jansson does: a `.0` when there is neither a point nor an
    /// exponent (so the value reads back as a real), and no `+` or leading zeros in the exponent.
    private static func writeReal(_ d: Double, precision: Int, to out: inout [UInt8]) {
        var buffer = [CChar](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            withVaList([Int32(precision), d]) { vsnprintf(b.baseAddress, b.count, "%.*g", $0) }
        }
        guard n > 0 && n < 64 else { out.append(contentsOf: "null".utf8); return }
        // A locale's decimal comma is written as a point, as jansson does.
        var text = buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) == UInt8(ascii: ",") ? UInt8(ascii: ".") : UInt8(bitPattern: $0) }
        if !text.contains(UInt8(ascii: ".")) && !text.contains(UInt8(ascii: "e")) {
            text.append(contentsOf: ".0".utf8)
        }
        if let e = text.firstIndex(of: UInt8(ascii: "e")) {
            var start = e + 1
            var end = start + 1
            if start < text.count && text[start] == UInt8(ascii: "-") { start += 1 }
            while end < text.count && text[end] == UInt8(ascii: "0") { end += 1 }
            if end != start && start < text.count && end <= text.count {
                text.removeSubrange(start..<end)
            }
        }
        out.append(contentsOf: text)
    }

    /// How many significant digits the shortest exact decimal form of `d` has (1...17).
    static func significantDigits(_ d: Double) -> Int {
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
