import Glibc

/// Writes restoration data so that a crash at any moment leaves either the previous file or the
/// new one, whole: write a temporary file beside it, fsync it, rename it over the old one, fsync
/// the directory.
enum Autosave {
    static func write(_ document: JSON, to path: String) throws(StepKitError) {
        try write(JSONWriter.string(document), to: path)
    }

    static func write(_ text: String, to path: String) throws(StepKitError) {
        let temporary = path + ".tmp"
        let bytes = Array(text.utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("open", temporary) }
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(StepKitError) in try writeAll(fd, raw, temporary) }
        }
        try result.get()
        guard fsync(fd) == 0 else {
            let error = failure("fsync", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("rename", path)
            unlink(temporary)
            throw error
        }
        syncDirectory(of: path)
    }

    private static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer, _ temporary: String) throws(StepKitError) {
        guard let base = raw.baseAddress else { return }
        var remaining = raw.count
        var cursor = base
        while remaining > 0 {
            let written = Glibc.write(fd, cursor, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                let error = failure("write", temporary)
                close(fd)
                unlink(temporary)
                throw error
            }
            remaining -= written
            cursor += written
        }
    }

    /// Makes the rename itself durable.
    private static func syncDirectory(of path: String) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    private static func failure(_ operation: String, _ path: String) -> StepKitError {
        let reason = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
        return StepKitError(.io, code: "autosaveFailed", message: "Autosave failed (\(operation) \(path)): \(reason).")
    }
}
