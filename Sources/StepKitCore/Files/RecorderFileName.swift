import StepKitBase

/// The names of recorder files: `<taskRunUUID>-<step>-<visit>-<recorder>-<n>.json` for an
/// active step's recorder (visit: the visit's position in the path, from 1; n: the file's
/// number, from 0), `<taskRunUUID>-async-<recorder>-<n>.json` for an async action's.
///
/// Identifiers come from the task definition and may hold anything (`part1/walk`, `..`, spaces,
/// any Unicode), so they never go into a name as they are: every byte outside `[A-Za-z0-9._]`
/// is percent-encoded (`%2F` for `/`, `%2D` for `-`, UTF-8 bytes one by one), which keeps the
/// name one path component and makes the encoding reversible; since `-` is always encoded, the
/// `-` between the parts cannot be confused with one inside an identifier, so different
/// (step, visit, recorder, n) never share a name. An identifier whose encoding would pass 90
/// bytes (a name may have 255) is written as the first bytes of its encoding, `~`, and 16 hex
/// digits of its SHA-256 (`~` is never in a plain encoding, so the two forms cannot meet).
enum RecorderFileName {
    private static let limit = 90

    /// An active step's recorder file.
    static func step(run: String, step: String, visit: Int, recorder: String, file: Int) throws(StepKitError) -> String {
        "\(run)-\(try encode(step))-\(visit)-\(try encode(recorder))-\(file).json"
    }

    /// An async action's recorder file.
    static func async(run: String, recorder: String, file: Int) throws(StepKitError) -> String {
        "\(run)-async-\(try encode(recorder))-\(file).json"
    }

    /// `identifier` as it goes into a name (see the type's comment).
    static func encode(_ identifier: String) throws(StepKitError) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        var boundaries: [Int] = []  // where each encoded input byte starts, to cut between them
        for byte in identifier.utf8 {
            boundaries.append(bytes.count)
            if isKept(byte) {
                bytes.append(byte)
            } else {
                bytes += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        guard bytes.count > limit else { return String(decoding: bytes, as: UTF8.self) }
        let cut = boundaries.last(where: { $0 <= limit - 17 }) ?? 0
        let digest = String(try Digest.sha256(identifier).prefix(16))
        return String(decoding: bytes[..<cut], as: UTF8.self) + "~" + digest
    }

    /// Whether a file name from restoration data may be used in the output directory: one path
    /// component (no `/`, not `.` or `..`, not hidden: nothing starting with `.`), no NUL, at
    /// most 255 bytes. Every name this library writes passes (they start with the run's UUID),
    /// earlier versions' included; a name that could reach outside the directory does not.
    static func isSafe(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return !bytes.isEmpty && bytes.count <= 255 && bytes.first != 0x2E && !bytes.contains(0x2F) && !bytes.contains(0)
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2E || byte == 0x5F
    }
}
