/// SHA-256 and HMAC-SHA256 through OpenSSL's libcrypto (`LibCrypto`, the only code that touches
/// it), as lower-case hexadecimal text. Each throws `STEPKIT_EIO` "libcryptoUnavailable" when
/// libcrypto cannot be loaded, before anything was changed.
package enum Digest {
    package static func sha256(_ text: String) throws(StepKitError) -> String {
        let crypto = try LibCrypto.shared.get()
        var bytes = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBufferPointer { data in
            _ = crypto.sha256(data.baseAddress, data.count, &digest)
        }
        return hex(digest)
    }

    /// SHA-256 of `bytes` (a file the host captured, `Files/CapturedFile.swift`).
    package static func sha256(bytes: [UInt8]) throws(StepKitError) -> String {
        let crypto = try LibCrypto.shared.get()
        var data = bytes
        var digest = [UInt8](repeating: 0, count: 32)
        data.withUnsafeMutableBufferPointer { d in
            _ = crypto.sha256(d.baseAddress, d.count, &digest)
        }
        return hex(digest)
    }

    /// HMAC-SHA256 of `text` under `key`; nil if libcrypto refuses (a key too long for an `int`).
    package static func hmacSHA256(_ text: String, key: String) throws(StepKitError) -> String? {
        let crypto = try LibCrypto.shared.get()
        let data = Array(text.utf8)
        let keyBytes = Array(key.utf8)
        guard keyBytes.count < Int(Int32.max) else { return nil }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = keyBytes.withUnsafeBytes { k in
            data.withUnsafeBufferPointer { d in
                crypto.hmac(crypto.evpSHA256(), k.baseAddress, Int32(keyBytes.count), d.baseAddress, d.count, &digest, &length)
            }
        }
        guard ok != nil, length == 32 else { return nil }
        return hex(digest)
    }

    /// Compares two digests in constant time, so a forger learns nothing from timing.
    package static func equal(_ a: String, _ b: String) throws(StepKitError) -> Bool {
        let crypto = try LibCrypto.shared.get()
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return x.withUnsafeBytes { xb in y.withUnsafeBytes { yb in crypto.memcmp(xb.baseAddress, yb.baseAddress, x.count) == 0 } }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
