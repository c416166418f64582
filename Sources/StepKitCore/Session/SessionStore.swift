import StepKitBase

/// One live session with what lasts from call to call: the session behind its own lock (calls
/// from several threads run one at a time), its autosave file and the saved text of its visits.
///
/// The autosave transaction lives here, not at the C boundary, because "a call that could not be
/// saved changes nothing" is a rule of sessions: any caller — the exported functions, a Swift
/// test — gets it by going through `transaction`.
package final class SessionStore: Sendable {
    private let session: Locked<Session>
    /// The autosave file, claimed until the store goes (option "autosave").
    private let autosave: Autosave?
    /// The saved text of the path's visits, kept between saves (`Restoration.saveText`).
    private let savedVisits: SavedVisitTexts
    /// What the autosave file holds beyond its snapshot (changed only under the session's lock).
    private let journal: Locked<Journal?>

    /// The autosave file's journal: the digest its next record chains to, and the sizes that
    /// decide when a new snapshot replaces the records.
    private struct Journal {
        var head: String
        var snapshotBytes: Int
        var recordBytes: Int
    }

    /// Records may add up to the snapshot's size, and at least this much, before a new snapshot
    /// replaces them: the snapshot (whose cost grows with the history) is written once every
    /// so many calls, so a call costs its own change plus a share of a snapshot no larger than
    /// that change; restore replays at most this much beyond the snapshot.
    static let minimumJournalBytes = 64 * 1024

    /// Keeps `session`. With an autosave path, the path is claimed (no other live session may
    /// hold it: `autosaveInUse`) and the first save written before the store exists; a failure
    /// lets the claim go.
    package init(_ session: Session, autosavePath: String?) throws(StepKitError) {
        let visits = SavedVisitTexts()
        var autosave: Autosave?
        var journal: Journal?
        if let autosavePath {
            let claimed = try Autosave.claim(autosavePath)
            let (text, digest) = try Restoration.signedSaveText(session, visits: visits)
            try claimed.write(text)
            autosave = claimed
            journal = Journal(head: digest, snapshotBytes: text.utf8.count, recordBytes: 0)
        }
        self.session = Locked(session)
        self.autosave = autosave
        self.savedVisits = visits
        self.journal = Locked(journal)
    }

    /// A call of the C boundary (`SessionHandle.call`): `body` in a `transaction`, then, when
    /// `wantsState`, the new state written straight to text (`Session.writeState`, with the
    /// events the call produced, and any still queued, as its `events`) as a `malloc`'d C
    /// string, and those events. Events are built only when `recordingEvents`. Not generic, so
    /// the transaction under every call is specialized here: a generic method of this module is
    /// not specialized in the module above (docs/architecture.md, "Facts of this toolchain").
    package func call(recordingEvents: Bool, wantsState: Bool,
                      _ body: (inout Session) throws(StepKitError) -> Void) throws(StepKitError) -> (state: UnsafeMutablePointer<CChar>?, events: [JSON]) {
        guard wantsState else {
            let events = try transaction { (s: inout Session) throws(StepKitError) -> [JSON] in
                s.events.isRecording = recordingEvents
                defer { s.events.isRecording = true }
                try body(&s)
                // Nothing queued (with nobody listening, nearly always): nothing to take.
                return s.events.pending.isEmpty ? [] : s.takeEvents()
            }
            return (nil, events)
        }
        // Written inside the transaction (the state of the session the call left), freed with
        // `out` if the call or its autosave fails.
        var out = JSONOutput(capacity: 2048)
        let events = try transaction { (s: inout Session) throws(StepKitError) -> [JSON] in
            s.events.isRecording = recordingEvents
            defer { s.events.isRecording = true }
            try body(&s)
            let events = s.takeEvents()
            s.writeState(events: events, to: &out)
            return events
        }
        return (out.finish(), events)
    }

    /// The state as it is, as a `malloc`'d C string, changing nothing: no events are handed out
    /// and nothing is autosaved.
    package func state() -> UnsafeMutablePointer<CChar> {
        written { s, out in s.writeState(events: [], to: &out) }
    }

    /// Text `body` writes straight from the session under its lock (`Session.writeResult`: no
    /// value tree), as a `malloc`'d C string; changes nothing. Reals are written in after the
    /// lock is released.
    package func written(_ body: (borrowing Session, inout JSONOutput) -> Void) -> UnsafeMutablePointer<CChar> {
        var out = JSONOutput(capacity: 4096)
        session.withLock { (s: inout Session) in body(s, &out) }
        return out.finish()
    }

    /// Runs `body` on the session under its lock, changing nothing else.
    package func read<R: Sendable, E: Error>(_ body: (borrowing Session) throws(E) -> R) throws(E) -> R {
        try session.withLock { (s: inout Session) throws(E) -> R in try body(s) }
    }

    /// The restoration data, the same text the autosave writes as its snapshot.
    package func saveText() throws(StepKitError) -> String {
        try session.withLock { (s: inout Session) throws(StepKitError) -> String in
            // The audit chain is computed when it is first saved, and kept (`AuditTrail.seal`).
            try s.sealAudit()
            return try Restoration.saveText(s, visits: savedVisits)
        }
    }

    /// The audit trail from event `start`, its chain sealed (`Session.auditListing`).
    package func auditListing(from start: Int) throws(StepKitError) -> JSON {
        try session.withLock { (s: inout Session) throws(StepKitError) -> JSON in
            try s.sealAudit()
            return s.auditListing(from: start)
        }
    }

    /// Runs `body` on the session under its lock. The session's operations check everything
    /// before changing anything (see `Session`), so a rejected call changes nothing; working in
    /// place keeps a call's cost independent of how long the session's history is.
    ///
    /// With autosave, the change is made on a copy and kept only once the file is written: a
    /// call that could not be saved fails with STEPKIT_EIO and changes nothing, the recorder
    /// files it wrote to included (they are put back as the session records them).
    package func transaction<R: Sendable>(_ body: (inout Session) throws(StepKitError) -> R) throws(StepKitError) -> R {
        try session.withLock { (stored: inout Session) throws(StepKitError) -> R in
            guard let autosave else {
                do throws(StepKitError) { return try body(&stored) } catch {
                    #if STEPKIT_HARDENING
                    PlantedBug.afterRefusal(&stored)
                    #endif
                    throw error.localized(stored.messageCatalogue)
                }
            }
            var copy = stored
            let result: R
            do throws(StepKitError) { result = try body(&copy) } catch { throw error.localized(stored.messageCatalogue) }
            do throws(StepKitError) {
                try copy.sealAudit()
                try save(copy, after: stored, to: autosave)
            } catch {
                copy.undoRecorderWrites(back: stored)
                throw error
            }
            stored = copy
            return result
        }
    }

    /// Saves `new`, the session the file holds being `old`: a record of the change appended to
    /// the journal (`Restoration+Journal.swift`); nothing if nothing saved changed and the file is
    /// still as written; a new snapshot replacing the file when the journal has outgrown its
    /// snapshot, or the file is not the one this session wrote (removed, replaced: written again,
    /// or the call fails as a first save there would).
    private func save(_ new: Session, after old: Session, to autosave: Autosave) throws(StepKitError) {
        try journal.withLock { (journal: inout Journal?) throws(StepKitError) in
            if let current = journal {
                if let change = Restoration.change(from: old, to: new) {
                    var (line, digest) = try Restoration.journalRecord(change, previous: current.head, key: new.options.integrityKey)
                    // Right after a snapshot the file ends with its closing brace: the first
                    // record starts a new line.
                    if current.recordBytes == 0 { line.insert(0x0A, at: 0) }
                    if current.recordBytes + line.count <= max(current.snapshotBytes, SessionStore.minimumJournalBytes),
                       try autosave.append(line) {
                        journal = Journal(head: digest, snapshotBytes: current.snapshotBytes, recordBytes: current.recordBytes + line.count)
                        return
                    }
                } else if autosave.holdsFileAsWritten() {
                    return
                }
            }
            let (text, digest) = try Restoration.signedSaveText(new, visits: savedVisits)
            try autosave.write(text)
            journal = Journal(head: digest, snapshotBytes: text.utf8.count, recordBytes: 0)
        }
    }
}
