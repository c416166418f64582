import StepKitBase

/// The autosave file as a journal: restoration data (the snapshot, exactly `saveText`) followed
/// by one line per call that changed the session since, each the call's change to the document.
/// A call then costs the encoding and the write of what it changed, not of the whole history;
/// the store writes a new snapshot when the records outgrow it (`SessionStore`).
///
/// ```
/// {"format":"stepkit-restoration",...,"integrity":{"algorithm":"SHA-256","digest":"d0"}}
/// {"journal":"SHA-256","digest":"d1","change":{...}}
/// {"journal":"SHA-256","digest":"d2","change":{...}}
/// ```
///
/// Each record's digest signs the previous digest (the snapshot's for the first), a newline and
/// the change's text, with the snapshot's algorithm (HMAC-SHA256 under `integrityKey`): a record
/// changed, removed from the middle, moved or added by someone without the key fails the chain.
/// Every record ends with a newline, so a record cut short by a crash is the last line and has
/// none: it is ignored, and the document is that of the last call whose record is whole. A
/// whole line that is not a valid record refuses the data.
///
/// A change has up to four members: `members` (members of the document set whole: the dates,
/// the finish reason, `touched`, `taskSuspended`, `asyncActions`, `additionalTaskResults`,
/// `reviewReturn`),
/// `path` (`from`: how many saved visits stay; `visits`: the visits that follow them),
/// `answers` and `laterAnswers` (`set`: entries by step identifier; `remove`: identifiers),
/// `audit` (`from`: how many saved audit events stay, always all of them; `events`: the new ones).
/// Restore applies the records to the snapshot and then checks the resulting document as it
/// checks any restoration data (everything but the integrity member, which the chain stands for).
extension Restoration {
    // MARK: Writing

    /// What changed in the saved document from `old` to `new` (the same session before and after
    /// a call), nil if nothing did. The work is an in-memory comparison of the two sessions (no
    /// encoding of what is equal) plus the encoding of what differs.
    static func change(from old: Session, to new: Session) -> JSON? {
        var change = JSONObject()
        var members = JSONObject()
        for key in wholeMembers {
            let value = member(key, of: new)
            if value != member(key, of: old) { members[key] = value }
        }
        if members.count > 0 { change["members"] = .object(members) }
        // A visit whose active step runs is saved with the time at the save: always written again.
        let shared = min(old.path.count, new.path.count)
        var from = 0
        while from < shared, new.path[from].active?.status != .running, old.path[from] == new.path[from] { from += 1 }
        if from < old.path.count || from < new.path.count {
            let visits = new.path[from...].map { encode($0, in: new) }
            change["path"] = .object(["from": .int(Int64(from)), "visits": .array(visits)])
        }
        if let answers = entryChange(old.answers.latest, new.answers.latest, in: new, { $0 }) { change["answers"] = answers }
        if let later = entryChange(old.answers.later, new.answers.later, in: new, { $0.isEmpty ? nil : .array($0) }) {
            change["laterAnswers"] = later
        }
        if let audit = auditChange(from: old, to: new) { change["audit"] = audit }
        return change.count == 0 ? nil : .object(change)
    }

    /// The entries of a map by step index that differ: `set` those `saved` gives a value, by step
    /// identifier; `remove` the others.
    private static func entryChange<Value: Equatable>(_ old: IndexTable<Value>, _ new: IndexTable<Value>, in s: Session,
                                                      _ saved: (Value) -> JSON?) -> JSON? {
        var changed: [Int] = []
        for (index, value) in new where old[index] != value { changed.append(index) }
        for index in old.keys where new[index] == nil { changed.append(index) }
        guard !changed.isEmpty else { return nil }
        var set = JSONObject()
        var remove: [JSON] = []
        for index in changed.sorted() {
            guard let identifier = s.task.step(at: index)?.identifier else { continue }
            if let value = new[index].flatMap(saved) {
                set[identifier] = value
            } else {
                remove.append(.string(identifier))
            }
        }
        return .object(["set": .object(set), "remove": .array(remove)])
    }

    /// The journal line for `change` (newline included) and its digest, the next record's
    /// `previous`. `previous` is the digest of the snapshot or of the record before.
    static func journalRecord(_ change: JSON, previous: String, key: String?) throws(StepKitError) -> (line: [UInt8], digest: String) {
        let text = JSONWriter.string(change)
        let (algorithm, digest) = try sign(previous + "\n" + text, key: key)
        return (Array(("{\"journal\":\"" + algorithm + "\",\"digest\":\"" + digest + "\",\"change\":" + text + "}\n").utf8), digest)
    }

    // MARK: Reading

    /// Where the snapshot line of an autosave journal ends (its newline), or nil when `bytes` is
    /// not a journal: a journal's first line is one JSON object, followed by a newline
    /// (restoration data a host wrote out itself, pretty-printed or not, is not).
    static func journalSnapshotEnd(_ text: TextBytes) -> Int? {
        // The whole text is searched when it is not a journal (`TextBytes.firstIndex`, not a loop here).
        guard let newline = text.firstIndex(of: 0x0A) else { return nil }
        let bytes = text.bytes
        guard newline >= 2, bytes[0] == 0x7B, bytes[newline - 1] == 0x7D else { return nil }
        return newline
    }

    /// The document an autosave journal describes, its integrity checked (and removed); its
    /// snapshot line ends at `newline` (`journalSnapshotEnd`).
    static func journalDocument(_ text: TextBytes, snapshotEnd newline: Int, key: String?) throws(StepKitError) -> JSONObject {
        let bytes = text.bytes
        let snapshot = String(decoding: bytes[..<newline], as: UTF8.self)
        var (document, head) = try TextBytes.with(snapshot) { (snapshot: TextBytes) throws(StepKitError) in
            try signedDocument(snapshot, key: key)
        }
        var replay = JournalReplay()
        var start = newline + 1
        var line = 2
        // A last line without its newline is a record a crash cut short: ignored.
        while start < bytes.count, let end = bytes[start...].firstIndex(of: 0x0A) {
            let change: JSON
            (change, head) = try record(Array(bytes[start..<end]), previous: head, key: key, line: line)
            try replay.apply(change, to: &document, line: line)
            start = end + 1
            line += 1
        }
        replay.finish(&document)
        return document
    }

    /// One record's change, once its digest is checked against the chain.
    private static func record(_ bytes: [UInt8], previous: String, key: String?, line: Int) throws(StepKitError) -> (JSON, String) {
        let algorithm = Restoration.algorithm(key: key)
        let head = Array(("{\"journal\":\"" + algorithm + "\",\"digest\":\"").utf8)
        let middle = Array("\",\"change\":".utf8)
        let changeStart = head.count + 64 + middle.count
        guard bytes.count > changeStart + 1, bytes.starts(with: head), bytes[(head.count + 64)..<changeStart].elementsEqual(middle),
              bytes.last == 0x7D else {
            if bytes.starts(with: Array("{\"journal\":\"".utf8)) && !bytes.starts(with: head) {
                throw refuse("integrityCheckFailed", "Line \(line) of the autosave journal is signed with another algorithm than its snapshot: it was re-written, or the key is \(key == nil ? "missing" : "wrong").")
            }
            throw refuse("damaged", "Line \(line) of the autosave journal is not a journal record.")
        }
        let digest = String(decoding: bytes[head.count..<(head.count + 64)], as: UTF8.self)
        let text = String(decoding: bytes[changeStart..<(bytes.count - 1)], as: UTF8.self)
        let (signedAlgorithm, expected) = try sign(previous + "\n" + text, key: key)
        guard signedAlgorithm == algorithm, try Digest.equal(expected, digest) else {
            throw refuse("integrityCheckFailed", "Record \(line - 1) of the autosave journal failed its integrity check: it was changed, or a record before it was removed, changed or moved, or the key is wrong.")
        }
        do throws(StepKitError) {
            return (try JSONParser.parse(text), digest)
        } catch {
            throw refuse("damaged", "Line \(line) of the autosave journal is not JSON: " + (error.problems.first?.message ?? ""))
        }
    }
}

/// Applies journal records to a document. The path and the answer maps being changed are taken
/// out of the document once and put back at the end, so each record costs its own size.
struct JournalReplay {
    private var path: [JSON]?
    private var maps: [String: JSONObject] = [:]

    mutating func apply(_ change: JSON, to document: inout JSONObject, line: Int) throws(StepKitError) {
        func damaged(_ what: String) -> StepKitError {
            Restoration.refuse("damaged", "Record \(line - 1) of the autosave journal is not a valid change: \(what).")
        }
        guard let change = change.objectValue else { throw damaged("not an object") }
        for (key, value) in change.entries {
            switch key {
            case "members":
                guard let members = value.objectValue else { throw damaged("members is not an object") }
                for (name, member) in members.entries {
                    guard Restoration.wholeMembers.contains(name) else { throw damaged("it sets \"\(name)\"") }
                    document[name] = member
                }
            case "path":
                guard let object = value.objectValue, object.count == 2, case .int(let from)? = object["from"],
                      let visits = object["visits"]?.arrayValue else { throw damaged("path is not {from, visits}") }
                var current: [JSON]
                if let path { current = path } else {
                    guard let saved = document["path"]?.arrayValue else { throw damaged("the document has no path") }
                    current = saved
                }
                path = nil
                guard from >= 0, from <= Int64(current.count) else { throw damaged("path.from is past the path") }
                current.removeSubrange(Int(from)...)
                current.append(contentsOf: visits)
                path = current
            case "answers", "laterAnswers":
                guard let object = value.objectValue, object.keys.allSatisfy({ $0 == "set" || $0 == "remove" }),
                      let set = (object["set"] ?? .object(JSONObject())).objectValue,
                      let remove = (object["remove"] ?? .array([])).arrayValue else { throw damaged("\(key) is not {set, remove}") }
                var map: JSONObject
                if let taken = maps[key] { map = taken } else {
                    guard let saved = document[key]?.objectValue else { throw damaged("the document has no \(key)") }
                    map = saved
                }
                maps[key] = nil
                for (identifier, entry) in set.entries { map[identifier] = entry }
                for identifier in remove {
                    guard let identifier = identifier.stringValue else { throw damaged("\(key).remove holds a non-string") }
                    map[identifier] = nil
                }
                maps[key] = map
            case "audit":
                try JournalReplay.applyAudit(value, to: &document, damaged: damaged)
            default:
                throw damaged("unknown member \"\(key)\"")
            }
        }
    }

    /// Puts what was taken out back into the document.
    mutating func finish(_ document: inout JSONObject) {
        if let path { document["path"] = .array(path) }
        for (key, map) in maps { document[key] = .object(map) }
        path = nil
        maps = [:]
    }
}
