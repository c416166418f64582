/// One run of a task: where the participant is, what they answered, and when.
///
/// Every mutating operation checks everything before it changes anything and throws only
/// before its first change, so a rejected call leaves the session exactly as it was (the tests
/// compare the state before and after each rejected call).
struct Session: Sendable {
    let task: Task
    let taskRunUUID: String
    /// The options this run was opened with that outlive the call (autosave, integrity key,
    /// prefill sources, other tasks' results as given), behind one reference: they never change
    /// during the run, and the session is copied whole (a bitwise copy for many a method call, a
    /// copy for every autosaved call), which inline they made twice as large (464 bytes).
    private let fixed: FixedOptions
    var options: SessionOptions { fixed.options }
    var external: ExternalResults { fixed.options.additionalTaskResults }
    var clock: Clock
    var startDate: Int64
    var endDate: Int64?
    var finishReason: FinishReason?
    /// The visits in order. Empty only when the task ended before showing any step (every step
    /// skipped by its rules); otherwise the last one is the current step.
    private(set) var path: [Visit] = []
    /// Per step: the position in `path` of its latest visit, so predicates find it in O(1).
    private(set) var latestVisit: IndexTable<Int> = [:]
    /// Per position in `path`: the position of the same step's visit before it (-1: none), which
    /// becomes the step's latest visit again when this one is removed. Kept beside `path` rather
    /// than as a list per step, which cost an allocation on every visit.
    private var earlierVisit: [Int] = []
    /// The latest answer of every step that has one, on the path or not (kept to prefill a
    /// step visited again). A form's answer is an object of its items' answers.
    var answers: IndexTable<JSON> = [:]
    /// Per step: answers of later visits that going back took off the path, most recent last.
    /// Going back to an earlier visit of a step (a loop) shows that visit's own answer; going
    /// forward to the step again brings the later answer back, so nothing typed is lost.
    var laterAnswers: IndexTable<[JSON]> = [:]
    /// Whether anything happened yet (an answer, a move, an active-step operation, a sample, a
    /// tick that fired something), which decides whether a new clock may re-read the start time.
    /// Anything happening also settles the clock (`clockAnchor`).
    var touched = false {
        didSet { clockAnchor = .settled }
    }
    /// What a new clock (`setClock`) may still re-date, because nothing has happened on the
    /// current one yet. Not saved: a restored session starts `.restored`.
    var clockAnchor: ClockAnchor = .opened
    /// What a restore across task versions kept and dropped (null otherwise).
    var restoreReport: JSON = .null
    /// ResearchKit's task-level suspend: no active step runs while it is set.
    var taskSuspended = false
    /// The recorders of async actions, by action index, once started.
    var asyncRuns: IndexTable<RecorderRun> = [:]
    /// Events not yet handed to the host; every call's output takes them, in order.
    var pendingEvents: [JSON] = []
    /// Whether events are queued at all: off only during a call whose events nobody will see (no
    /// output asked for and no event callback: `SessionHandle.call`), so none is built. Not saved.
    var recordsEvents = true
    /// While timers are processed, the moment a deadline came due, so what follows it (the next
    /// step, its start) is dated when it happened, not when the host asked.
    var timeOverride: Int64?
    /// The calculations' values and what they were computed from (see `CalculationCache`).
    let calculationCache = CalculationCache()

    init(task: Task, options: SessionOptions, clock: Clock = .system) {
        self.task = task
        self.taskRunUUID = options.taskRunUUID ?? UUIDText.random()
        self.fixed = FixedOptions(options)
        self.clock = clock
        let now = clock.nowMilliseconds
        self.startDate = now
        enterFirstStep(at: now)
    }

    /// A session rebuilt from restoration data that `Restoration` has already checked.
    init(task: Task, options: SessionOptions, clock: Clock, taskRunUUID: String, startDate: Int64, endDate: Int64?,
         finishReason: FinishReason?, visits: [Visit], answers: IndexTable<JSON>, laterAnswers: IndexTable<[JSON]>, touched: Bool,
         taskSuspended: Bool, asyncRuns: IndexTable<RecorderRun>) {
        self.task = task
        self.taskRunUUID = taskRunUUID
        self.fixed = FixedOptions(options)
        self.clock = clock
        self.startDate = startDate
        self.endDate = endDate
        self.finishReason = finishReason
        self.answers = answers
        self.laterAnswers = laterAnswers
        self.touched = touched
        self.taskSuspended = taskSuspended
        self.asyncRuns = asyncRuns
        self.clockAnchor = .restored
        for visit in visits { pushVisit(visit) }
        // A running step goes on from its saved elapsed time at the session's time now; the
        // first clock the host sets takes that over (`setClock`).
        anchorRunningSteps(at: now)
    }

    var isFinished: Bool { finishReason != nil }

    /// The current visit; nil only when no step was ever shown.
    var current: Visit? { path.last }

    /// The current visit's step, read without copying the visit (`current` copies it whole,
    /// retaining its answer, hidden items and arrival, and was read several times a call).
    var currentIndex: Int? { path.indices.last.map { path[$0].stepIndex } }

    var currentStep: Step? { currentIndex.flatMap { task.step(at: $0) } }

    /// The session's time: the clock's (or the moment a deadline came due), never earlier than
    /// the latest date the run holds, so a host clock that goes backwards (another clock set
    /// mid-run) cannot date a visit before the one it follows; restore refuses such dates.
    var now: Int64 {
        // Inlined for the reason `requireInProgress` is.
        @inline(__always) get { max(timeOverride ?? clock.nowMilliseconds, latestDate) }
    }

    /// The run's latest date: its start, or its current visit's start or end.
    private var latestDate: Int64 {
        guard let last = path.last else { return startDate }
        return max(startDate, last.endDate ?? last.startDate)
    }

    /// Shows the task's first step, unless skip rules pass over every step.
    private mutating func enterFirstStep(at time: Int64) {
        path = []
        latestVisit = [:]
        earlierVisit = []
        let route = Navigator().arrive(at: task.steps.isEmpty ? nil : 0, from: nil, notes: [], in: self)
        if let step = route.step {
            arrive(at: step, time: time, route: route)
        } else {
            endRun(.completed, at: time)
        }
    }

    /// Replaces the clock.
    ///
    /// - On a session opened and untouched (nothing has happened yet), the run starts over at the
    ///   new clock's time (the first step, an active step's timer and the queued events are dated
    ///   anew).
    /// - On a session just restored (nothing has happened since), the new clock takes over the
    ///   restore: every saved date stays, and a running active step goes on from exactly the
    ///   elapsed time it was saved with, counted from the new clock's time, as if it had been
    ///   restored on that clock. Whatever the restore's own clock (the system clock) read in
    ///   between is forgotten, so the restored state equals the saved one. Only the first clock
    ///   set after the restore does this.
    /// - Otherwise a running active step keeps the time it has run and goes on on the new clock.
    mutating func setClock(_ clock: Clock) {
        let before = now
        self.clock = clock
        switch clockAnchor {
        case .opened where !touched && !isFinished && path.count <= 1:
            // The run starts over, so it takes the new clock's time as it is.
            let time = clock.nowMilliseconds
            startDate = time
            pendingEvents = []
            asyncRuns = [:]
            enterFirstStep(at: time)
        case .restored:
            anchorRunningSteps(at: now)
            clockAnchor = .settled
        default:
            let time = now
            updateCurrent { visit in
                guard var run = visit.active, run.status == .running else { return }
                run.elapsedBefore = run.elapsed(at: before)
                run.runningSince = time
                visit.active = run
            }
        }
    }

    /// Shows step `index`: a new visit, with its prefill (ResearchKit asks its default result
    /// source when a step appears).
    mutating func arrive(at index: Int, time: Int64, route: Navigator.Route) {
        // Looked up before it is changed: a `?.popLast()` through the dictionary's modify
        // accessor costs as much on a miss (nearly every arrival) as on a hit.
        if !laterAnswers.isEmpty, var later = laterAnswers[index], let answer = later.popLast() {
            answers[index] = answer
            laterAnswers[index] = later.isEmpty ? nil : later
        }
        applyPrefill(step: index)
        let previous = recordsEvents ? currentStep?.identifier : nil
        let firstVisit = latestVisit[index] == nil
        pushVisit(Visit(stepIndex: index, startDate: time, modified: route.modified, arrival: .notes(route.notes)))
        // After the visit is on the path: an initial reads the live answers, and a form item's
        // visibility decides whether it is enabled.
        if firstVisit, task.rules.initials[index] != nil { applyInitials(step: index) }
        stepAppeared(previous: previous, at: time)
        startAsyncActions(at: index, time: time)
        prepareActiveStep(at: time)
    }

    /// Restarts every running active step's timer at `time`, keeping the time each has run. In
    /// a finished run none may run: data saved before every way of finishing stopped the timer
    /// (issue 26, item 12) keeps the time it was saved with, and the step is finished when the
    /// run was.
    mutating func anchorRunningSteps(at time: Int64) {
        for i in path.indices where path[i].active?.status == .running {
            if isFinished, var run = path[i].active {
                run.runningSince = nil
                run.status = .finished
                run.finishDate = run.finishDate ?? endDate
                path[i].active = run
            } else {
                path[i].active?.runningSince = time
            }
        }
    }

    mutating func pushVisit(_ visit: consuming Visit) {
        earlierVisit.append(latestVisit.updateValue(path.count, forKey: visit.stepIndex) ?? -1)
        path.append(visit)
    }

    mutating func popVisit() {
        guard let visit = path.popLast() else { return }
        let earlier = earlierVisit.popLast() ?? -1
        latestVisit[visit.stepIndex] = earlier >= 0 ? earlier : nil
    }

    /// Gives a visit the dates it was saved with (a migrated run, `Restoration.migrate`).
    mutating func redateVisit(at i: Int, start: Int64, end: Int64?) {
        guard path.indices.contains(i) else { return }
        path[i].startDate = start
        path[i].endDate = end
    }

    mutating func updateCurrent(_ change: (inout Visit) -> Void) {
        guard let last = path.indices.last else { return }
        change(&path[last])
    }

    func stateError(_ code: String, _ message: String, problems: [Problem] = []) -> StepKitError {
        StepKitError(.state, problems: problems.isEmpty ? [Problem(code: code, message: message, path: .root)] : problems)
    }

    /// Throws once the task has finished. Inlined, so a mutating call does not copy the whole
    /// session to ask (a non-mutating method is handed a copy of `self` from a mutating one);
    /// the error is made out of line.
    @inline(__always)
    func requireInProgress() throws(StepKitError) {
        if let finishReason { throw Session.finishedError(finishReason) }
    }

    @inline(never)
    private static func finishedError(_ reason: FinishReason) -> StepKitError {
        StepKitError(.state, problems: [Problem(code: "finished", message: "The task has finished (\(reason.rawValue)); start a new session to run it again.", path: .root)])
    }
}

/// A session's options, shared by its copies (`Session.options`).
private final class FixedOptions: Sendable {
    let options: SessionOptions
    init(_ options: SessionOptions) { self.options = options }
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

/// The answers predicates see: for each step, its latest visit on the path (the current one
/// with its live answer); steps off the path and skipped visits are unanswered.
extension Session: AnswerLookup {
    func latestAnswer(step index: Int) -> JSON? {
        guard let position = latestVisit[index], path.indices.contains(position) else { return nil }
        let visit = path[position]
        if visit.skipped { return nil }
        return position == path.count - 1 && !isFinished ? answers[index] : visit.answer
    }

    /// Form item `item`'s answer; a hidden item of the current visit reads as unanswered
    /// (closed visits already left hidden items out).
    func itemAnswer(step index: Int, item: String) -> JSON? {
        guard let value = latestAnswer(step: index)?.objectValue?[item] else { return nil }
        if currentIndex == index && !isFinished && !isVisible(item, step: index) { return nil }
        return value
    }

    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? {
        switch selector {
        case .step(let index):
            guard let value = latestAnswer(step: index), let format = task.step(at: index)?.format() else { return nil }
            return (value, format.resultType)
        case .item(let index, let item):
            guard let value = itemAnswer(step: index, item: item),
                  let format = task.step(at: index)?.format(item: item) else { return nil }
            return (value, format.resultType)
        case .external(let taskID, let step, let item):
            return external.answer(task: taskID, step: step, item: item)
        }
    }
}

/// The answers as stored, with no item hidden: what `visibleWhen` reads, so that one item's
/// visibility never depends on another's (no cycles to chase).
///
/// It borrows the session rather than holding a copy: copying a `Session` retains and releases
/// every one of its fields, and every `visibleWhen` evaluation made one (a sixth of a step's
/// instructions on a task with visibility rules). `Session.withStoredAnswers` hands it out for
/// the length of one call only, so the pointer never outlives the session it points to.
struct StoredAnswers: AnswerLookup {
    private let pointer: UnsafePointer<Session>

    fileprivate init(_ pointer: UnsafePointer<Session>) { self.pointer = pointer }

    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? {
        switch selector {
        case .item(let index, let item):
            guard let value = answerValue(selector),
                  let format = pointer.pointee.task.step(at: index)?.format(item: item) else { return nil }
            return (value, format.resultType)
        default:
            return pointer.pointee.answer(selector)
        }
    }

    func answerValue(_ selector: Selector) -> JSON? {
        switch selector {
        case .item(let index, let item): return pointer.pointee.latestAnswer(step: index)?.objectValue?[item]
        default: return pointer.pointee.answerValue(selector)
        }
    }

    func calculationValues() -> [ExpressionValue] {
        pointer.pointee.calculationCache.values(pointer.pointee.task.calculations, view: .stored, lookup: self)
    }

    var evaluationTime: Int64 { pointer.pointee.evaluationTime }
}

extension Session {
    /// Calls `body` with this session's stored answers (`StoredAnswers`), which must not
    /// escape it.
    func withStoredAnswers<Result>(_ body: (StoredAnswers) -> Result) -> Result {
        withUnsafePointer(to: self) { body(StoredAnswers($0)) }
    }
}
