import StepKitBase

/// What runs beside the steps: the recorders of the task's async actions (by action index, once
/// started), and ResearchKit's task-level suspend, while which no active step runs.
struct AsyncActions: Sendable {
    private(set) var runs: IndexTable<RecorderRun> = [:]
    var taskSuspended = false

    init() {}

    init(runs: IndexTable<RecorderRun>, taskSuspended: Bool) {
        self.runs = runs
        self.taskSuspended = taskSuspended
    }

    subscript(action index: Int) -> RecorderRun? {
        get { runs[index] }
        set { runs[index] = newValue }
    }

    var isEmpty: Bool { runs.isEmpty }

    /// Forgets every run (a run started over by a new clock).
    mutating func removeAll() { runs = [:] }

    /// Checks that each run is the recorder of the task's action at its index (`actions`).
    /// Debug builds only.
    func _checkInvariants(actions: [AsyncAction]) {
        #if DEBUG
        for (index, run) in runs {
            precondition(index >= 0 && index < actions.count, "a run for action \(index), past the task's")
            precondition(run.identifier == actions[index].recorder.identifier && run.type == actions[index].recorder.type,
                         "the run at \(index) is that action's recorder")
        }
        #endif
    }
}
