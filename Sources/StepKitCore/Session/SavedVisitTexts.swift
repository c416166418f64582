import StepKitBase

/// The saved text of each visit of a session's path, kept from one save to the next, so that an
/// autosave after every call costs the encoding of what changed rather than of the whole history
/// (at 5,000 visits, rebuilding and dumping every visit was most of a call's time).
///
/// A kept text is used only while the visit is equal to the one it was made from, so it can
/// never be stale; a visit whose active step is running is encoded afresh each time (its
/// elapsed time moves with the clock). Each visit is dumped on its own, so its reals are written
/// with the digits it needs (`JSONWriter`), and every save goes through here, so
/// `stepkit_session_save` and the autosave write the same text.
final class SavedVisitTexts: Sendable {
    private struct Entry {
        var visit: Visit
        var text: String
    }

    private let entries = Locked<[Entry]>([])

    /// The path as JSON text, `[visit,visit,...]`.
    func pathText(of s: Session) -> String {
        entries.withLock { entries in
            if entries.count > s.path.count { entries.removeLast(entries.count - s.path.count) }
            var parts: [String] = []
            parts.reserveCapacity(s.path.count)
            for (i, visit) in s.path.enumerated() {
                if i < entries.count, entries[i].visit == visit {
                    parts.append(entries[i].text)
                    continue
                }
                let text = JSONWriter.string(Restoration.encode(visit, in: s))
                parts.append(text)
                guard visit.active?.status != .running else { continue }
                if i < entries.count {
                    entries[i] = Entry(visit: visit, text: text)
                } else if i == entries.count {
                    entries.append(Entry(visit: visit, text: text))
                }
            }
            return "[" + parts.joined(separator: ",") + "]"
        }
    }
}
