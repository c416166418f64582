/// The texts a host sends most often — an answer that is a number, a choice's value, a date,
/// yes or no, a list of choices, or a form's answers — read without jansson.
///
/// jansson's parse of a short answer costs more than the rest of a step's work together
/// (it allocates a tree, which is then converted and freed; see `benchmarks/README.md`). This
/// reader takes only the plainest texts: one scalar (`true`, `false`, `null`, a number without
/// an exponent and of at most 18 digits before the point, a string of printable ASCII without
/// escapes), a flat array of them, or an
/// object whose keys are such strings, all different, and whose values are scalars or flat
/// arrays; with JSON whitespace around the tokens. On anything else it returns nil and jansson parses the
/// text, so every refusal and every error message stays jansson's. What it accepts, jansson
/// accepts with the same value (`JSONTests.plainReaderAgreesWithJansson` compares the two on
/// every short text over the characters that matter), so which reader ran is never visible.
enum PlainJSON {
    /// The value of `text`, or nil when the text is not one of the plain shapes above.
    static func parse(_ text: UnsafePointer<CChar>) -> JSON? {
        text.withMemoryRebound(to: UInt8.self, capacity: 1) { bytes in
            var reader = Reader(bytes: bytes)
            reader.skipSpace()
            let value: JSON?
            if reader.peek == UInt8(ascii: "{") {
                reader.position += 1
                value = reader.object()
            } else {
                value = reader.member()
            }
            reader.skipSpace()
            guard let value, reader.peek == 0 else { return nil }
            return value
        }
    }

    /// A cursor over a NUL-terminated text; never reads past the NUL.
    private struct Reader {
        let bytes: UnsafePointer<UInt8>
        var position = 0

        var peek: UInt8 { bytes[position] }

        mutating func skipSpace() {
            while true {
                switch peek {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        /// The members after `{` up to and including `}`, or nil. A repeated key is nil:
        /// jansson refuses it (the engine parses with `JSON_REJECT_DUPLICATES`).
        mutating func object() -> JSON? {
            // Room for a usual form's answers at once, not grown one key at a time.
            var object = JSONObject(reservingCapacity: 8)
            skipSpace()
            if peek == UInt8(ascii: "}") {
                position += 1
                return .object(object)
            }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\""), case .string(let key)? = string(), object.position(of: key) == nil else { return nil }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { return nil }
                position += 1
                skipSpace()
                guard let value = member() else { return nil }
                object.appendNew(key, value)
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "}"):
                    position += 1
                    return .object(object)
                default: return nil
                }
            }
        }

        /// A scalar or a flat array.
        mutating func member() -> JSON? {
            guard peek == UInt8(ascii: "[") else { return scalar() }
            position += 1
            return array()
        }

        /// The items after `[` up to and including `]`, or nil.
        mutating func array() -> JSON? {
            var items: [JSON] = []
            skipSpace()
            if peek == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                skipSpace()
                guard let item = scalar() else { return nil }
                items.append(item)
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): position += 1
                case UInt8(ascii: "]"):
                    position += 1
                    return .array(items)
                default: return nil
                }
            }
        }

        mutating func scalar() -> JSON? {
            switch peek {
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return word("true", .bool(true))
            case UInt8(ascii: "f"): return word("false", .bool(false))
            case UInt8(ascii: "n"): return word("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        /// `literal` spelt out at the cursor (the NUL ends a mismatch before the text does).
        private mutating func word(_ literal: StaticString, _ value: JSON) -> JSON? {
            let count = literal.utf8CodeUnitCount
            let matches = literal.withUTF8Buffer { expected in
                var i = 0
                while i < count {
                    if bytes[position + i] != expected[i] { return false }
                    i += 1
                }
                return true
            }
            guard matches else { return nil }
            position += count
            return value
        }

        /// A number without an exponent: an integer of 1–18 digits (so it cannot overflow), not
        /// `-0`, or a decimal of at most 32 characters (so it cannot overflow either), read as
        /// Swift reads a `Double` — correctly rounded, as jansson's `strtod` is, and in no
        /// locale. Leading zeros, exponents and longer numbers are left to jansson.
        private mutating func number() -> JSON? {
            let start = position
            let negative = peek == UInt8(ascii: "-")
            if negative { position += 1 }
            let first = position
            var magnitude: Int64 = 0
            while case UInt8(ascii: "0")...UInt8(ascii: "9") = peek, position - first < 18 {
                magnitude = magnitude * 10 + Int64(peek - UInt8(ascii: "0"))
                position += 1
            }
            let digits = position - first
            guard digits > 0, !(bytes[first] == UInt8(ascii: "0") && digits > 1) else { return nil }
            switch peek {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "e"), UInt8(ascii: "E"):
                return nil
            case UInt8(ascii: "."):
                position += 1
                let fraction = position
                while case UInt8(ascii: "0")...UInt8(ascii: "9") = peek, position - start < 32 { position += 1 }
                guard position > fraction else { return nil }
                switch peek {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
                let token = String(decoding: UnsafeBufferPointer(start: bytes + start, count: position - start), as: UTF8.self)
                guard let value = Double(token), value.isFinite else { return nil }
                return .double(value)
            default:
                guard !(negative && magnitude == 0) else { return nil }
                return .int(negative ? -magnitude : magnitude)
            }
        }

        /// A string of printable ASCII (0x20–0x7E) without `\`; anything else is left to jansson.
        mutating func string() -> JSON? {
            position += 1
            let start = position
            while true {
                let byte = peek
                if byte == UInt8(ascii: "\"") { break }
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                position += 1
            }
            let text = String(decoding: UnsafeBufferPointer(start: bytes + start, count: position - start), as: UTF8.self)
            position += 1
            return .string(text)
        }
    }
}
