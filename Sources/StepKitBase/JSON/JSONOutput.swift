import Glibc
import CJansson

/// A JSON document written straight into a `malloc`'d buffer: the result, the state and every
/// other output the engine writes as text (`JSONWriter` writes a `JSON` value through it too),
/// with no intermediate value tree and no copy at the end (the buffer is what the C caller
/// gets). A writer that knows its document's shape (`Session.writeResult`) writes keys as
/// literals, dates formatted in place and strings copied whole when they need no escaping.
///
/// The text is byte for byte what `JSONWriter` documents (jansson's `json_dumps` with
/// `JSON_COMPACT` and the shared real precision): reals are left out as they are met and noted
/// where they go, then written in by `finish`, once the most demanding real of the whole
/// document has set the precision.
///
/// Noncopyable: it owns its buffer, freed when it goes unless `finish` handed it out.
/// `public` with its small writes `@inlinable` (as `IndexTable`), so the engine's writers in
/// StepKitCore append a byte without a call.
public struct JSONOutput: ~Copyable {
    @usableFromInline var bytes: UnsafeMutablePointer<UInt8>
    @usableFromInline var count = 0
    @usableFromInline var capacity: Int
    /// The finite reals met so far, with the byte offset each goes to.
    @usableFromInline var realPlaces: [(offset: Int, value: Double)] = []
    /// The significant digits the most demanding real met so far needs.
    @usableFromInline var realDigits = 1

    /// An empty document with room for `capacity` bytes (it grows as needed).
    public init(capacity: Int = 1024) {
        let size = max(capacity, 16)
        guard let raw = malloc(size) else { fatalError("JSONOutput: out of memory") }
        bytes = raw.assumingMemoryBound(to: UInt8.self)
        self.capacity = size
    }

    deinit {
        if capacity > 0 { free(bytes) }
    }

    /// How many bytes are written so far.
    @inlinable public var byteCount: Int { count }

    /// Room for `n` more bytes.
    @inlinable @inline(__always) mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(n) }
    }

    @usableFromInline mutating func grow(_ n: Int) {
        let size = max(capacity * 2, count + n + 16)
        guard let raw = realloc(bytes, size) else { fatalError("JSONOutput: out of memory") }
        bytes = raw.assumingMemoryBound(to: UInt8.self)
        capacity = size
    }

    /// One byte (`{`, `,`, ...).
    @inlinable public mutating func byte(_ b: UInt8) {
        reserve(1)
        bytes[count] = b
        count += 1
    }

    /// Text written as it is: a literal of the writer's own (`"identifier":`), never a value.
    @inlinable public mutating func raw(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        (bytes + count).update(from: text.utf8Start, count: n)
        count += n
    }

    /// Bytes written as they are.
    public mutating func raw(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        (bytes + count).update(from: base, count: source.count)
        count += source.count
    }

    /// The `n` bytes already written at `offset`, written again (a date written once and
    /// repeated: `Session.writeResult`). They must hold no real (reals are written in later).
    public mutating func repeatBytes(at offset: Int, count n: Int) {
        reserve(n)
        (bytes + count).update(from: bytes + offset, count: n)
        count += n
    }

    // MARK: Values

    public mutating func null() { raw("null") }

    public mutating func bool(_ b: Bool) {
        if b { raw("true") } else { raw("false") }
    }

    /// An integer in decimal, written in place (no `String` made).
    public mutating func int(_ i: Int64) {
        reserve(20)
        var magnitude = i.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch: Int64 has at most 19 digits
        let written = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var end = scratch.count
            repeat {
                end -= 1
                scratch[end] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if i < 0 { bytes[count] = UInt8(ascii: "-"); count += 1 }
            let n = scratch.count - end
            (bytes + count).update(from: scratch.baseAddress!.assumingMemoryBound(to: UInt8.self) + end, count: n)
            return n
        }
        count += written
    }

    /// A number as `JSON.number` makes it: an integer when it is one (below 9×10¹⁵), else a real.
    public mutating func number(_ d: Double) {
        if d == d.rounded(), abs(d) < 9.0e15 { int(Int64(d)) } else { real(d) }
    }

    /// A real: `null` when it is not finite; otherwise noted and written in by `finish`.
    public mutating func real(_ d: Double) {
        guard d.isFinite else { null(); return }
        realPlaces.append((count, d))
        realDigits = max(realDigits, JSONWriter.significantDigits(d))
    }

    /// A date as the engine writes every date (`CivilTime.iso8601`), quoted, formatted in place.
    public mutating func date(milliseconds ms: Int64) {
        reserve(26)
        bytes[count] = UInt8(ascii: "\"")
        CivilTime.writeISO8601(milliseconds: ms, to: bytes + count + 1)
        bytes[count + 25] = UInt8(ascii: "\"")
        count += 26
    }

    /// A string, quoted, with `"`, `\\` and control characters escaped.
    public mutating func string(_ s: String) {
        byte(UInt8(ascii: "\""))
        // A native string's bytes are read where they are; any other is made contiguous first.
        if s.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            var copy = s
            copy.withUTF8 { escaped($0) }
        }
        byte(UInt8(ascii: "\""))
    }

    /// A string or `null`.
    public mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }

    /// Any value, members read in place (not copied out one by one: a state holds the task's
    /// own values, shared by every session, and each copy's retain and release would land on
    /// memory all threads write to). Recursive: documents are bounded in depth (input limits,
    /// and the engine's own output is shallow).
    public mutating func value(_ value: JSON) {
        switch value {
        case .null:
            null()
        case .bool(let b):
            bool(b)
        case .int(let i):
            int(i)
        case .double(let d):
            real(d)
        case .string(let s):
            string(s)
        case .array(let items):
            byte(UInt8(ascii: "["))
            items.withUnsafeBufferPointer { buffer in
                for i in buffer.indices {
                    if i > 0 { byte(UInt8(ascii: ",")) }
                    self.value(buffer[i])
                }
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            object.withUnsafeEntries { entries in
                for i in entries.indices {
                    if i > 0 { byte(UInt8(ascii: ",")) }
                    string(entries[i].key)
                    byte(UInt8(ascii: ":"))
                    self.value(entries[i].value)
                }
            }
            byte(UInt8(ascii: "}"))
        }
    }

    /// A value or `null`.
    public mutating func value(_ v: JSON?) {
        if let v { value(v) } else { null() }
    }

    // MARK: Strings

    /// Whether any of the eight bytes of `word` is `"`, `\\` or below 0x20 (exact: the classic
    /// "has a zero byte" / "has a byte less than" tests, which flag no byte ≥ 0x80, so UTF-8
    /// passes).
    @inline(__always) static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & high != 0
    }

    /// `bytes` with `"`, `\\` and control characters escaped. Most strings (identifiers, types,
    /// texts) need none: they are checked eight bytes at a time and copied whole.
    mutating func escaped(_ source: UnsafeBufferPointer<UInt8>) {
        guard let base = source.baseAddress else { return }
        let n = source.count
        var i = 0
        let words = UnsafeRawPointer(base)
        while i + 8 <= n, !JSONOutput.needsEscape(words.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
        while i < n && JSONOutput.escapes[Int(base[i])] == 0 { i += 1 }
        if i == n {
            reserve(n)
            (bytes + count).update(from: base, count: n)
            count += n
            return
        }
        // Something to escape at `i`: the bytes before it whole, then byte by byte.
        var runStart = 0
        while i < n {
            let escape = JSONOutput.escapes[Int(base[i])]
            if escape == 0 { i += 1; continue }
            raw(UnsafeBufferPointer(rebasing: source[runStart..<i]))
            runStart = i + 1
            reserve(6)
            bytes[count] = UInt8(ascii: "\\")
            bytes[count + 1] = escape
            count += 2
            if escape == UInt8(ascii: "u") {
                bytes[count] = UInt8(ascii: "0")
                bytes[count + 1] = UInt8(ascii: "0")
                bytes[count + 2] = JSONOutput.hex[Int(base[i] >> 4)]
                bytes[count + 3] = JSONOutput.hex[Int(base[i] & 0x0F)]
                count += 4
            }
            i += 1
        }
        raw(UnsafeBufferPointer(rebasing: source[runStart..<n]))
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Per byte: 0 when it is written as it is, else the letter of its short escape (`b f n r t
    /// " \\`) or `u` for `\\u00XX`.
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

    // MARK: The end

    /// The document as a `malloc`'d, NUL-terminated C string (freed with `free`), the reals
    /// written in; the output is empty afterwards.
    public mutating func finish() -> UnsafeMutablePointer<CChar> {
        if !realPlaces.isEmpty { spliceReals() }
        reserve(1)
        bytes[count] = 0
        let text = UnsafeMutableRawPointer(bytes).assumingMemoryBound(to: CChar.self)
        capacity = 0
        count = 0
        return text
    }

    /// The document's bytes, the reals written in.
    public mutating func finishBytes() -> [UInt8] {
        if !realPlaces.isEmpty { spliceReals() }
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }

    /// The document as a Swift string, the reals written in.
    public mutating func finishString() -> String {
        if !realPlaces.isEmpty { spliceReals() }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Writes the noted reals in at their places, at the document's precision: into a new buffer
    /// (a real's text is up to 26 bytes).
    mutating func spliceReals() {
        let size = count + realPlaces.count * 32 + 1
        guard let raw = malloc(size) else { fatalError("JSONOutput: out of memory") }
        let spliced = raw.assumingMemoryBound(to: UInt8.self)
        var at = 0
        var copied = 0
        for (offset, real) in realPlaces {
            (spliced + at).update(from: bytes + copied, count: offset - copied)
            at += offset - copied
            at += JSONOutput.writeReal(real, precision: realDigits, to: spliced + at)
            copied = offset
        }
        (spliced + at).update(from: bytes + copied, count: count - copied)
        at += count - copied
        free(bytes)
        bytes = spliced
        count = at
        capacity = size
        realPlaces = []
    }

    /// `%.{precision}g`, then as jansson does: a `.0` when there is neither a point nor an
    /// exponent (so the value reads back as a real), and no `+` or leading zeros in the exponent.
    /// Formatted on the stack and tidied as it is copied to `out` (at most 32 bytes); returns how
    /// many bytes it wrote.
    static func writeReal(_ d: Double, precision: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Int in
            var o = 0
            func put(_ b: UInt8) { out[o] = b; o += 1 }
            guard let base = buffer.baseAddress else { for b in "null".utf8 { put(b) }; return o }
            let n = Int(sk_format_real(base, buffer.count, Int32(clamping: precision), d))
            guard n > 0 && n < 30 else { for b in "null".utf8 { put(b) }; return o }
            let text = UnsafeRawBufferPointer(start: base, count: n)
            var i = 0
            var pointOrExponent = false
            while i < text.count {
                let byte = text[i]
                i += 1
                switch byte {
                case UInt8(ascii: ","), UInt8(ascii: "."):
                    // A locale's decimal comma is written as a point, as jansson does.
                    put(UInt8(ascii: "."))
                    pointOrExponent = true
                case UInt8(ascii: "e"):
                    put(byte)
                    pointOrExponent = true
                    // The exponent's sign: `-` is kept, anything else (printf's `+`) dropped;
                    // then its leading zeros.
                    if i < text.count {
                        if text[i] == UInt8(ascii: "-") { put(UInt8(ascii: "-")) }
                        i += 1
                    }
                    while i < text.count && text[i] == UInt8(ascii: "0") { i += 1 }
                default:
                    put(byte)
                }
            }
            if !pointOrExponent { put(UInt8(ascii: ".")); put(UInt8(ascii: "0")) }
            return o
        }
    }
}
