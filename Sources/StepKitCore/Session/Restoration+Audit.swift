import StepKitBase

/// The audit trail in restoration data: the member `audit`, `{"count": n, "events": [...]}`,
/// every event sealed into the chain (`AuditTrail`); how an autosave journal record appends to
/// it; and how restore reads it back and names the first event that is not as it was written.
extension Restoration {
    /// The member as saved. Events not sealed yet (a session saved without going through its
    /// store) are sealed on a copy.
    static func auditMember(of s: Session) throws(StepKitError) -> JSON {
        var trail = s.audit
        try trail.seal(runUUID: s.taskRunUUID, key: s.options.integrityKey, names: s.task)
        return .object(["count": .int(Int64(trail.count)), "events": .array(trail.savedEvents(names: s.task))])
    }

    /// A journal record's change to the trail, `{"from": n, "events": [...]}`: the events `new`
    /// recorded after the `old.count` the file holds (the trail only grows). Nil if none. Only
    /// the added events are written out, so a record costs the same on a long trail.
    static func auditChange(from old: Session, to new: Session) -> JSON? {
        guard new.audit.count > old.audit.count else { return nil }
        let added = new.audit.savedEvents(from: old.audit.count, names: new.task)
        return .object(["from": .int(Int64(old.audit.count)), "events": .array(added)])
    }

    /// The saved trail back (a document without `audit` was saved before the trail existed: an
    /// empty one). Damage is refused, naming the event.
    static func decodeAudit(_ d: JSONObject) throws(StepKitError) -> AuditTrail {
        guard let member = d["audit"] else { return AuditTrail() }
        guard let object = member.objectValue, let items = object["events"]?.arrayValue, case .int? = object["count"],
              object.keys.allSatisfy({ $0 == "count" || $0 == "events" }) else {
            throw refuse("damaged", "The saved audit trail is not {count, events}.", .root.key("audit"))
        }
        var events: [AuditTrail.Event] = []
        events.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard let event = AuditTrail.Event(saved: item) else {
                throw refuse("auditDamaged", "Audit event \(i) is not an audit event.", .root.key("audit").key("events").index(i))
            }
            if let last = events.last, event.date < last.date {
                throw refuse("auditTampered", "Audit event \(i) is dated before the event before it: the trail was reordered.",
                             .root.key("audit").key("events").index(i))
            }
            events.append(event)
        }
        return AuditTrail(saved: events)
    }

    /// Checks the trail's chain, naming the first event that is not as written: changed, moved,
    /// or following one that was removed (its digest fails), or the first one cut off (fewer
    /// events than `count`). Run when the document's own digest fails, so the refusal says
    /// which event; the document's digest covers the trail otherwise.
    static func checkAuditChain(_ d: JSONObject, runUUID: String?, key: String?) throws(StepKitError) {
        guard let object = d["audit"]?.objectValue, let items = object["events"]?.arrayValue else { return }
        // Each event is checked against the digest saved before it: an edit fails that event
        // only, a removal or a move the event after the gap. When no event holds, the key is
        // wrong (or the run's identity was changed): that is the document's refusal, not an
        // event's.
        var previous = runUUID ?? ""
        var firstBad: Int?
        var anyHolds = false
        for (i, item) in items.enumerated() {
            let path = JSONPath.root.key("audit").key("events").index(i)
            guard let event = AuditTrail.Event(saved: item), let digest = event.digest else {
                throw refuse("auditDamaged", "Audit event \(i) is not an audit event.", path)
            }
            if try Digest.equal(try AuditTrail.digest(of: event, previous: previous, key: key), digest) {
                anyHolds = true
            } else if firstBad == nil {
                firstBad = i
            }
            previous = digest
            if firstBad != nil && anyHolds { break }
        }
        if let firstBad {
            guard anyHolds else { return }
            throw refuse("auditTampered", "Audit event \(firstBad) failed the trail's chain: it was changed or moved, or an event before it was removed\(firstBad == 0 ? ", or the run's taskRunUUID (which the chain starts from) was changed" : "").",
                         .root.key("audit").key("events").index(firstBad))
        }
        if case .int(let count)? = object["count"], count != Int64(items.count) {
            let first = max(0, min(Int64(items.count), count))
            throw refuse("auditTampered", "The audit trail holds \(items.count) events but was saved with \(count): it was cut off at event \(first).",
                         .root.key("audit").key("events").index(Int(first)))
        }
    }
}

extension JournalReplay {
    /// Appends a journal record's audit events to the document's trail.
    static func applyAudit(_ value: JSON, to document: inout JSONObject, damaged: (String) -> StepKitError) throws(StepKitError) {
        guard let change = value.objectValue, case .int(let from)? = change["from"], let added = change["events"]?.arrayValue else {
            throw damaged("audit is not {from, events}")
        }
        var events = document["audit"]?.objectValue?["events"]?.arrayValue ?? []
        guard from == Int64(events.count) else { throw damaged("audit.from is not the end of the trail") }
        events.append(contentsOf: added)
        document["audit"] = .object(["count": .int(Int64(events.count)), "events": .array(events)])
    }
}
