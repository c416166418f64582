import Glibc

/// A text handed in whole, as bytes: a C string's up to its NUL, or a Swift string's. The NUL
/// that follows the bytes in memory stays there, so the parsers here, which read up to it, take
/// the text as it is, without a copy.
///
/// Made at the C boundary (`ABI/`) or from a Swift string; past the boundary the engine reads
/// bytes: only `JSON/` and `ABI/` touch C strings (`strlen`, `memchr`, `CChar`).
package struct TextBytes {
    /// The text's bytes, without the NUL after them.
    package let bytes: UnsafeBufferPointer<UInt8>
    /// The same text as the NUL-terminated string the parsers read (`JSON/` only).
    let cString: UnsafePointer<CChar>

    /// The text of a C string, which must stay alive and unchanged while this is used.
    package init(cString text: UnsafePointer<CChar>) {
        cString = text
        bytes = UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
    }

    /// Calls `body` with the text of `string` (which lends its bytes for the length of the call).
    package static func with<Result, Failure: Error>(_ string: String,
                                             _ body: (TextBytes) throws(Failure) -> Result) throws(Failure) -> Result {
        let result = string.withCString { pointer in
            Swift.Result { () throws(Failure) -> Result in try body(TextBytes(cString: pointer)) }
        }
        return try result.get()
    }

    var count: Int { bytes.count }

    /// The position of the first `byte` at or after `start`, or nil. `memchr`: a byte-by-byte
    /// search over a whole restoration text was a percent of a restore.
    package func firstIndex(of byte: UInt8, from start: Int = 0) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count,
              let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }
}
