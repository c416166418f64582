import StepKitBase

/// What the host does with the audit trail: says who acts and why, and reads the trail.
extension Session {
    /// Who makes the calls that follow and why (nil: no one named), until said otherwise
    /// (`stepkit_session_set_audit_context`). Changes nothing that is saved.
    package mutating func setAuditContext(actor: String?, reason: String?) {
        audit.setContext(actor: actor, reason: reason)
    }

    /// Computes the chain's missing digests (before a save, an autosave, or a listing).
    package mutating func sealAudit() throws(StepKitError) {
        try audit.seal(runUUID: taskRunUUID, key: options.integrityKey, names: task)
    }

    /// The trail from event `start` (`stepkit_session_audit`): `{"count": n, "events": [...]}`,
    /// `count` being the whole trail's length, so a host that streams asks next from `count`.
    package func auditListing(from start: Int) -> JSON {
        let events = audit.listed(from: max(0, start), names: task)
        return .object(["count": .int(Int64(audit.count + (audit.isOn && audit.pendingRestore != nil ? 1 : 0))),
                        "enabled": .bool(audit.isOn), "events": .array(events)])
    }

    /// Every event of the trail written out, as saved (with its digest once sealed).
    var auditEvents: [AuditTrail.Event] { audit.events(names: task) }
}
