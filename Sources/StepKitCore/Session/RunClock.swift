import StepKitBase

/// A run's time: the clock it reads, when it started and when (and why) it ended, whether
/// anything has happened yet (which decides what a new clock may re-date), and the moment a
/// deadline came due while timers are processed.
struct RunClock: Sendable {
    /// The host's clock (or the system's).
    var source: Clock
    var startDate: Int64
    /// `override`, kept as a time and a flag that fits beside the other flags (an `Int64?`
    /// took 16 bytes of the session with its padding).
    private var overrideTime: Int64 = 0
    /// Set when the run ends, with `finishReason`.
    private(set) var endDate: Int64?
    private(set) var finishReason: FinishReason?
    /// Whether anything happened yet (an answer, a move, an active-step operation, a sample, a
    /// tick that fired something), which decides whether a new clock may re-read the start time.
    /// Anything happening also settles the clock (`anchor`).
    var touched = false {
        didSet { anchor = .settled }
    }
    /// What a new clock (`Session.setClock`) may still re-date, because nothing has happened on
    /// the current one yet. Not saved: a restored session starts `.restored`.
    var anchor: ClockAnchor = .opened
    private var overrides = false

    /// While timers are processed, the moment a deadline came due, so what follows it (the next
    /// step, its start) is dated when it happened, not when the host asked.
    var override: Int64? {
        get { overrides ? overrideTime : nil }
        set {
            overrides = newValue != nil
            overrideTime = newValue ?? 0
        }
    }

    init(_ source: Clock, startDate: Int64) {
        self.source = source
        self.startDate = startDate
    }

    /// A restored run's time: its saved dates, a new clock taking it over (`ClockAnchor.restored`).
    init(restoring source: Clock, startDate: Int64, endDate: Int64?, finishReason: FinishReason?, touched: Bool) {
        self.source = source
        self.startDate = startDate
        self.endDate = endDate
        self.finishReason = finishReason
        self.touched = touched
        self.anchor = .restored
    }

    var isFinished: Bool { finishReason != nil }

    /// The time now: the moment a deadline came due, or the clock's.
    var reading: Int64 { override ?? source.nowMilliseconds }

    mutating func finish(_ reason: FinishReason, at time: Int64) {
        endDate = time
        finishReason = reason
    }

    /// Checks that a run has an end date exactly when it has a finish reason, that it does not
    /// end before it starts, that an untouched opened clock is the only `.opened` one, and that
    /// no deadline's time is left over between calls. Debug builds only.
    func _checkInvariants() {
        #if DEBUG
        precondition((endDate == nil) == (finishReason == nil), "a run has an end date exactly when it has a finish reason")
        precondition((endDate ?? startDate) >= startDate, "a run ends no earlier than it starts")
        precondition(anchor != .opened || !touched, "a clock on which something happened is settled")
        precondition(override == nil, "a deadline's time is set only while timers are processed")
        #endif
    }
}

/// How a new clock (`Session.setClock`) treats a run on which nothing has happened yet.
enum ClockAnchor: Sendable, Equatable {
    /// Opened, nothing happened: a new clock restarts the run at its time.
    case opened
    /// Restored, nothing happened since: the first new clock takes over the restore (running
    /// timers go on from their saved elapsed time, counted from the new clock's time).
    case restored
    /// Something happened: a new clock only carries the run on.
    case settled
}
