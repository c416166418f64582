/// One run of a task: where the participant is, what they answered, and when.
///
/// A value type: an operation works on a copy and the caller keeps the copy only when the
/// operation succeeds, so a rejected call leaves the session exactly as it was.
struct Session: Sendable {
    let task: Task
    let taskRunUUID: String
    var clock: Clock
    var startDate: Int64
    var endDate: Int64?
    var finishReason: FinishReason?
    /// The visits in order; never empty. The last one is the current step.
    var path: [Visit]
    /// The latest answer of every step that has one, on the path or not (kept to prefill a
    /// step visited again). A form's answer is an object of its items' answers.
    var answers: [Int: JSON] = [:]
    /// Whether anything happened yet (an answer or a move), which decides whether a new clock
    /// may re-read the start time.
    var touched = false

    init(task: Task, options: SessionOptions, clock: Clock = .system) {
        self.task = task
        self.taskRunUUID = options.taskRunUUID ?? UUIDText.random()
        self.clock = clock
        let now = clock.nowMilliseconds
        self.startDate = now
        self.path = [Visit(stepIndex: 0, startDate: now)]
    }

    var isFinished: Bool { finishReason != nil }

    /// The current visit. `path` is never empty: it starts with the first step and going back
    /// stops at it.
    var current: Visit {
        path.last ?? Visit(stepIndex: 0, startDate: startDate)
    }

    var currentStep: Step? { task.step(at: current.stepIndex) }

    var now: Int64 { clock.nowMilliseconds }

    /// Replaces the clock; before anything has happened, the run starts at the new clock's time.
    mutating func setClock(_ clock: Clock) {
        self.clock = clock
        if !touched && !isFinished {
            let now = clock.nowMilliseconds
            startDate = now
            path = [Visit(stepIndex: current.stepIndex, startDate: now)]
        }
    }

    func stateError(_ code: String, _ message: String, problems: [Problem] = []) -> StepKitError {
        StepKitError(.state, problems: problems.isEmpty ? [Problem(code: code, message: message, path: .root)] : problems)
    }

    func requireInProgress() throws(StepKitError) {
        if let finishReason {
            throw stateError("finished", "The task has finished (\(finishReason.rawValue)); start a new session to run it again.")
        }
    }
}
