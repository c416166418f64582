import Glibc
import StepKitBase

/// The few file operations the autosave and the recorders share, on paths as the host gave them
/// (no Foundation): splitting a path, writing all of a buffer, syncing a directory, the text of
/// `errno`.
///
/// Existing files are opened with `O_NONBLOCK` as well as `O_NOFOLLOW`: it changes nothing for
/// a regular file, and a FIFO planted at a name cannot make an open wait forever.
enum FileSystem {
    /// `path`'s directory and last component: "a/b.json" → ("a", "b.json"), "b.json" → (".",
    /// "b.json"), "/b.json" → ("/", "b.json"). The name is empty when the path ends in "/".
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let name = String(path[path.index(after: slash)...])
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (directory, name)
    }

    /// `name` inside `directory`.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Writes all of `bytes` at `offset` (retrying short writes and EINTR). Nil on success, else
    /// the failing `errno` (ENOSPC when the disk took nothing).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int64) -> Int32? {
        var written = 0
        while written < bytes.count {
            let done = written
            let n = bytes.withUnsafeBytes { raw in
                pwrite(fd, raw.baseAddress.map { $0 + done }, bytes.count - done, off_t(offset + Int64(done)))
            }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if n == 0 { return ENOSPC }
            written += n
        }
        return nil
    }

    /// Makes entries created, renamed or removed in `directory` durable. Returns the `errno` of
    /// a failure to open or sync it, nil on success.
    @discardableResult
    static func syncDirectory(_ directory: String) -> Int32? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? nil : errno
    }

    /// The file `fd` refers to, if it is a regular file with no other name (no hard link to it
    /// elsewhere), so that writing it cannot change any other file.
    static func isOwnRegularFile(_ fd: Int32) -> stat? {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1 else { return nil }
        return info
    }

    /// What `lstat` says of `path` (a symbolic link is described, not followed); nil if there
    /// is nothing there (or it cannot be looked at).
    static func entry(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    /// `count` random characters from [a-z0-9], for names no one can guess.
    static func randomSuffix(_ count: Int = 12) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// `errno`'s text ("No such file or directory").
    static func reason(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
