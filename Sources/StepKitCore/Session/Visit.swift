import StepKitBase

/// One presentation of a step on the session's path. A step visited twice (a loop, or after
/// going back and forward again) has two visits; going back removes the last one.
struct Visit: Sendable, Equatable {
    let stepIndex: Int
    var startDate: Int64
    /// Set when the visit is left going forward (or the task finishes on it).
    var endDate: Int64?
    /// The answer as it was when the visit was left, so each visit's result keeps its own
    /// answer even when a later visit of the same step changes it. Nil while current.
    var answer: JSON?
    /// Left with `skip`: its result records no answer.
    var skipped: Bool = false
    /// The form items hidden by their `visibleWhen` when the visit was left: not in its result.
    var hiddenItems: [String] = []
    /// Whether the step's modifier applied when the step was reached.
    var modified: Bool = false
    /// For an active step: its timer, prompts, recorders and game, read and changed as if inline.
    /// Kept behind one reference (`ActiveRunBox`): a run with its game is several times the size
    /// of the rest of a visit, and every visit of the path paid for it (the path's array copies
    /// whole visits as it grows), though nearly every step is not active.
    var active: ActiveRun? {
        get { activeRun.box?.run }
        _modify {
            // Changed in place, in the box (copied first when another visit shares it: a session
            // kept for autosave, a trial). A run set to nil leaves an empty box, which reads and
            // compares as no run. No local copy of the run is yielded: moved in and out, it cost
            // a copy of the whole run, or a heap frame for the accessor, on every change.
            if activeRun.box == nil {
                activeRun.box = ActiveRunBox(nil)
            } else if !isKnownUniquelyReferenced(&activeRun.box!) {
                activeRun.box = ActiveRunBox(activeRun.box!.run)
            }
            yield &activeRun.box!.run
        }
    }
    private var activeRun = ActiveRunSlot()

    /// Whether the visit's active run holds a game, read where the box keeps it (`active`'s
    /// getter copies the whole run, game included).
    var hasGame: Bool { activeRun.box?.hasGame ?? false }
    /// How navigation got here: the rule, branch and skip rules involved (for authors debugging
    /// a task).
    var arrival: Arrival = .saved(.null)
    /// The time counted on this visit (milliseconds; while it is the current one, up to
    /// `TimeCount.since`): the result's `timeSpent` and the step's time limit.
    var spent: Int64 = 0
    /// For a step of a repeating section: the instance it is shown in, from 0
    /// (`Session+StepBlocks.swift`); 0 for every other step.
    var instance: Int = 0

    init(stepIndex: Int, startDate: Int64, modified: Bool = false, arrival: Arrival = .saved(.null), instance: Int = 0) {
        self.stepIndex = stepIndex
        self.startDate = startDate
        self.modified = modified
        self.arrival = arrival
        self.instance = instance
    }
}

/// Why a task run ended (ResearchKit's `ORKTaskFinishReason`).
package enum FinishReason: String, Sendable, CaseIterable {
    case completed, saved, discarded, failed, earlyTermination
    /// A time limit ran out (`timeLimit`; `Session+TimeLimits.swift`).
    case timedOut
}

/// The reasons a host may finish a run with (`stepkit_session_finish`): every reason but
/// `timedOut`, which only the session's own time limits give.
package enum HostFinishReason: String, Sendable, CaseIterable {
    case completed, saved, discarded, failed, earlyTermination

    package var reason: FinishReason { FinishReason(rawValue: rawValue) ?? .failed }
}

/// A visit's active run behind a reference (none until the run is first set), changed only
/// while the visit holds the only one (`Visit.active`), so visits stay values.
private struct ActiveRunSlot: Sendable, Equatable {
    var box: ActiveRunBox?

    /// Equal when they hold equal runs; no box and an empty one alike hold none.
    static func == (a: ActiveRunSlot, b: ActiveRunSlot) -> Bool { a.box === b.box || a.box?.run == b.box?.run }
}

private final class ActiveRunBox: @unchecked Sendable {
    /// Not checked for exclusive access at run time: the box is changed only through
    /// `Visit.active`'s modify accessor, while the visit holds the only reference, and a visit
    /// is changed only under its session's lock. Checked, each read and change of a game's run
    /// called the runtime's access tracking (about 80 instructions, several times an input).
    @exclusivity(unchecked) var run: ActiveRun?

    var hasGame: Bool { run?.game != nil }

    init(_ run: ActiveRun?) { self.run = run }
}
