import Glibc
import StepKitBase

/// Writes recorder samples under the session's output directory, as ResearchKit's data logger
/// does: one JSON file `{"items": [...]}` per recorder and run, a new file past a size limit.
/// Each batch is written in place of the closing `]}` and closes the document again, so the file
/// is valid JSON after every call and no accepted sample depends on a later one.
///
/// The length the session records (`RecordedFile.bytes`, saved in restoration data) is the
/// truth about a file: bytes past it belong to a batch whose call was never saved (its autosave
/// failed, or the host died before it), and are cut off by the next write or by the recorder's
/// stop (`settle`). Files are never reached through a link: a new file is created exclusively
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`), and an existing one is opened with `O_NOFOLLOW` and written
/// only if it is a regular file with no other name, so a link planted in the output directory
/// cannot make StepKit write any other file.
enum Recording {
    /// `{"items":[` + `]}`: the smallest file with one sample has two more bytes (`{}`).
    private static let emptyLength: Int64 = 12

    /// Appends `items` (already JSON text) to `file` in `directory`. With `durable` (the session
    /// autosaves) the samples, and a new file's name, reach the disk before the call returns, so
    /// an autosave written after them never counts samples a power cut lost.
    ///
    /// On failure the file is as it was before (a file this call created is removed) and
    /// `file` is unchanged.
    static func append(_ items: [String], to file: inout RecordedFile, in directory: String, durable: Bool) throws(StepKitError) {
        guard !items.isEmpty else { return }
        let path = FileSystem.join(directory, file.fileName)
        let creating = file.items == 0
        let fd = creating ? try create(path) : try openExisting(path, at: file)
        defer { close(fd) }
        var text = creating ? "{\"items\":[" : ","
        text += items.joined(separator: ",")
        text += "]}"
        let bytes = Array(text.utf8)
        let offset: Int64 = creating ? 0 : file.bytes - 2
        let end = offset + Int64(bytes.count)
        if let code = FileSystem.writeAll(fd, bytes, at: offset) {
            undo(fd, path, file, created: creating)
            throw failure("write", path, code)
        }
        // A longer file holds a batch of an unsaved call after the recorded length: cut it off.
        var info = stat()
        if fstat(fd, &info) == 0, Int64(info.st_size) > end, ftruncate(fd, off_t(end)) != 0 {
            let code = errno
            undo(fd, path, file, created: creating)
            throw failure("truncate", path, code)
        }
        if durable {
            if fdatasync(fd) != 0 {
                let code = errno
                undo(fd, path, file, created: creating)
                throw failure("fsync", path, code)
            }
            if creating { FileSystem.syncDirectory(directory) }
        }
        file.bytes = end
        file.items += items.count
    }

    /// Puts `file` back at its recorded length and syncs it: the bytes of an unsaved call's
    /// batch are cut off and the document closed again. Used when a recorder stops (its file is
    /// finished) and when a call's autosave failed (the call is undone, files included).
    static func settle(_ file: RecordedFile, in directory: String) {
        guard file.items > 0, file.bytes >= emptyLength + 2 else { return }
        let fd = open(FileSystem.join(directory, file.fileName), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard let info = FileSystem.isOwnRegularFile(fd) else { return }
        if Int64(info.st_size) > file.bytes { cutBack(fd, file) }
        _ = fsync(fd)
    }

    /// Removes a file a call created when the call is undone (its autosave failed).
    static func remove(_ file: RecordedFile, in directory: String) {
        unlink(FileSystem.join(directory, file.fileName))
    }

    /// Whether `directory` exists and can be written.
    static func canWrite(_ directory: String) -> Bool {
        access(directory, W_OK) == 0
    }

    // MARK: Opening

    /// A new file at `path`, created exclusively. Something already there carries this run's
    /// name, so it is a file of this run whose call was never saved (the host died before its
    /// autosave), or something planted: it is removed (a link is removed, never followed) and
    /// the file created again, exclusively.
    private static func create(_ path: String) throws(StepKitError) -> Int32 {
        var replaced = false
        while true {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 { return fd }
            let code = errno
            if code == EINTR { continue }
            if code == EEXIST && !replaced && unlink(path) == 0 {
                replaced = true
                continue
            }
            throw failure("create", path, code)
        }
    }

    /// The file a recorder already wrote, refused unless it is still a regular file of its own,
    /// at least as long as recorded.
    private static func openExisting(_ path: String, at file: RecordedFile) throws(StepKitError) -> Int32 {
        guard file.bytes >= emptyLength + 2 else {
            throw StepKitError(.io, code: "recorderWriteFailed", message: "The recorded length of \(path) is not valid.")
        }
        var fd: Int32
        repeat { fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw failure("open", path, errno) }
        guard let info = FileSystem.isOwnRegularFile(fd) else {
            close(fd)
            throw StepKitError(.io, code: "recorderWriteFailed",
                               message: "\(path) is no longer a regular file of its own (replaced, or linked elsewhere); StepKit does not write it.")
        }
        guard Int64(info.st_size) >= file.bytes else {
            close(fd)
            throw StepKitError(.io, code: "recorderWriteFailed",
                               message: "\(path) is shorter than the \(file.bytes) bytes recorded: it was changed outside StepKit.")
        }
        return fd
    }

    // MARK: Undoing

    /// After a failed batch, puts the file back as it was before it: removed if the batch
    /// created it, else the earlier samples, closed.
    private static func undo(_ fd: Int32, _ path: String, _ file: RecordedFile, created: Bool) {
        if created {
            unlink(path)
        } else {
            cutBack(fd, file)
        }
    }

    /// Cuts the file to its recorded length and writes the closing `]}` over the `,{` a later
    /// batch put there.
    private static func cutBack(_ fd: Int32, _ file: RecordedFile) {
        _ = ftruncate(fd, off_t(file.bytes))
        _ = FileSystem.writeAll(fd, [0x5D, 0x7D], at: file.bytes - 2)
    }

    private static func failure(_ operation: String, _ path: String, _ code: Int32) -> StepKitError {
        StepKitError(.io, code: "recorderWriteFailed", message: "Writing samples failed (\(operation) \(path)): \(FileSystem.reason(code)).")
    }
}
