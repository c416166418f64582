/// Events: what a ResearchKit delegate would hear, for the host to act on (show, speak, play,
/// start or stop a sensor). Each is `{"type": ..., "date": ..., ...}`, queued in order and handed
/// out by the next call's output and the event callback.
extension Session {
    /// Queues an event, unless nobody will hear it (`recordsEvents` is off: a call with no output
    /// and no event callback). Inlined, with its fields and its date computed only when it is
    /// queued, so an event nobody asked for costs one test and builds nothing: building them was
    /// half of a step with no output (`benchmarks/README.md`).
    @inline(__always)
    mutating func emit(_ type: String, _ fields: @autoclosure () -> KeyValuePairs<String, JSON> = [:], at time: Int64? = nil) {
        guard recordsEvents else { return }
        appendEvent(type, fields(), at: time ?? now)
    }

    /// Builds the event and queues it: `type`, `date`, then the fields, whose keys are written
    /// in the source and never `type` or `date` (checked in debug builds), so nothing is looked up.
    @inline(never)
    mutating func appendEvent(_ type: String, _ fields: KeyValuePairs<String, JSON>, at time: Int64) {
        var keys: [String] = []
        var values: [JSON] = []
        keys.reserveCapacity(2 + fields.count)
        values.reserveCapacity(2 + fields.count)
        keys.append("type")
        values.append(.string(type))
        keys.append("date")
        values.append(.string(CivilTime.iso8601(milliseconds: time)))
        for (key, value) in fields {
            keys.append(key)
            values.append(value)
        }
        pendingEvents.append(.object(JSONObject(distinctKeys: keys, values: values)))
    }

    /// The events queued since the last call, in order; the queue is emptied.
    mutating func takeEvents() -> [JSON] {
        defer { pendingEvents = [] }
        return pendingEvents
    }

    /// A step is shown: ResearchKit's `stepViewControllerWillAppear` and step change.
    mutating func stepAppeared(previous: String?, at time: Int64) {
        guard recordsEvents, let step = currentStep else { return }
        emit("stepWillAppear", ["step": .string(step.identifier)], at: time)
        emit("stepDidChange", ["step": .string(step.identifier), "previous": .string(previous)], at: time)
    }
}
