/// One live session with what lasts from call to call: the session behind its own lock (calls
/// from several threads run one at a time), its autosave file and the saved text of its visits.
///
/// The autosave transaction lives here, not at the C boundary, because "a call that could not be
/// saved changes nothing" is a rule of sessions: any caller — the exported functions, a Swift
/// test — gets it by going through `transaction`.
final class SessionStore: Sendable {
    private let session: Locked<Session>
    /// The autosave file, claimed until the store goes (option "autosave").
    private let autosave: Autosave?
    /// The saved text of the path's visits, kept between saves (`Restoration.saveText`).
    private let savedVisits: SavedVisitTexts

    /// Keeps `session`. With an autosave path, the path is claimed (no other live session may
    /// hold it: `autosaveInUse`) and the first save written before the store exists; a failure
    /// lets the claim go.
    init(_ session: Session, autosavePath: String?) throws(StepKitError) {
        let visits = SavedVisitTexts()
        var autosave: Autosave?
        if let autosavePath {
            let claimed = try Autosave.claim(autosavePath)
            try claimed.write(Restoration.saveText(session, visits: visits))
            autosave = claimed
        }
        self.session = Locked(session)
        self.autosave = autosave
        self.savedVisits = visits
    }

    /// Runs `body` on the session under its lock, changing nothing else.
    func read<R: Sendable>(_ body: (borrowing Session) -> R) -> R {
        session.withLock { body($0) }
    }

    /// The restoration data, the same text the autosave writes.
    func saveText() -> String {
        read { Restoration.saveText($0, visits: savedVisits) }
    }

    /// Runs `body` on the session under its lock. The session's operations check everything
    /// before changing anything (see `Session`), so a rejected call changes nothing; working in
    /// place keeps a call's cost independent of how long the session's history is.
    ///
    /// With autosave, the change is made on a copy and kept only once the file is written: a
    /// call that could not be saved fails with STEPKIT_EIO and changes nothing, the recorder
    /// files it wrote to included (they are put back as the session records them).
    func transaction<R: Sendable>(_ body: (inout Session) throws(StepKitError) -> R) throws(StepKitError) -> R {
        try session.withLock { (stored: inout Session) throws(StepKitError) -> R in
            guard let autosave else { return try body(&stored) }
            var copy = stored
            let result = try body(&copy)
            do throws(StepKitError) {
                try autosave.write(Restoration.saveText(copy, visits: savedVisits))
            } catch {
                copy.undoRecorderWrites(back: stored)
                throw error
            }
            stored = copy
            return result
        }
    }
}
