/// Random (version 4) UUIDs for task runs, and the check that a host-given one is well formed.
enum UUIDText {
    /// A new random UUID, upper-case as `NSUUID` writes it.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = Array("0123456789ABCDEF")
        var text = ""
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append("-") }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return text
    }

    /// The UUID in upper case, or nil when `text` is not 8-4-4-4-12 hexadecimal digits.
    static func normalized(_ text: String) -> String? {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12],
              groups.allSatisfy({ $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return text.uppercased()
    }
}
