/// JSON read straight into `JSON` values, without jansson, for the texts it can take; nil for
/// the rest, which jansson then parses (and refuses, with its own messages).
///
/// jansson builds a tree of its own, which the engine then converted into `JSON` and freed:
/// for a short answer that cost more than the rest of a step's work together, and for a task
/// or restoration data about as much again as jansson's parse (`benchmarks/README.md`). This
/// reader takes what hosts and the engine itself write: objects (keys all different; a
/// repeated one is left to jansson, which refuses it) and arrays nested at most `maxDepth`
/// deep, `true`, `false`, `null`, numbers (an integer of at most 18 digits; a decimal or
/// exponent form of at most 32 characters, read as Swift reads a `Double` — correctly rounded,
/// as jansson's `strtod` is, and in no locale), and strings of valid UTF-8 with JSON's escapes.
/// It leaves to jansson: `-0` and longer integers, numbers that overflow or would read as 0,
/// `\u0000` and unpaired surrogates, control characters, invalid UTF-8, anything malformed. What it accepts, jansson
/// accepts with the same value (`PlainJSONTests` compare the two on every short text over the
/// characters that matter, on random decimals, and on every document the test suites hold), so
/// which reader ran is never visible.
package enum PlainJSON {
    /// Deeper texts are left to jansson; this bounds the reader's own recursion (a few hundred
    /// bytes of stack a level).
    static let maxDepth = 64

    /// The value of `text`, or nil when this reader leaves the text to jansson. Within
    /// `limits`, a text that passes one of them is nil too (so `InputLimits.checkText` can say
    /// which), and the reader never reads more than `maxBytes` of it (a few bytes past, at most,
    /// to finish a word); the caller checks a text it leaves against the limits before jansson
    /// parses it (`JSONParser.parse(cString:within:argument:)`).
    package static func parse(_ text: TextBytes, within limits: InputLimits? = nil) -> JSON? {
        parse(text.cString, within: limits)
    }

    static func parse(_ text: UnsafePointer<CChar>, within limits: InputLimits? = nil) -> JSON? {
        // The stacks start in room on the call's stack, enough for a usual answer's members:
        // a short answer allocates nothing but its own containers.
        withUnsafeTemporaryAllocation(of: JSONObject.Entry.self, capacity: Reader.scratchCount) { entries in
            withUnsafeTemporaryAllocation(of: JSON.self, capacity: Reader.scratchCount) { values in
                withUnsafeTemporaryAllocation(of: ShortString.self, capacity: ShortString.slots) { shortStrings in
                    text.withMemoryRebound(to: UInt8.self, capacity: 1) { bytes in
                        var reader = Reader(bytes: bytes, limits: limits, entryScratch: entries, valueScratch: values,
                                            shortStrings: shortStrings)
                        defer { reader.releaseStacks() }
                        reader.skipSpace()
                        guard let value = reader.value(depth: 0) else { return nil }
                        reader.skipSpace()
                        // The text's own end, read at the cursor itself: `peek` reads an end at
                        // `maxBytes` too, where a longer text goes on.
                        return reader.atEnd ? value : nil
                    }
                }
            }
        }
    }

    /// A cursor over a NUL-terminated text; never reads past the NUL.
    ///
    /// A container's members gather on two stacks shared by the whole text (an object's
    /// entries, an array's items) and become the container's one array once it closes, at its
    /// exact size: a compiled task keeps much of its definition (each step's presentation), so
    /// room reserved or grown past the size would be kept with it, and nothing is grown member
    /// by member either. The members are moved off
    /// the stacks (`MoveStack`), not copied and then removed.
    private struct Reader {
        let bytes: UnsafePointer<UInt8>
        var position = 0
        private var entryStack: MoveStack<JSONObject.Entry>
        private var valueStack: MoveStack<JSON>
        /// Members the stacks hold before they move to the heap.
        static let scratchCount = 16

        /// The limits: no byte at or past `maxBytes` is looked at (`peek` reads an end there).
        let maxBytes: Int
        let maxDepth: Int
        let maxStringBytes: Int
        private var shortStrings: ShortStrings

        init(bytes: UnsafePointer<UInt8>, limits: InputLimits?, entryScratch: UnsafeMutableBufferPointer<JSONObject.Entry>,
             valueScratch: UnsafeMutableBufferPointer<JSON>, shortStrings room: UnsafeMutableBufferPointer<ShortString>) {
            self.bytes = bytes
            shortStrings = ShortStrings(room: room)
            entryStack = MoveStack(scratch: entryScratch)
            valueStack = MoveStack(scratch: valueScratch)
            maxBytes = limits?.maxBytes ?? Int.max
            maxDepth = min(PlainJSON.maxDepth, limits?.maxDepth ?? PlainJSON.maxDepth)
            maxStringBytes = limits?.maxStringBytes ?? Int.max
        }

        /// Frees the stacks, with whatever a text given up on left on them.
        mutating func releaseStacks() {
            entryStack.release()
            valueStack.release()
            shortStrings.release()
        }

        var peek: UInt8 { position < maxBytes ? bytes[position] : 0 }

        /// The byte after the cursor's, as `peek` reads it.
        private var peekNext: UInt8 { position + 1 < maxBytes ? bytes[position + 1] : 0 }

        /// At the text's terminating NUL (within `maxBytes`, where the cursor always is).
        var atEnd: Bool { position <= maxBytes && bytes[position] == 0 }

        mutating func skipSpace() {
            while true {
                switch peek {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> JSON? {
            switch peek {
            case UInt8(ascii: "{"):
                guard depth < maxDepth else { return nil }
                position += 1
                return object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < maxDepth else { return nil }
                position += 1
                return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map { .string($0) }
            case UInt8(ascii: "t"): return word("true", .bool(true))
            case UInt8(ascii: "f"): return word("false", .bool(false))
            case UInt8(ascii: "n"): return word("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        /// The members after `{` up to and including `}`, or nil. A repeated key is nil:
        /// jansson refuses it (the engine parses with `JSON_REJECT_DUPLICATES`).
        private mutating func object(depth: Int) -> JSON? {
            skipSpace()
            if peek == UInt8(ascii: "}") {
                position += 1
                return .object(JSONObject())
            }
            let base = entryStack.count
            // Past `JSONObject.linearLimit` keys, repeats are found by hashing rather than by
            // comparing with each (the same trade as the object's own look-ups).
            var seen: Set<String> = []
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\""), let key = string() else { return nil }
                if entryStack.count - base < JSONObject.linearLimit {
                    if entryStack.containsKey(key, from: base) { return nil }
                } else {
                    if seen.isEmpty { entryStack.forEach(from: base) { seen.insert($0.key) } }
                    guard seen.insert(key).inserted else { return nil }
                }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { return nil }
                position += 1
                skipSpace()
                guard let member = value(depth: depth) else { return nil }
                entryStack.append(JSONObject.Entry(key: key, value: member))
                guard let closed = endOfMember(UInt8(ascii: "}")) else { return nil }
                if closed {
                    return .object(JSONObject(distinctEntries: entryStack.pop(from: base)))
                }
            }
        }

        /// After a member: true at the container's `closing` byte, false after a comma (both
        /// read), nil at anything else.
        private mutating func endOfMember(_ closing: UInt8) -> Bool? {
            skipSpace()
            switch peek {
            case UInt8(ascii: ","):
                position += 1
                return false
            case closing:
                position += 1
                return true
            default:
                return nil
            }
        }

        /// The items after `[` up to and including `]`, or nil.
        private mutating func array(depth: Int) -> JSON? {
            skipSpace()
            if peek == UInt8(ascii: "]") {
                position += 1
                return .array([])
            }
            let base = valueStack.count
            while true {
                skipSpace()
                guard let item = value(depth: depth) else { return nil }
                valueStack.append(item)
                guard let closed = endOfMember(UInt8(ascii: "]")) else { return nil }
                if closed {
                    return .array(valueStack.pop(from: base))
                }
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

        private mutating func digits() -> Int {
            let start = position
            while case UInt8(ascii: "0")...UInt8(ascii: "9") = peek { position += 1 }
            return position - start
        }

        /// A number: an integer of 1–18 digits (it cannot overflow), not `-0`; or, with a
        /// fraction or an exponent, a finite `Double` of at most 32 characters.
        private mutating func number() -> JSON? {
            let start = position
            let negative = peek == UInt8(ascii: "-")
            if negative { position += 1 }
            let first = position
            let whole = digits()
            guard whole > 0, !(bytes[first] == UInt8(ascii: "0") && whole > 1) else { return nil }
            var real = false
            var fractionStart = position, fraction = 0
            if peek == UInt8(ascii: ".") {
                position += 1
                fractionStart = position
                fraction = digits()
                guard fraction > 0 else { return nil }
                real = true
            }
            var exponent = 0, exponentFits = true
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                position += 1
                let exponentNegative = peek == UInt8(ascii: "-")
                if peek == UInt8(ascii: "+") || exponentNegative { position += 1 }
                let exponentStart = position
                let count = digits()
                guard count > 0 else { return nil }
                exponentFits = count <= 4
                if exponentFits { exponent = Reader.decimal(bytes, from: exponentStart, count: count) }
                if exponentNegative { exponent = -exponent }
                real = true
            }
            let length = position - start
            guard real else {
                guard whole <= 18 else { return nil }
                let magnitude = Int64(Reader.decimal(bytes, from: first, count: whole))
                guard !(negative && magnitude == 0) else { return nil }
                return .int(negative ? -magnitude : magnitude)
            }
            guard length <= 32 else { return nil }
            // Clinger's fast path: at most 15 digits and a power of ten up to 10^22 are exact as
            // `Double`s, and one IEEE multiplication or division rounds correctly, so the result
            // is the value `Double(text)` reads (correctly rounded), without making a string.
            let scale = exponent - fraction
            if exponentFits, whole + fraction <= 15, (-22...22).contains(scale) {
                let wholeValue = Reader.decimal(bytes, from: first, count: whole)
                let digitsValue = Double(Reader.decimal(bytes, from: fractionStart, count: fraction, after: wholeValue))
                let magnitude = scale < 0 ? digitsValue / Reader.power10(-scale) : digitsValue * Reader.power10(scale)
                return .double(negative ? -magnitude : magnitude)
            }
            let token = String(decoding: UnsafeBufferPointer(start: bytes + start, count: length), as: UTF8.self)
            guard let value = Double(token), value.isFinite else { return nil }
            // A number that reads as 0 though its digits are not all zero (`1e-400`) is left to
            // jansson's path, whose check refuses it (`VanishingNumber`).
            if value == 0, VanishingNumber.vanishes(bytes, from: start, to: position) { return nil }
            return .double(value)
        }

        /// The value of `count` decimal digits at `from` following the digits of `after` (the
        /// caller has checked they are digits, at most 18 in all).
        private static func decimal(_ bytes: UnsafePointer<UInt8>, from: Int, count: Int, after: Int = 0) -> Int {
            var value = after
            for i in from..<(from + count) { value = value &* 10 &+ Int(bytes[i] &- UInt8(ascii: "0")) }
            return value
        }

        /// 10^`n` for `n` in 0...22, exactly: every power of ten up to 10^22 is a `Double`, so
        /// no product on the way rounds.
        private static func power10(_ n: Int) -> Double {
            var value = 1.0
            for _ in 0..<n { value *= 10 }
            return value
        }

        /// The string at the cursor (at its `"`), or nil. Without escapes and in ASCII, its
        /// bytes are the text; otherwise they are decoded into a buffer and checked as UTF-8.
        mutating func string() -> String? {
            position += 1
            let start = position
            // Printable ASCII without escapes first, which is most strings: the loop below then
            // starts at the closing quote. `peek` reads 0 at `maxBytes`, which stops this scan,
            // so the cursor never passes it (and `&+=` cannot overflow).
            while true {
                let byte = peek
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "\"") else { break }
                position &+= 1
            }
            var plain = true
            while true {
                let byte = peek
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }  // a control character, or the text's end
                if byte == UInt8(ascii: "\\") || byte >= 0x80 { plain = false }
                position += byte == UInt8(ascii: "\\") && peekNext != 0 ? 2 : 1
            }
            let end = position
            position += 1
            let raw = UnsafeBufferPointer(start: bytes + start, count: end - start)
            if plain {
                guard raw.count <= maxStringBytes else { return nil }
                return raw.count <= ShortString.maxBytes && raw.count > 0 ? shortStrings.string(raw) : String(decoding: raw, as: UTF8.self)
            }
            guard let decoded = PlainJSON.unescape(raw), decoded.count <= maxStringBytes else { return nil }
            return decoded.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
        }
    }

    /// A printable ASCII string of at most 15 bytes, held by its bytes: `low` the first eight,
    /// `high` the rest with the length in its top byte, so two such strings are the same exactly
    /// when both words are (an empty slot is all zeros, which no string of one byte or more is).
    private struct ShortString {
        static let maxBytes = 15
        /// Strings read before the reader keeps short ones: a short text (an answer) never pays
        /// for the table.
        static let readBeforeKeeping = 16
        /// 32 slots of 32 bytes: 1 KiB, the most `withUnsafeTemporaryAllocation` always keeps
        /// on the stack (past it the room came from the heap, a block large enough to make the
        /// allocator consolidate its free lists on every parse).
        static let slots = 32
        var low: UInt64 = 0
        var high: UInt64 = 0
        var string = ""
    }

    /// Short strings a `Reader` keeps once read, so a text that repeats them (a definition's
    /// keys above all: `"type"`, `"identifier"`, `"answerFormat"`, and its `"question"`s) makes
    /// each one String once; the copies share it (a short string is stored in the value itself,
    /// so a copy is two words). Making a short string was a third of reading a definition's
    /// strings (`benchmarks/README.md`, wave 6). The table is room on the parse's stack, set up
    /// once a text has read `ShortString.readBeforeKeeping` strings: a short text (an answer)
    /// never pays for it.
    private struct ShortStrings {
        private let slots: UnsafeMutablePointer<ShortString>?
        private var initialized = false
        private var read = 0

        init(room: UnsafeMutableBufferPointer<ShortString>) {
            slots = room.count >= ShortString.slots ? room.baseAddress : nil
        }

        /// `raw` (printable ASCII, 1–15 bytes) as a String, the one kept for the same bytes when
        /// there is one.
        mutating func string(_ raw: UnsafeBufferPointer<UInt8>) -> String {
            read &+= 1
            guard read > ShortString.readBeforeKeeping, let table = slots, let base = raw.baseAddress else {
                return String(decoding: raw, as: UTF8.self)
            }
            // Both words from two loads each (overlapping when the string is shorter than
            // their width): with the length they fix every byte, so equal words are equal
            // strings.
            let count = raw.count
            let bytes = UnsafeRawPointer(base)
            var low: UInt64, high = UInt64(truncatingIfNeeded: count) &<< 56
            if count >= 8 {
                low = bytes.loadUnaligned(as: UInt64.self)
                high |= bytes.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self) &>> 8
            } else if count >= 4 {
                low = UInt64(bytes.loadUnaligned(as: UInt32.self))
                    | UInt64(bytes.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)) &<< 32
            } else {
                low = UInt64(raw[0]) | UInt64(raw[count &- 1]) &<< 8 | UInt64(raw[count &>> 1]) &<< 16
            }
            if !initialized {
                table.initialize(repeating: ShortString(), count: ShortString.slots)
                initialized = true
            }
            let slot = table + Int(truncatingIfNeeded: ((low &+ high &* 31) &* 0x9E37_79B9_7F4A_7C15) &>> 59)
            if slot.pointee.low == low && slot.pointee.high == high { return slot.pointee.string }
            let made = String(decoding: raw, as: UTF8.self)
            slot.pointee = ShortString(low: low, high: high, string: made)
            return made
        }

        /// Deinitializes the table (the room is the caller's).
        mutating func release() {
            guard initialized, let slots else { return }
            slots.deinitialize(count: ShortString.slots)
            initialized = false
        }
    }

    /// A stack whose top members leave it as an array by being moved, not copied: `Array(stack[base...])`
    /// then `removeLast` retained every member into the new array and released it again on the
    /// stack, and copied the outermost container's members (a tenth of compiling a task:
    /// `benchmarks/README.md`, issue 36). It starts in the caller's `scratch` room and moves to
    /// the heap when that is full. The reader frees it (`release()`), whatever is left on it.
    private struct MoveStack<Element> {
        private var storage: UnsafeMutablePointer<Element>?
        private var capacity: Int
        private var ownsStorage = false
        private(set) var count = 0

        init(scratch: UnsafeMutableBufferPointer<Element>) {
            storage = scratch.baseAddress
            capacity = storage == nil ? 0 : scratch.count
        }

        mutating func append(_ element: Element) {
            if count == capacity { grow(to: max(16, capacity * 2)) }
            (storage.unsafelyUnwrapped + count).initialize(to: element)
            count += 1
        }

        private mutating func grow(to newCapacity: Int) {
            let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
            if let storage {
                grown.moveInitialize(from: storage, count: count)
                if ownsStorage { storage.deallocate() }
            }
            storage = grown
            capacity = newCapacity
            ownsStorage = true
        }

        /// The members from `start` on (at least one), moved into an array of exactly their
        /// number; the stack is cut back to `start`.
        mutating func pop(from start: Int) -> [Element] {
            guard count > start, let storage else { return [] }
            // Appended one by one into room of their number: `Array(unsafeUninitializedCapacity:)`
            // looked up the array's generic metadata on every call (more than the moves cost).
            var moved: [Element] = []
            moved.reserveCapacity(count - start)
            for i in start..<count { moved.append((storage + i).move()) }
            count = start
            return moved
        }

        /// `contains(_:from:)` for keys, comparing lengths first: an object's keys mostly
        /// differ in length, and a length is read without comparing text (issue 36).
        func containsKey(_ key: String, from start: Int) -> Bool where Element == JSONObject.Entry {
            guard let storage else { return false }
            let length = key.utf8.count
            for i in start..<count where storage[i].key.utf8.count == length && storage[i].key == key { return true }
            return false
        }

        func forEach(from start: Int, _ body: (Element) -> Void) {
            guard let storage else { return }
            for i in start..<count { body(storage[i]) }
        }

        /// Deinitializes what is left and frees the room.
        mutating func release() {
            guard let storage else { return }
            storage.deinitialize(count: count)
            if ownsStorage { storage.deallocate() }
            self.storage = nil
            capacity = 0
            count = 0
        }
    }

    /// A string's bytes with its escapes decoded; nil for an escape jansson refuses or this
    /// reader leaves to it (`\u0000`, an unpaired surrogate, an unknown escape).
    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            guard i + 1 < raw.count else { return nil }
            let escaped = raw[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(raw, at: i) else { return nil }
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 6 <= raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u"),
                          let low = hex4(raw, at: i + 2), (0xDC00...0xDFFF).contains(low) else { return nil }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) || scalar == 0 {
                    return nil
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                UTF8.encode(unicode) { out.append($0) }
            default:
                return nil
            }
        }
        return out
    }

    /// Four hexadecimal digits at `i`, or nil.
    private static func hex4(_ raw: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32? {
        guard i + 4 <= raw.count else { return nil }
        var value: UInt32 = 0
        for k in i..<(i + 4) {
            let c = raw[k]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
