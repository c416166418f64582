import StepKitBase

/// The integrity member of restoration data: SHA-256 (damage detection) or HMAC-SHA256 under the
/// host's `integrityKey` (authenticity), how it is written and how it is checked.
extension Restoration {
    /// The algorithm data saved with `key` (or none) is signed with.
    static func algorithm(key: String?) -> String { key == nil ? "SHA-256" : "HMAC-SHA256" }

    /// How saved text ends: the integrity member, last, written after the rest was digested
    /// (`saveText`): this head, the 64-digit digest, `integrityEnd`.
    static func integrityHead(_ algorithm: String) -> String { ",\"integrity\":{\"algorithm\":\"" + algorithm + "\",\"digest\":\"" }
    static let integrityEnd = "\"}}"

    static func sign(_ text: String, key: String?) throws(StepKitError) -> (algorithm: String, digest: String) {
        if let key, let mac = try Digest.hmacSHA256(text, key: key) { return ("HMAC-SHA256", mac) }
        return ("SHA-256", try Digest.sha256(text))
    }

    /// The integrity check on the text as given, when it is in the form `saveText` writes: the
    /// text before the integrity member is what was digested. Nil when the text has another form
    /// (a host re-wrote it), and the document must be written again to be checked.
    static func quickCheck(_ text: TextBytes, key: String?) throws(StepKitError) -> Bool? {
        let head = Array(integrityHead(Restoration.algorithm(key: key)).utf8)
        let end = Array(integrityEnd.utf8)
        let bytes = text.bytes
        let length = bytes.count
        let tailLength = head.count + 64 + end.count
        guard length > tailLength else { return nil }
        let start = length - tailLength
        guard bytes[start..<(start + head.count)].elementsEqual(head),
              bytes[(length - end.count)...].elementsEqual(end) else { return nil }
        let digest = String(decoding: bytes[(start + head.count)..<(length - end.count)], as: UTF8.self)
        let signed = String(decoding: bytes[..<start], as: UTF8.self) + "}"
        if let key {
            guard let expected = try Digest.hmacSHA256(signed, key: key) else { return false }
            return try Digest.equal(expected, digest)
        }
        return try Digest.equal(try Digest.sha256(signed), digest)
    }


    /// Checks the digest over the document without its `integrity` member (which it removes).
    static func checkIntegrity(_ document: inout JSONObject, key: String?) throws(StepKitError) {
        guard let integrity = document["integrity"]?.objectValue, let algorithm = integrity["algorithm"]?.stringValue,
              let digest = integrity["digest"]?.stringValue else {
            throw refuse("integrityMissing", "The restoration data carries no integrity check.", .root.key("integrity"))
        }
        document["integrity"] = nil
        let text = JSONWriter.string(.object(document))
        let runUUID = document["taskRunUUID"]?.stringValue
        let chain = { [document] () throws(StepKitError) in try checkAuditChain(document, runUUID: runUUID, key: key) }
        switch algorithm {
        case "HMAC-SHA256":
            guard let key else {
                throw refuse("keyRequired", "The restoration data is signed with a key; restore with the option \"integrityKey\".", .root.key("integrity"))
            }
            guard let expected = try Digest.hmacSHA256(text, key: key), try Digest.equal(expected, digest) else {
                try chain()
                throw refuse("integrityCheckFailed", "The restoration data failed its integrity check: it was changed, or the key is wrong.", .root.key("integrity"))
            }
        case "SHA-256":
            if key != nil {
                throw refuse("integrityCheckFailed", "The restoration data is not signed, but a key was given: it may have been re-written without the key.", .root.key("integrity"))
            }
            guard try Digest.equal(try Digest.sha256(text), digest) else {
                try chain()
                throw refuse("integrityCheckFailed", "The restoration data failed its integrity check: it was changed or damaged.", .root.key("integrity"))
            }
        default:
            throw refuse("integrityCheckFailed", "Unknown integrity algorithm \"\(algorithm)\".", .root.key("integrity").key("algorithm"))
        }
    }
}
