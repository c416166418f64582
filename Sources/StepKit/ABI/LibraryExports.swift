import CStepKit
import Glibc
import StepKitBase
import StepKitCore

// Versions, errors and strings: the functions that belong to no handle.

@c @implementation
public func stepkit_version() -> UnsafePointer<CChar>? {
    StaticText.version
}

@c @implementation
public func stepkit_version_number() -> Int32 {
    STEPKIT_VERSION_NUMBER
}

@c @implementation
public func stepkit_status_name(_ status: Int32) -> UnsafePointer<CChar>? {
    if status == STEPKIT_OK { return StaticText.pointer(StaticText.ok) }
    guard let known = Status(rawValue: status) else { return nil }
    return StaticText.pointer(known.staticName)
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
    /// The header's STEPKIT_VERSION (the engine's one source for its version, itself checked
    /// against the repository's VERSION file), copied once into memory kept for the life of the
    /// process: Swift imports the macro as a `String`, whose buffer is not stable. Kept as an
    /// address (a Sendable integer) and written only by the `static let`'s one-time
    /// initialization.
    static var version: UnsafePointer<CChar>? {
        UnsafePointer(bitPattern: versionAddress)
    }

    private static let versionAddress: UInt = STEPKIT_VERSION.withCString { text in
        // Out of memory at the first call: a static empty string rather than NULL or a trap.
        UInt(bitPattern: strdup(text) ?? UnsafeMutableRawPointer(mutating: emptyText.utf8Start)
            .assumingMemoryBound(to: CChar.self))
    }

    private static let emptyText: StaticString = ""

    /// STEPKIT_OK's name, for stepkit_status_name().
    static let ok: StaticString = "OK"

    /// A string literal's NUL-terminated bytes: static, never freed.
    static func pointer(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
