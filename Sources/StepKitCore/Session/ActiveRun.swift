import StepKitBase

/// The life of an active step's visit (ResearchKit's `ORKActiveStepViewController`): prepared,
/// running, suspended, finished; how much of its own time has passed; which prompts are done;
/// what its recorders wrote.
struct ActiveRun: Sendable, Equatable {
    enum Status: String, Sendable { case prepared, running, suspended, finished }

    var status: Status = .prepared
    /// The step's own time before `runningSince`, in milliseconds.
    var elapsedBefore: Int64 = 0
    /// When the step last started or resumed running (nil unless running).
    var runningSince: Int64?
    var startDate: Int64?
    var finishDate: Int64?
    /// How many of the step's marks (countdown, halfway, end) have fired.
    var marksFired = 0
    var recorders: [RecorderRun] = []
    /// A game step's game (`Games/`), from when the step starts.
    var game: GameRun?

    /// The step's own time at `now`: running time only, suspensions excluded. Running time is how
    /// far the clock has moved past `runningSince`; while the clock is behind that moment (it was
    /// set back) it adds nothing, never a negative time. The sum saturates at `Int64.max`.
    func elapsed(at now: Int64) -> Int64 {
        guard status == .running, let since = runningSince else { return elapsedBefore }
        return elapsedBefore.addingSaturated(max(now.subtractingSaturated(since), 0))
    }
}

/// One recorder's output during one run: the files it wrote, ResearchKit's `ORKFileResult`s.
struct RecorderRun: Sendable, Equatable {
    enum Status: String, Sendable { case running, stopped, failed }

    let identifier: String
    let type: String
    var status: Status = .running
    var files: [RecordedFile] = []
    var samples = 0
    var failure: String?

    /// The recorder stops for good, for `reason` (the file result's and the event's message).
    mutating func fail(_ reason: String?) {
        status = .failed
        failure = reason
    }
}

/// A file of samples, `{"items": [...]}`, kept valid JSON after every batch.
struct RecordedFile: Sendable, Equatable {
    let fileName: String
    var startDate: Int64
    var endDate: Int64?
    var bytes: Int64 = 0
    var items = 0
}
