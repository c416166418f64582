import StepKitBase

/// Events not yet handed to the host; every call's output takes them, in order (see
/// `Session+Events.swift` for what they are).
package struct EventQueue: Sendable {
    private(set) var pending: [JSON] = []
    /// Whether events are queued at all: off only during a call whose events nobody will see (no
    /// output asked for and no event callback: `SessionHandle.call`), so none is built. Not saved.
    package var isRecording = true
    /// The latest date an event queued in this run was given (milliseconds; `.min`: none), so a
    /// time limit found run out late (by a tick after other calls) is never dated before what the
    /// host was already told. Not saved: a restored run dates nothing before its restore.
    private(set) var latestDate: Int64 = .min

    /// Queues `{"type": type, "date": date, ...fields}`. The fields' keys are written in the
    /// source and never `type` or `date` (checked in debug builds), so nothing is looked up.
    @inline(never)
    mutating func append(_ type: String, at time: Int64, _ fields: KeyValuePairs<String, JSON>) {
        latestDate = max(latestDate, time)
        let date = CivilTime.iso8601(milliseconds: time)
        var keys: [String] = []
        var values: [JSON] = []
        keys.reserveCapacity(2 + fields.count)
        values.reserveCapacity(2 + fields.count)
        keys.append("type")
        values.append(.string(type))
        keys.append("date")
        values.append(.string(date))
        for (key, value) in fields {
            keys.append(key)
            values.append(value)
        }
        pending.append(.object(JSONObject(distinctKeys: keys, values: values)))
    }

    /// Drops every queued event (a run started over by a new clock).
    mutating func removeAll() {
        pending = []
        latestDate = .min
    }

    /// The events queued since the last call, in order; the queue is emptied.
    mutating func take() -> [JSON] {
        defer { pending = [] }
        return pending
    }

    /// Checks that every queued event is an object that starts with its string `type` and
    /// `date`. Debug builds only.
    func _checkInvariants() {
        #if DEBUG
        for event in pending {
            guard case .object(let object) = event else { preconditionFailure("an event is an object") }
            let keys = object.keys
            precondition(keys.count >= 2 && keys[0] == "type" && keys[1] == "date", "an event starts with its type and date")
            precondition(object["type"]?.stringValue != nil && object["date"]?.stringValue != nil, "an event's type and date are strings")
        }
        #endif
    }
}
