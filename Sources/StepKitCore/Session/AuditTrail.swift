import StepKitBase

/// The audit trail: one dated event for every accepted call that changed the session (an answer
/// set or cleared, a move, a suspend or resume, a restore, a migration), with the host's `actor`
/// and `reason` when it gave them. A refused call records nothing: every recording call records
/// after its last check, as it changes the session.
///
/// Recording is cheap on purpose: an event is kept as a `Record` of 32 bytes (its date, its kind,
/// and small references: the steps by their index in the task, the actor and reason by their
/// place in a table that grows only when the host names someone else, an answer change by the
/// place of its two values in `values`), so recording a move is the append of that small value,
/// with no retain; an answer change also appends the two values, kept by reference as the
/// session holds them (`values` is a plain `[JSON]`, so the first answer event of a process
/// instantiates no new generic type). The events
/// as saved and listed (`Event`) are built from the records only when the trail is saved, listed
/// or autosaved, and so is the chain that makes the trail tamper-evident (`seal`): a session that
/// is never saved never loads libcrypto for it.
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

    /// An event as saved and listed, with its names and values written out (built from a
    /// `Record` by `event(_:names:)`, or read back from restoration data).
    struct Event: Sendable, Equatable {
        var kind: Kind
        var date: Int64
        /// The step the call acted on (the step left, for a move), and the step a move arrived
        /// at (nil: the run ended).
        var step, to: String?
        /// An answer's value before and after (nil: none / cleared).
        var old, new: JSON?
        /// The finish reason, the control operation, or what a migration came from.
        var detail: String?
        /// Who made the call and why, when the host said.
        var actor, reason: String?
        /// The chain digest, once sealed (`AuditTrail.seal`); saved events always carry one.
        var digest: String?
    }

    /// A reference to a text of an event: `none`, a step of the session's task by its index
    /// (`0...`), or a text of the trail's own `texts` (`-2`, `-3`, ...: a step named in saved
    /// data, which may be of another task version, or a `detail`).
    typealias TextRef = Int32
    static let none: TextRef = -1

    /// An event as kept: 32 bytes, no reference counted member.
    struct Record: Sendable, Equatable {
        var date: Int64
        /// The step acted on (left, for a move), the step a move arrived at, the detail.
        var step, to, detail: TextRef
        /// The places of the actor and reason in `contexts` (`none`: nobody named) and of an
        /// answer's old value in `values`, its new value following (`none`: not an answer event).
        var context, change: Int32
        var kind: Kind
    }

    /// Who and why, as the host said; one entry for every time it said so.
    struct Context: Sendable, Equatable {
        var actor: String?
        var reason: String?
    }

    /// Whether new events are recorded (session option `"audit": false` turns it off; a trail
    /// restored with it off is kept as it was, and grows no further). Not saved.
    var isOn = true
    private(set) var records: [Record] = []
    /// The digests of the first `digests.count` records (the chain sealed so far).
    private(set) var digests: [String] = []
    private var texts: [String] = []
    private var contexts: [Context] = []
    /// Each answer event's value before and after, in turn (`null`: none / cleared).
    private var values: [JSON] = []
    /// Who and why, as the host last said (`stepkit_session_set_audit_context`, or the option
    /// `audit`'s `actor` and `reason`), given to every event recorded after. Not saved.
    private var context: Int32 = AuditTrail.none
    /// A restore, dated: recorded just before the next event, so restoration data saved again
    /// with nothing changed is the same text (listed at its place meanwhile: `listed`).
    var pendingRestore: Int64?

    init() {}

    /// The trail as restoration data saved it (every event sealed): each step and detail is
    /// kept as the text saved, since the steps may be of another task version (a migration).
    init(saved: [Event]) {
        records.reserveCapacity(saved.count)
        digests.reserveCapacity(saved.count)
        for event in saved {
            if event.actor != nil || event.reason != nil {
                setContext(actor: event.actor, reason: event.reason)
            } else {
                context = AuditTrail.none
            }
            append(event.kind, at: event.date, step: text(event.step), to: text(event.to), detail: text(event.detail),
                   old: event.old, new: event.new)
            digests.append(event.digest ?? "")
        }
        context = AuditTrail.none
    }

    /// Takes the host's switch, actor and reason from the session options.
    mutating func configure(_ options: AuditOptions) {
        isOn = options.enabled
        setContext(actor: options.actor, reason: options.reason)
    }

    /// Who and why from now on (nil, nil: nobody named).
    mutating func setContext(actor: String?, reason: String?) {
        guard actor != nil || reason != nil else { context = AuditTrail.none; return }
        let new = Context(actor: actor, reason: reason)
        if let last = contexts.last, last == new {
            context = Int32(contexts.count - 1)
        } else {
            contexts.append(new)
            context = Int32(contexts.count - 1)
        }
    }

    var actor: String? { currentContext.actor }
    var reason: String? { currentContext.reason }
    private var currentContext: Context { context == AuditTrail.none ? Context() : contexts[Int(context)] }

    var count: Int { records.count }

    /// A step of the session's task, by its index (nil: none).
    static func step(_ index: Int?) -> TextRef { index.map { TextRef(truncatingIfNeeded: $0) } ?? AuditTrail.none }

    /// A text kept by the trail itself (a detail, or a step named in saved data).
    private mutating func text(_ text: String?) -> TextRef {
        guard let text else { return AuditTrail.none }
        texts.append(text)
        return TextRef(-1 - texts.count)
    }

    private func name(_ ref: TextRef, in task: Task) -> String? {
        if ref >= 0 { return task.step(at: Int(ref))?.identifier }
        if ref == AuditTrail.none { return nil }
        return texts[Int(-2 - ref)]
    }

    /// Records an event. `step` and `to` are indices of the session's task's steps.
    mutating func record(_ kind: Kind, at date: Int64, step: Int? = nil, to: Int? = nil, old: JSON? = nil, new: JSON? = nil,
                         detail: String? = nil) {
        guard isOn else { return }
        if let restored = pendingRestore {
            pendingRestore = nil
            append(.restored, at: max(restored, records.last?.date ?? restored), step: AuditTrail.none, to: AuditTrail.none,
                   detail: AuditTrail.none, old: nil, new: nil)
        }
        // The session's time may go back with a new host clock; the trail's order may not.
        append(kind, at: max(date, records.last?.date ?? date), step: AuditTrail.step(step), to: AuditTrail.step(to),
               detail: text(detail), old: old, new: new)
    }

    private mutating func append(_ kind: Kind, at date: Int64, step: TextRef, to: TextRef, detail: TextRef, old: JSON?, new: JSON?) {
        var change = AuditTrail.none
        if kind == .answerSet || kind == .answerCleared {
            change = Int32(values.count)
            values.append(old ?? .null)
            values.append(new ?? .null)
        }
        records.append(Record(date: date, step: step, to: to, detail: detail, context: context, change: change, kind: kind))
    }

    /// Drops every event (a run started over by a new clock before anything happened).
    mutating func removeAll() {
        records = []
        digests = []
        texts = []
        values = []
    }

    /// Event `i` written out, its steps named by `task` (the session's), with its digest if sealed.
    func event(_ i: Int, names task: Task) -> Event {
        let r = records[i]
        let who = r.context == AuditTrail.none ? Context() : contexts[Int(r.context)]
        var old: JSON?, new: JSON?
        if r.change != AuditTrail.none {
            old = values[Int(r.change)]
            new = values[Int(r.change) + 1]
            if old == .null { old = nil }
            if new == .null { new = nil }
        }
        return Event(kind: r.kind, date: r.date, step: name(r.step, in: task), to: name(r.to, in: task), old: old, new: new,
                     detail: name(r.detail, in: task), actor: who.actor, reason: who.reason,
                     digest: i < digests.count ? digests[i] : nil)
    }

    /// Every event written out (the tests read them so).
    func events(names task: Task) -> [Event] { records.indices.map { event($0, names: task) } }

    /// Computes the digests the chain still lacks. Idempotent: a digest depends only on the
    /// events before it, the run and the key.
    mutating func seal(runUUID: String, key: String?, names task: Task) throws(StepKitError) {
        guard digests.count < records.count else { return }
        var previous = digests.last ?? runUUID
        for i in digests.count..<records.count {
            let digest = try AuditTrail.digest(of: event(i, names: task), previous: previous, key: key)
            digests.append(digest)
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
    func listed(from start: Int, names task: Task) -> [JSON] {
        var pending: Event?
        if isOn, let restored = pendingRestore {
            pending = Event(kind: .restored, date: max(restored, records.last?.date ?? restored), actor: actor, reason: reason)
        }
        let total = records.count + (pending == nil ? 0 : 1)
        guard start < total else { return [] }
        return (start..<total).map { i in
            let event = i < records.count ? self.event(i, names: task) : pending!
            var object = JSONObject()
            object["index"] = .int(Int64(i))
            object["type"] = .string(event.kind.rawValue)
            object["date"] = .string(CivilTime.iso8601(milliseconds: event.date))
            for (key, value) in event.saved.objectValue?.entries ?? JSONObject().entries where key != "type" && key != "date" {
                object[key] = value
            }
            return .object(object)
        }
    }

    /// The events from `start` as restoration data saves them (`audit.events`).
    func savedEvents(from start: Int = 0, names task: Task) -> [JSON] {
        (min(start, records.count)..<records.count).map { event($0, names: task).saved }
    }

    /// Checks that the references are in their tables, that the sealed events are a prefix of
    /// the trail, and that every date is no earlier than the one before. Debug builds only.
    func _checkInvariants() {
        #if DEBUG
        precondition(digests.count <= records.count, "the sealed events are a prefix of the trail")
        precondition(context == AuditTrail.none || contexts.indices.contains(Int(context)), "the current context is in the table")
        for (i, record) in records.enumerated() {
            if i > 0 { precondition(record.date >= records[i - 1].date, "event \(i) is dated no earlier than the one before") }
            for ref in [record.step, record.to, record.detail] where ref < AuditTrail.none {
                precondition(texts.indices.contains(Int(-2 - ref)), "event \(i): its texts are in the table")
            }
            precondition(record.context == AuditTrail.none || contexts.indices.contains(Int(record.context)), "event \(i): its context is in the table")
            precondition((record.change != AuditTrail.none) == (record.kind == .answerSet || record.kind == .answerCleared)
                         && (record.change == AuditTrail.none || values.indices.contains(Int(record.change) + 1)),
                         "event \(i): an answer event, and only one, has its values")
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
