import Glibc

/// Writes recorder samples under the session's output directory, as ResearchKit's data logger
/// does: one JSON file `{"items": [...]}` per recorder and run, a new file past a size limit.
/// Each batch is written in place of the closing `]}` and closes the document again, so the file
/// is valid JSON after every call and no accepted sample depends on a later one.
enum Recording {
    /// Appends `items` (already JSON text) to `file` in `directory`.
    static func append(_ items: [String], to file: inout RecordedFile, in directory: String) throws(StepKitError) {
        guard !items.isEmpty else { return }
        let path = directory.hasSuffix("/") ? directory + file.fileName : directory + "/" + file.fileName
        var text = file.items == 0 ? "{\"items\":[" : ","
        text += items.joined(separator: ",")
        text += "]}"
        let offset: Int64 = file.items == 0 ? 0 : max(file.bytes - 2, 0)
        let flags = file.items == 0 ? (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC) : (O_WRONLY | O_CLOEXEC)
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw failure("open", path) }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let total = bytes.count
        var written = 0
        while written < total {
            let done = written
            let n = bytes.withUnsafeBytes { raw in
                pwrite(fd, raw.baseAddress.map { $0 + done }, total - done, off_t(offset + Int64(done)))
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                let error = n == 0
                    ? StepKitError(.io, code: "recorderWriteFailed", message: "Writing \(path) made no progress (disk full?).")
                    : failure("write", path)
                repair(fd, file)
                throw error
            }
            written += n
        }
        file.bytes = offset + Int64(written)
        file.items += items.count
    }

    /// After a failed batch, puts the file back as it was before it: the earlier samples, closed.
    private static func repair(_ fd: Int32, _ file: RecordedFile) {
        guard file.items > 0 else {
            _ = ftruncate(fd, 0)
            return
        }
        _ = ftruncate(fd, off_t(file.bytes))
        let closing: [UInt8] = [0x5D, 0x7D]
        _ = closing.withUnsafeBytes { pwrite(fd, $0.baseAddress, 2, off_t(file.bytes - 2)) }
    }

    /// Makes a finished file durable.
    static func sync(_ file: RecordedFile, in directory: String) {
        let path = directory.hasSuffix("/") ? directory + file.fileName : directory + "/" + file.fileName
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    /// Whether `directory` exists and can be written.
    static func canWrite(_ directory: String) -> Bool {
        access(directory, W_OK) == 0
    }

    private static func failure(_ operation: String, _ path: String) -> StepKitError {
        let reason = strerror(errno).map { String(cString: $0) } ?? "error \(errno)"
        return StepKitError(.io, code: "recorderWriteFailed", message: "Writing samples failed (\(operation) \(path)): \(reason).")
    }
}
