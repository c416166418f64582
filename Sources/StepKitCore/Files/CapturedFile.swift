import Glibc
import StepKitBase

/// Writes a file the host captured (a signature, an image) into the session's output directory,
/// whole, as `Recording` writes recorder files: created exclusively and never through a link,
/// synced before the call returns when the session autosaves, removed again if the call is
/// undone (`Session.undoCapturedFile`).
enum CapturedFile {
    /// `<taskRunUUID>-<step>-<visit>-<first 16 hex digits of its SHA-256>.<extension>`: one
    /// path component (`RecorderFileName.encode`), different for different contents, so
    /// reporting again never overwrites the file an earlier report recorded.
    static func name(run: String, step: String, visit: Int, sha256: String, fileExtension: String) throws(StepKitError) -> String {
        "\(run)-\(try RecorderFileName.encode(step))-\(visit)-\(sha256.prefix(16)).\(fileExtension)"
    }

    /// Writes `bytes` as `name` in `directory`. A file of that name is this run's same content
    /// (the name holds its digest) from a call that was never saved: it is replaced.
    /// On failure nothing is left behind.
    static func write(_ bytes: [UInt8], name: String, in directory: String, durable: Bool) throws(StepKitError) {
        let path = FileSystem.join(directory, name)
        var fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EEXIST && unlink(path) == 0 {
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw failure("create", path, errno) }
        defer { close(fd) }
        if let code = FileSystem.writeAll(fd, bytes, at: 0) {
            unlink(path)
            throw failure("write", path, code)
        }
        if durable {
            if fdatasync(fd) != 0 {
                let code = errno
                unlink(path)
                throw failure("fsync", path, code)
            }
            _ = FileSystem.syncDirectory(directory)
        }
    }

    static func remove(_ name: String, in directory: String) {
        unlink(FileSystem.join(directory, name))
    }

    private static func failure(_ operation: String, _ path: String, _ code: Int32) -> StepKitError {
        StepKitError(.io, code: "captureWriteFailed", message: "Writing the captured file failed (\(operation) \(path)): \(FileSystem.reason(code)).")
    }
}

/// Base64 (RFC 4648, section 4) decoding, strict: the standard alphabet, padding to a multiple
/// of four, no white space, no bits left over. nil for anything else.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var i = 0
        while i < input.count {
            let last = i + 4 == input.count
            var values: [UInt32] = []
            var padding = 0
            for j in 0..<4 {
                let c = input[i + j]
                if c == 0x3D {  // "="
                    guard last, j >= 2 else { return nil }
                    padding += 1
                    continue
                }
                guard padding == 0, let v = value(c) else { return nil }
                values.append(v)
            }
            let n = values.reduce(UInt32(0)) { $0 << 6 | $1 } << (6 * UInt32(padding))
            let count = 3 - padding
            // Bits the padding leaves over must be zero (one encoding per byte string).
            if padding > 0, n & ((1 << (8 * UInt32(padding))) - 1) != 0 { return nil }
            for k in 0..<count { out.append(UInt8(truncatingIfNeeded: n >> (16 - 8 * UInt32(k)))) }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x41...0x5A: return UInt32(c - 0x41)
        case 0x61...0x7A: return UInt32(c - 0x61 + 26)
        case 0x30...0x39: return UInt32(c - 0x30 + 52)
        case 0x2B: return 62
        case 0x2F: return 63
        default: return nil
        }
    }
}
