import StepKitBase

/// The audit trail: one dated event for every accepted call that changed the session (an answer
/// set or cleared, a move, a suspend or resume, a restore, a migration), with the host's `actor`
/// and `reason` when it gave them. A refused call records nothing: every recording call records
/// after its last check, as it changes the session.
///
/// Recording is cheap on purpose (a step with no output costs an append of a small value; the
/// answers are kept by reference, as the session holds them): the chain that makes the trail
/// tamper-evident is computed only when the trail is saved, listed or autosaved (`seal`), so a
/// session that is never saved never loads libcrypto for it.
///
/// The chain: event i's digest signs the previous event's digest (the run's UUID for the first),
/// a newline and the event's saved text without its digest, with the restoration data's
/// algorithm (HMAC-SHA256 under `integrityKey`, else SHA-256). Restore checks it when the
/// restoration data's own digest fails, to name the first event that was changed, removed,
/// moved or cut off (`Restoration.checkAuditChain`).
struct AuditTrail: Sendable {
    /// What happened. The raw values are the `type` of the event as saved and listed.
    enum Kind: String, Sendable, CaseIterable {
        case answerSet, answerCleared, forward, backward, skip, finish, suspended, resumed, control, restored, migrated
    }

    struct Event: Sendable, Equatable {
        var kind: Kind
        var date: Int64
        /// The step the call acted on (the step left, for a move).
        var step: String?
        /// The step a move arrived at (nil: the run ended).
        var to: String?
        var old: JSON?
        var new: JSON?
        /// The finish reason, the control operation, or what a migration came from.
        var detail: String?
        var actor: String?
        var reason: String?
        /// The chain digest, once sealed (`AuditTrail.seal`); saved events always carry one.
        var digest: String?
    }

    /// Whether new events are recorded (session option `"audit": false` turns it off; a trail
    /// restored with it off is kept as it was, and grows no further). Not saved.
    var isOn = true
    /// Who and why, as the host last said (`stepkit_session_set_audit_context`, or the option
    /// `audit`'s `actor` and `reason`), given to every event recorded after. Not saved.
    var actor: String?
    var reason: String?
    private(set) var events: [Event] = []
    /// A restore, dated: recorded just before the next event, so restoration data saved again
    /// with nothing changed is the same text (listed at its place meanwhile: `listed`).
    var pendingRestore: Int64?

    init() {}

    init(saved: [Event]) { events = saved }

    /// Takes the host's switch, actor and reason from the session options.
    mutating func configure(_ options: AuditOptions) {
        isOn = options.enabled
        actor = options.actor
        reason = options.reason
    }

    var count: Int { events.count }

    mutating func record(_ kind: Kind, at date: Int64, step: String? = nil, to: String? = nil, old: JSON? = nil, new: JSON? = nil,
                         detail: String? = nil) {
        guard isOn else { return }
        if let restored = pendingRestore {
            pendingRestore = nil
            events.append(Event(kind: .restored, date: max(restored, events.last?.date ?? restored), actor: actor, reason: reason))
        }
        // The session's time may go back with a new host clock; the trail's order may not.
        let date = max(date, events.last?.date ?? date)
        events.append(Event(kind: kind, date: date, step: step, to: to, old: old, new: new, detail: detail, actor: actor, reason: reason))
    }

    /// Drops every event (a run started over by a new clock before anything happened).
    mutating func removeAll() { events = [] }

    /// Computes the digests the chain still lacks. Idempotent: a digest depends only on the
    /// events before it, the run and the key.
    mutating func seal(runUUID: String, key: String?) throws(StepKitError) {
        guard let first = events.firstIndex(where: { $0.digest == nil }) else { return }
        var previous = first == 0 ? runUUID : (events[first - 1].digest ?? "")
        for i in first..<events.count {
            let digest = try AuditTrail.digest(of: events[i], previous: previous, key: key)
            events[i].digest = digest
            previous = digest
        }
    }

    static func digest(of event: Event, previous: String, key: String?) throws(StepKitError) -> String {
        var unsigned = event
        unsigned.digest = nil
        return try Restoration.sign(previous + "\n" + JSONWriter.string(unsigned.saved), key: key).digest
    }

    /// The events from `start` as the host is given them: each with its `index` and an ISO 8601
    /// `date`; a restore not yet recorded is listed last (it keeps its index once recorded).
    func listed(from start: Int) -> [JSON] {
        var all = events
        if isOn, let restored = pendingRestore { all.append(Event(kind: .restored, date: max(restored, all.last?.date ?? restored), actor: actor, reason: reason)) }
        guard start < all.count else { return [] }
        return (start..<all.count).map { i in
            var object = JSONObject()
            object["index"] = .int(Int64(i))
            object["type"] = .string(all[i].kind.rawValue)
            object["date"] = .string(CivilTime.iso8601(milliseconds: all[i].date))
            for (key, value) in all[i].saved.objectValue?.entries ?? JSONObject().entries where key != "type" && key != "date" {
                object[key] = value
            }
            return .object(object)
        }
    }

    /// The events as restoration data saves them (`audit.events`).
    var savedEvents: [JSON] { events.map(\.saved) }

    /// Checks that the sealed events form a prefix (no unsealed event before a sealed one), and
    /// that every date is no earlier than the one before. Debug builds only.
    func _checkInvariants() {
        #if DEBUG
        var sealed = true
        for (i, event) in events.enumerated() {
            if event.digest == nil { sealed = false } else { precondition(sealed, "event \(i): the sealed events are a prefix of the trail") }
            if i > 0 { precondition(event.date >= events[i - 1].date, "event \(i) is dated no earlier than the one before") }
        }
        #endif
    }
}

extension AuditTrail.Event {
    /// The event as saved: `type`, `date` (milliseconds since 1970), the members it has, `digest`.
    var saved: JSON {
        var o = JSONObject()
        o["type"] = .string(kind.rawValue)
        o["date"] = .int(date)
        if let step { o["step"] = .string(step) }
        if kind == .forward || kind == .backward || kind == .skip { o["to"] = .string(to) }
        if kind == .answerSet || kind == .answerCleared {
            o["old"] = old ?? .null
            o["new"] = new ?? .null
        }
        if let detail { o["detail"] = .string(detail) }
        if let actor { o["actor"] = .string(actor) }
        if let reason { o["reason"] = .string(reason) }
        if let digest { o["digest"] = .string(digest) }
        return .object(o)
    }

    /// The members a saved event may have.
    static let savedKeys: Set<String> = ["type", "date", "step", "to", "old", "new", "detail", "actor", "reason", "digest"]

    /// A saved event back, or nil when it is not one (`Restoration.decodeAudit` says where).
    init?(saved: JSON) {
        guard let o = saved.objectValue, o.keys.allSatisfy(AuditTrail.Event.savedKeys.contains),
              let kind = o["type"]?.stringValue.flatMap(AuditTrail.Kind.init(rawValue:)), case .int(let date)? = o["date"],
              let digest = o["digest"]?.stringValue else { return nil }
        func text(_ key: String) -> String?? {
            switch o[key] {
            case nil, .null?: return .some(nil)
            case .string(let s)?: return .some(s)
            default: return nil
            }
        }
        guard let step = text("step"), let to = text("to"), let detail = text("detail"), let actor = text("actor"),
              let reason = text("reason") else { return nil }
        self.init(kind: kind, date: date, step: step, to: to, old: o["old"], new: o["new"], detail: detail, actor: actor,
                  reason: reason, digest: digest)
        if kind == .answerSet || kind == .answerCleared {
            if old == .null { old = nil }
            if new == .null { new = nil }
        }
    }
}

/// The session option `audit`: `false` switches the trail off; an object may say `enabled`,
/// `actor` and `reason` (given to every event until the host says otherwise), and, on a
/// restore, `recordRestore: false` (a server that restores for every request, where the restore
/// is how it works, not something that happened to the run).
struct AuditOptions: Sendable {
    var enabled = true
    var actor: String?
    var reason: String?
    var recordRestore = true

    static func parse(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> AuditOptions {
        var options = AuditOptions()
        if case .bool(let on) = value {
            options.enabled = on
        } else if let r = FieldReader(value, at: path, d, what: "audit options") {
            options.enabled = r.bool("enabled") ?? true
            options.actor = r.string("actor")
            options.reason = r.string("reason")
            options.recordRestore = r.bool("recordRestore") ?? true
            r.finish()
        }
        return options
    }
}
