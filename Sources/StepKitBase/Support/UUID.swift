/// Random (version 4) UUIDs for task runs, and the check that a host-given one is well formed.
package enum UUIDText {
    /// A new random UUID, upper-case as `NSUUID` writes it. Two random words and 36 bytes
    /// written in place: the UUID of every session opened (building it a character at a time
    /// was a third of opening one).
    package static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var high = generator.next()
        var low = generator.next()
        high = (high & ~0xF000) | 0x4000                  // version 4: byte 6's high nibble
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)    // variant 10: byte 8's top bits
        let digits: StaticString = "0123456789ABCDEF"
        return String(unsafeUninitializedCapacity: 36) { out in
            var at = 0
            for position in 0..<16 {
                let word = position < 8 ? high : low
                let byte = UInt8(truncatingIfNeeded: word >> (56 - 8 * (position % 8)))
                if position == 4 || position == 6 || position == 8 || position == 10 {
                    out[at] = UInt8(ascii: "-")
                    at += 1
                }
                out[at] = digits.utf8Start[Int(byte >> 4)]
                out[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                at += 2
            }
            return at
        }
    }

    /// The UUID in upper case, or nil when `text` is not 8-4-4-4-12 hexadecimal digits.
    package static func normalized(_ text: String) -> String? {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12],
              groups.allSatisfy({ $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return text.uppercased()
    }
}
