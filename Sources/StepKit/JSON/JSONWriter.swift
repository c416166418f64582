import CJansson
import Glibc

/// `JSON` to text, through jansson.
///
/// Reals are written with as many significant digits as the most demanding real in the document
/// needs to read back exactly (Swift's shortest round-trip form tells how many), so `0.1` is
/// written `0.1`, not `0.10000000000000001`, and every value survives a save and a restore.
enum JSONWriter {
    /// The document as a `malloc`'d C string, for handing to a C caller (freed with `free`).
    static func mallocString(_ value: JSON) -> UnsafeMutablePointer<CChar>? {
        var digits = 1
        guard let root = build(value, digits: &digits) else { return nil }
        defer { sk_json_decref(root) }
        let flags = sk_json_flag_compact() | sk_json_flag_encode_any() | sk_json_real_precision(Int32(digits))
        return json_dumps(root, flags)
    }

    /// The document as a Swift string.
    static func string(_ value: JSON) -> String {
        guard let text = mallocString(value) else { return "null" }
        defer { free(text) }
        return String(cString: text)
    }

    private static func build(_ value: JSON, digits: inout Int) -> UnsafeMutablePointer<json_t>? {
        switch value {
        case .null:
            return json_null()
        case .bool(let b):
            return b ? json_true() : json_false()
        case .int(let i):
            return json_integer(json_int_t(i))
        case .double(let d):
            guard d.isFinite else { return json_null() }
            digits = max(digits, significantDigits(d))
            return json_real(d)
        case .string(let s):
            var s = s
            return s.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    json_stringn_nocheck(chars.baseAddress, chars.count)
                }
            }
        case .array(let items):
            guard let array = json_array() else { return nil }
            for item in items {
                guard let child = build(item, digits: &digits) else { sk_json_decref(array); return nil }
                json_array_append_new(array, child)
            }
            return array
        case .object(let object):
            guard let result = json_object() else { return nil }
            for (key, item) in object.entries {
                guard let child = build(item, digits: &digits) else { sk_json_decref(result); return nil }
                var key = key
                let ok = key.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        json_object_setn_new_nocheck(result, chars.baseAddress, chars.count, child)
                    }
                }
                if ok != 0 { sk_json_decref(result); return nil }
            }
            return result
        }
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
