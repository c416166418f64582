import Glibc
import StepKitBase

/// A session's autosave file, claimed for as long as the session lives.
///
/// Two ways to change it. `write` replaces the file whole, so a crash at any moment leaves either
/// the previous text or the new one: the text goes to a new temporary file beside it, created
/// exclusively under a name no one can guess (`.<name>.stepkit-tmp-<12 random characters>`,
/// `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`, so a link planted there is never followed), is
/// fsynced, renamed over the file (a rename replaces a link at the path; it never writes where
/// the link points) and the directory is fsynced so the rename itself survives a power cut.
/// `append` adds bytes at the end of the file this session wrote last and fsyncs it: a crash
/// in the middle leaves the file as it was plus a torn tail, which the reader of the file must
/// recognise (the autosave journal ends each record with a newline: `Restoration+Journal.swift`).
///
/// One session per file: the session holds an exclusive `flock` on the file at the path, and
/// on each temporary file from its creation, so the lock passes from file to file with the
/// rename. `flock` locks conflict between any two opens, so a second session is refused
/// (`autosaveInUse`) in this process or another, whatever spelling of the path it used; the
/// lock dies with the process, so a crash never leaves the path claimed. A temporary file no one
/// holds is what a crash left: claiming the path removes those.
final class Autosave: Sendable {
    /// The file at the path this session holds the lock of (nil until the first save creates
    /// the path, or after someone removed it).
    private struct Held {
        var fd: Int32
        var device: UInt64
        var inode: UInt64
        /// The file's length as this session wrote it, nil for a file it did not write (one it
        /// found at the path): only a file of known length is appended to.
        var length: Int64?
    }

    let path: String
    private let directory: String
    /// What the names of this file's temporary files start with.
    private let temporaryPrefix: String
    private let held: Locked<Held?>

    private init(path: String, directory: String, temporaryPrefix: String, held: Held?) {
        self.path = path
        self.directory = directory
        self.temporaryPrefix = temporaryPrefix
        self.held = Locked(held)
    }

    deinit {
        held.withLock { held in
            if let held { close(held.fd) }
        }
    }

    /// Claims `path` for a session: refuses a path that is a directory, a symbolic link or any
    /// other non-regular file (`autosaveNotAFile`), or that another live session holds
    /// (`autosaveInUse`); then removes the temporary files a crash left for it. Nothing is
    /// written to `path` itself; the caller's first `write` does that.
    static func claim(_ path: String) throws(StepKitError) -> Autosave {
        let (directory, name) = FileSystem.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw notAFile(path, "names a directory")
        }
        let prefix = try temporaryPrefix(name)
        let held = try lockExisting(path)
        let autosave = Autosave(path: path, directory: directory, temporaryPrefix: prefix, held: held)
        autosave.removeStaleTemporaries()
        return autosave
    }

    /// Replaces the file with `text` (see the type's comment). On failure nothing changed: the
    /// file holds what it held, and no temporary file is left.
    func write(_ text: String) throws(StepKitError) {
        try held.withLock { (held: inout Held?) throws(StepKitError) in
            let (fd, temporary) = try Autosave.createTemporary(in: directory, prefix: temporaryPrefix)
            var info = stat()
            guard Autosave.lockFile(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &info) == 0 else {
                let code = errno
                close(fd)
                unlink(temporary)
                throw Autosave.failure("flock", temporary, code)
            }
            let bytes = Array(text.utf8)
            let new = Held(fd: fd, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), length: Int64(bytes.count))
            do throws(StepKitError) {
                try Autosave.fill(fd, temporary, with: bytes)
                try commit(temporary, replacing: &held)
            } catch {
                close(fd)
                unlink(temporary)
                throw error
            }
            if let old = held { close(old.fd) }
            held = new
            // The new file is in place; a directory that cannot be synced only weakens the
            // rename's durability across a power cut, and the call cannot be undone any more.
            FileSystem.syncDirectory(directory)
        }
    }

    /// Appends `bytes` to the file and fsyncs it, if the file at the path is still the one this
    /// session wrote last, as long as it wrote it (nothing removed, replaced, cut or extended it
    /// since): then returns true. Returns false, having written nothing, otherwise; the caller
    /// then `write`s the whole text (which claims the path again, or fails as a save into a
    /// missing directory fails). On failure the file is cut back to its length before the call
    /// (and if even that fails, the next change replaces the file whole) and `autosaveFailed` is
    /// thrown.
    func append(_ bytes: [UInt8]) throws(StepKitError) -> Bool {
        try held.withLock { (held: inout Held?) throws(StepKitError) -> Bool in
            guard var current = held, let length = current.length, isAtPath(current, length: length) else { return false }
            var failure: (String, Int32)?
            if let code = FileSystem.writeAll(current.fd, bytes, at: length) {
                failure = ("write", code)
            } else if fsync(current.fd) != 0 {
                failure = ("fsync", errno)
            }
            if let (operation, code) = failure {
                if ftruncate(current.fd, off_t(length)) != 0 || fsync(current.fd) != 0 { held?.length = nil }
                throw Autosave.failure(operation, path, code)
            }
            current.length = length + Int64(bytes.count)
            held = current
            return true
        }
    }

    /// Whether the file at the path is the one this session wrote last, as it left it (what
    /// `append` requires).
    func holdsFileAsWritten() -> Bool {
        held.withLock { held in
            guard let current = held, let length = current.length else { return false }
            return isAtPath(current, length: length)
        }
    }

    /// The regular file at the path is `held`, `length` bytes long.
    private func isAtPath(_ held: Held, length: Int64) -> Bool {
        guard let entry = FileSystem.entry(path), (entry.st_mode & S_IFMT) == S_IFREG else { return false }
        return UInt64(entry.st_dev) == held.device && UInt64(entry.st_ino) == held.inode && Int64(entry.st_size) == length
    }

    /// Puts the temporary file at the path: a rename over the file this session holds, or a
    /// link where there is none yet (a link never replaces a file another session made
    /// meanwhile). Throws `autosaveInUse` if another session holds the file now at the path.
    private func commit(_ temporary: String, replacing held: inout Held?) throws(StepKitError) {
        let current = FileSystem.entry(path)
        let ours = current.map { entry in held.map { UInt64(entry.st_dev) == $0.device && UInt64(entry.st_ino) == $0.inode } ?? false } ?? false
        if current == nil {
            if link(temporary, path) == 0 {
                unlink(temporary)
                return
            }
            guard errno == EEXIST else { throw Autosave.failure("link", path, errno) }
        }
        if !ours {
            // A file this session does not hold (made since, or replaced by someone): take its
            // lock first, or refuse.
            if let other = try Autosave.lockExisting(path) {
                if let old = held { close(old.fd) }
                held = other
            }
        }
        guard rename(temporary, path) == 0 else { throw Autosave.failure("rename", path, errno) }
    }

    /// Writes all of `bytes` to the new temporary file and syncs it.
    private static func fill(_ fd: Int32, _ temporary: String, with bytes: [UInt8]) throws(StepKitError) {
        if let code = FileSystem.writeAll(fd, bytes, at: 0) { throw failure("write", temporary, code) }
        guard fsync(fd) == 0 else { throw failure("fsync", temporary, errno) }
    }

    /// Writes `document` to `path` once, crash-safely, without claiming it (tests and tools).
    static func write(_ document: JSON, to path: String) throws(StepKitError) {
        try write(JSONWriter.string(document), to: path)
    }

    /// Writes `text` to `path` once, crash-safely, without claiming it.
    static func write(_ text: String, to path: String) throws(StepKitError) {
        try claim(path).write(text)
    }

    // MARK: Locking

    /// The lock on the regular file at `path`, if there is one; nil if there is nothing there.
    private static func lockExisting(_ path: String) throws(StepKitError) -> Held? {
        for _ in 0..<16 {
            guard let entry = FileSystem.entry(path) else { return nil }
            switch entry.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFLNK: throw notAFile(path, "is a symbolic link (the autosave replaces the file by a rename, which would replace the link instead of writing where it points: give the real path)")
            case S_IFDIR: throw notAFile(path, "is a directory")
            default: throw notAFile(path, "is not a regular file")
            }
            var fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if fd < 0 && errno == EACCES { fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
            guard fd >= 0 else {
                if errno == ENOENT || errno == ELOOP || errno == EINTR { continue }  // changed meanwhile: look again
                throw failure("open", path, errno)
            }
            if lockFile(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                close(fd)
                if code == EINTR { continue }
                if code == EWOULDBLOCK {
                    throw StepKitError(.io, code: "autosaveInUse",
                                       message: "The autosave file \(path) is in use by another session (in this process or another); free that session first, or give another path.")
                }
                throw failure("flock", path, code)
            }
            // What we locked must still be the file at the path (a save may have replaced it
            // since we opened it): else look again.
            var info = stat()
            guard fstat(fd, &info) == 0, let now = FileSystem.entry(path), now.st_dev == info.st_dev, now.st_ino == info.st_ino else {
                close(fd)
                continue
            }
            return Held(fd: fd, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), length: nil)
        }
        throw failure("flock", path, EAGAIN)
    }

    /// flock(2): Glibc's `struct flock` hides the function of the same name unless its type is
    /// spelled out.
    private static let lockFile: @Sendable (Int32, Int32) -> Int32 = { flock($0, $1) }

    // MARK: Temporary files

    private static let suffixLength = 12

    /// A new, empty temporary file that did not exist before (never a link planted there).
    private static func createTemporary(in directory: String, prefix: String) throws(StepKitError) -> (Int32, String) {
        var attempts = 0
        while true {
            let temporary = FileSystem.join(directory, prefix + FileSystem.randomSuffix(suffixLength))
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, temporary) }
            let code = errno
            attempts += 1
            if code == EINTR || (code == EEXIST && attempts < 16) { continue }
            throw failure("open", temporary, code)
        }
    }

    /// `.<name>.stepkit-tmp-`; for a name too long to extend (a name has at most 255 bytes), a
    /// digest of it stands in for it.
    private static func temporaryPrefix(_ name: String) throws(StepKitError) -> String {
        "." + (name.utf8.count <= 200 ? name : "~" + (try Digest.sha256(name))) + ".stepkit-tmp-"
    }

    /// Removes the temporary files of this path that a crash left: exactly the names `write`
    /// makes (the prefix and 12 characters of [a-z0-9]) that no live writer holds locked. A link
    /// with such a name is removed too (never followed): StepKit never made it.
    private func removeStaleTemporaries() {
        let prefix = Array(temporaryPrefix.utf8)
        guard let stream = opendir(directory) else { return }
        var candidates: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            let bytes = Array(entryName.utf8)
            guard bytes.count == prefix.count + Autosave.suffixLength, bytes.starts(with: prefix),
                  bytes[prefix.count...].allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) }) else { continue }
            candidates.append(entryName)
        }
        closedir(stream)
        var removed = false
        for entryName in candidates {
            let stale = FileSystem.join(directory, entryName)
            let fd = open(stale, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 {
                let free = Autosave.lockFile(fd, LOCK_EX | LOCK_NB) == 0
                if free { removed = unlink(stale) == 0 || removed }
                close(fd)
            } else if errno == ELOOP {
                removed = unlink(stale) == 0 || removed
            }
        }
        if removed { FileSystem.syncDirectory(directory) }
    }

    // MARK: Errors

    private static func notAFile(_ path: String, _ what: String) -> StepKitError {
        StepKitError(.io, code: "autosaveNotAFile", message: "The autosave path \(path) \(what).")
    }

    static func failure(_ operation: String, _ path: String, _ code: Int32) -> StepKitError {
        StepKitError(.io, code: "autosaveFailed", message: "Autosave failed (\(operation) \(path)): \(FileSystem.reason(code)).")
    }
}
