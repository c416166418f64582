import CStepKit
import Glibc

// Versions, errors and strings: the functions that belong to no handle.

@c @implementation
public func stepkit_version() -> UnsafePointer<CChar>? {
    UnsafeRawPointer(StaticText.version.utf8Start).assumingMemoryBound(to: CChar.self)
}

@c @implementation
public func stepkit_version_number() -> Int32 {
    1000
}

@c @implementation
public func stepkit_last_error() -> UnsafePointer<CChar>? {
    LastError.current
}

@c @implementation
public func stepkit_string_free(_ str: UnsafeMutablePointer<CChar>?) {
    free(str)
}

/// Text with a static lifetime for `const char *` results.
enum StaticText {
    static let version: StaticString = "0.1.0"
}
