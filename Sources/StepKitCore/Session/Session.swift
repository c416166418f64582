import StepKitBase

/// One run of a task: where the participant is, what they answered, and when.
///
/// Every mutating operation checks everything before it changes anything and throws only
/// before its first change, so a rejected call leaves the session exactly as it was (the tests
/// compare the state before and after each rejected call).
package struct Session: Sendable {
    /// The task in the session's text language (`language.text`): `home` or one of its
    /// translations, all with the same steps in the same order.
    package internal(set) var task: Task
    /// The task as the handle holds it, in its default language, with its translations.
    let home: Task
    let taskRunUUID: String
    /// The options this run was opened with that outlive the call (autosave, integrity key,
    /// prefill sources, other tasks' results as given), behind one reference: they never change
    /// during the run, and the session is copied whole (for every autosaved call), which inline
    /// they made twice as large. The handle reads its limits from the same object.
    package let fixed: FixedOptions
    var options: SessionOptions { fixed.options }
    var external: ExternalResults { fixed.options.additionalTaskResults }
    /// The order the run shows its steps in: the definition's, but for sections that shuffle
    /// their steps (`StepOrder`), a function of the task and the seed alone.
    let stepOrder: StepOrder

    // The run's state, in named parts, each with the invariants it keeps (`_checkInvariants`).

    /// The visits in order; the last one is the current step.
    private(set) var path = VisitPath()
    /// The latest answer of every step that has one, and the answers going back set aside.
    var answers = AnswerStore()
    /// Events not yet handed to the host.
    package var events = EventQueue()
    /// The clock, the run's start and end, and whether anything has happened yet.
    var clock: RunClock
    /// The async actions' recorders and the task-level suspension.
    var actions = AsyncActions()
    /// The participant's language: of the texts, of the engine's messages (`SessionLanguage`).
    var language: SessionLanguage
    /// Every accepted change, dated, with who and why (`AuditTrail`).
    var audit = AuditTrail()
    /// The time the task has counted, for time limits and `timeSpent` (`TimeCount`).
    var timing = TimeCount()
    /// Which instance of each repeating block the participant is in (`InstanceCursors`).
    var instancesCursor = InstanceCursors()
    /// The instances of each repeating block of steps (`StepInstances`, `Session+StepBlocks`).
    var stepInstances = StepInstances()
    /// An edit begun from a review step, while it goes on (`ReviewReturn`, `Session+Review.swift`).
    var reviewReturn: ReviewReturn?

    /// What a restore across task versions kept and dropped (null otherwise).
    private(set) var restoreReport: JSON = .null
    /// The calculations' values and what they were computed from (see `CalculationCache`).
    let calculationCache = CalculationCache()
    /// Every reader gets the session by address, not as a copy (`PassedByAddress`): the one way
    /// the session is read while it changes, in place of per-method inlining and pointers.
    private let byAddress = PassedByAddress()

    package init(task: Task, options: SessionOptions, clock: Clock = .system) {
        self.home = task
        self.language = SessionLanguage.resolve(options.language, task: task, hosted: options.messageCatalogues)
        self.task = task.translated(to: language.text)
        self.taskRunUUID = options.taskRunUUID ?? UUIDText.random()
        var options = options
        // A task that shuffles draws its seed now, and keeps it (`Randomization`).
        if options.seed == nil, task.rules.shuffles { options.seed = Randomization.drawSeed() }
        self.fixed = FixedOptions.holding(options)
        self.stepOrder = Randomization.stepOrder(of: task, seed: options.seed)
        let now = clock.nowMilliseconds
        self.clock = RunClock(clock, startDate: now)
        self.audit.configure(options.audit)
        enterFirstStep(at: now)
        _checkInvariants()
    }

    /// A session rebuilt from restoration data that `Restoration` has already checked (its
    /// invariants are checked once `Restoration` has checked the run it describes).
    init(task: Task, options: SessionOptions, clock: Clock, taskRunUUID: String, startDate: Int64, endDate: Int64?,
         finishReason: FinishReason?, visits: [Visit], answers: AnswerStore, touched: Bool, actions: AsyncActions,
         audit: AuditTrail = AuditTrail(), taskTimeSpent: Int64 = 0) {
        self.task = task
        self.home = task
        self.language = SessionLanguage.resolve(nil, task: task, hosted: options.messageCatalogues)
        self.taskRunUUID = taskRunUUID
        self.fixed = FixedOptions.holding(options)
        self.stepOrder = Randomization.stepOrder(of: task, seed: options.seed)
        self.clock = RunClock(restoring: clock, startDate: startDate, endDate: endDate, finishReason: finishReason, touched: touched)
        self.answers = answers
        self.actions = actions
        self.audit = audit
        self.audit.configure(options.audit)
        self.timing = TimeCount(taskBefore: taskTimeSpent, since: nil)
        for visit in visits { path.push(visit) }
        // A task without time limits counts its time by its dates, the time saved away
        // included (its restoration data keeps no time at the save, so saving stays a pure
        // read): counting goes on from the run's latest date.
        if task.rules.timeLimits.isEmpty, !isFinished { timing.since = latestDate }
        // A running step goes on from its saved elapsed time at the session's time now; the
        // first clock the host sets takes that over (`setClock`).
        anchorRunningSteps(at: now)
    }

    var isFinished: Bool { clock.isFinished }
    var startDate: Int64 { clock.startDate }
    var endDate: Int64? { clock.endDate }
    var finishReason: FinishReason? { clock.finishReason }
    var touched: Bool { clock.touched }

    /// The current visit; nil only when no step was ever shown.
    var current: Visit? { path.last }

    /// The current visit's step, read without copying the visit (`current` copies it whole).
    var currentIndex: Int? { path.currentStep }

    /// Inlined, so a caller reads the step where the task holds it: a step returned out of line
    /// is a copy, and its retains are writes into the task that every session shares, which a
    /// second core running the task must take back (the benchmarks' shared-writes figure).
    var currentStep: Step? {
        @inline(__always) get { currentIndex.flatMap { task.step(at: $0) } }
    }

    /// The session's time: the clock's (or the moment a deadline came due), never earlier than
    /// the latest date the run holds, so a host clock that goes backwards (another clock set
    /// mid-run) cannot date a visit before the one it follows; restore refuses such dates.
    var now: Int64 { max(clock.reading, latestDate) }

    /// The run's latest date: its start, or its current visit's start or end (after a move
    /// forward, the move's own time, which the audit trail dates it with: no second clock read).
    var latestDate: Int64 {
        guard let last = path.indices.last else { return clock.startDate }
        return max(clock.startDate, path[last].endDate ?? path[last].startDate)
    }

    /// Shows the task's first step, unless skip rules pass over every step.
    private mutating func enterFirstStep(at time: Int64) {
        path = VisitPath()
        timing = TimeCount(taskBefore: 0, since: time)
        let route = Navigator(task).arrive(at: task.steps.isEmpty ? nil : stepOrder.step(at: 0), from: nil, notes: [], in: self)
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
    package mutating func setClock(_ clock: Clock) {
        let before = now
        self.clock.source = clock
        switch self.clock.anchor {
        case .opened where !touched && !isFinished && path.count <= 1:
            // The run starts over, so it takes the new clock's time as it is.
            let time = clock.nowMilliseconds
            self.clock.startDate = time
            events.removeAll()
            actions.removeAll()
            audit.removeAll()
            enterFirstStep(at: time)
        case .restored:
            anchorRunningSteps(at: now)
            // The restore is dated on the clock that takes it over, as its timers are.
            if audit.pendingRestore != nil { audit.pendingRestore = now }
            self.clock.anchor = .settled
        default:
            let time = now
            // Time limits keep the time counted on the old clock and count on on the new one.
            if timing.since != nil {
                foldTime(at: before)
                timing.since = time
            }
            updateCurrent { visit in
                guard var run = visit.active, run.status == .running else { return }
                run.elapsedBefore = run.elapsed(at: before)
                run.runningSince = time
                visit.active = run
            }
        }
        _checkInvariants()
    }

    /// Shows step `index`: a new visit, with its prefill (ResearchKit asks its default result
    /// source when a step appears).
    mutating func arrive(at index: Int, time: Int64, route: Navigator.Route) {
        // A step of a repeating section is shown in the instance navigation leads to.
        if let n = task.rules.blockOfStep[index] { switchInstance(n, to: route.instance) }
        answers.bringBack(step: index)
        applyPrefill(step: index)
        let previous = events.isRecording ? currentStep?.identifier : nil
        let firstVisit = path.latestPosition(of: index) == nil
        path.push(Visit(stepIndex: index, startDate: time, modified: route.modified, arrival: .notes(route.notes), instance: route.instance))
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
        // The time counted for limits goes on from what was saved, as a running timer does.
        if !task.rules.timeLimits.isEmpty { timing.since = isFinished ? nil : time }
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

    mutating func pushVisit(_ visit: consuming Visit) { path.push(visit) }

    mutating func popVisit() { path.pop() }

    /// The path with visits taken out of its middle (an instance of a repeating section removed,
    /// `Session+StepBlocks`).
    mutating func replacePath(_ visits: [Visit]) {
        path = VisitPath()
        for visit in visits { path.push(visit) }
    }

    /// Tells visit `i`'s arrival again as `route` does (`Session+StepBlocks`).
    mutating func redateArrival(at i: Int, route: Navigator.Route) {
        guard path.indices.contains(i) else { return }
        path[i].arrival = .notes(route.notes)
        path[i].modified = route.modified
    }

    /// Gives a visit the dates it was saved with (a migrated run, `Restoration.migrate`).
    mutating func redateVisit(at i: Int, start: Int64, end: Int64?) {
        guard path.indices.contains(i) else { return }
        path[i].startDate = start
        path[i].endDate = end
    }

    mutating func updateCurrent(_ change: (inout Visit) -> Void) {
        path.updateLast(change)
    }

    /// Changes the current visit in place with a change that may be refused, leaving the visit
    /// as it was (nil when no step was ever shown).
    mutating func changeCurrent<R>(_ change: (inout Visit) throws(StepKitError) -> R) throws(StepKitError) -> R? {
        try path.changeLast(change)
    }

    /// Records what a restore across task versions kept and dropped (`Restoration.migrate`).
    mutating func reportRestore(_ report: JSON) { restoreReport = report }

    /// Ends the run's clock (`endRun` is the whole of ending a run).
    mutating func finishClock(_ reason: FinishReason, at time: Int64) {
        clock.finish(reason, at: time)
    }

    func stateError(_ code: String, _ message: String, problems: [Problem] = []) -> StepKitError {
        Session.stateError(code, message, problems: problems)
    }

    /// The same, for code that changes a part of the session in place and so may not read it.
    static func stateError(_ code: String, _ message: String, problems: [Problem] = []) -> StepKitError {
        StepKitError(.state, problems: problems.isEmpty ? [Problem(code: code, message: message, path: .root)] : problems)
    }

    /// Throws once the task has finished; the error is made out of line.
    func requireInProgress() throws(StepKitError) {
        if let finishReason { throw Session.finishedError(finishReason) }
    }

    @inline(never)
    private static func finishedError(_ reason: FinishReason) -> StepKitError {
        StepKitError(.state, problems: [Problem(code: "finished", message: "The task has finished (\(reason.rawValue)); start a new session to run it again.", path: .root)])
    }
}

/// A session's options, shared by its copies and by its handle (`Session.options`,
/// `SessionHandle.limits`): stored once.
package final class FixedOptions: Sendable {
    package let options: SessionOptions
    private init(_ options: SessionOptions) { self.options = options }

    /// The options' object: the one every session opened with no options shares, or one of the
    /// session's own. Most sessions are opened with none, and each kept its own copy of the
    /// defaults: 361 heap bytes a session (DHAT of `bench memory`, benchmarks/README.md).
    static func holding(_ options: SessionOptions) -> FixedOptions {
        options.isDefault ? defaults : FixedOptions(options)
    }

    private static let defaults = FixedOptions(SessionOptions())
}
