import StepKitBase

/// Events: what a ResearchKit delegate would hear, for the host to act on (show, speak, play,
/// start or stop a sensor). Each is `{"type": ..., "date": ..., ...}`, queued in order and handed
/// out by the next call's output and the event callback.
extension Session {
    /// Queues an event, unless nobody will hear it (`EventQueue.isRecording` is off: a call with
    /// no output and no event callback). Inlined, with its fields and its date computed only when
    /// it is queued, so an event nobody asked for costs one test and builds nothing: building
    /// them was half of a step with no output (`benchmarks/README.md`).
    @inline(__always)
    mutating func emit(_ type: String, _ fields: @autoclosure () -> KeyValuePairs<String, JSON> = [:], at time: Int64? = nil) {
        guard events.isRecording else { return }
        events.append(type, at: time ?? now, fields())
    }

    /// Read as before the queue was a part of its own (the tests read them).
    var pendingEvents: [JSON] { events.pending }
    var recordsEvents: Bool {
        get { events.isRecording }
        set { events.isRecording = newValue }
    }

    /// The events queued since the last call, in order; the queue is emptied.
    package mutating func takeEvents() -> [JSON] { events.take() }

    /// A step is shown: ResearchKit's `stepViewControllerWillAppear` and step change.
    mutating func stepAppeared(previous: String?, at time: Int64) {
        guard events.isRecording, let step = currentStep else { return }
        emit("stepWillAppear", ["step": .string(step.identifier)], at: time)
        emit("stepDidChange", ["step": .string(step.identifier), "previous": .string(previous)], at: time)
    }
}
