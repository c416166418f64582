import Glibc

/// Writes restoration data so that a crash at any moment leaves either the previous file or the
/// new one, whole: write a temporary file beside it, fsync it, rename it over the old one, fsync
/// the directory.
enum Autosave {
    static func write(_ document: JSON, to path: String) throws(StepKitError) {
        let temporary = path + ".tmp"
        guard let text = JSONWriter.mallocString(document) else {
            throw StepKitError(.internal, code: "outOfMemory", message: "The restoration data could not be written.")
        }
        defer { free(text) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("open", temporary) }
        var remaining = strlen(text)
        var cursor = UnsafeRawPointer(text)
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
