import StepKitBase

/// The predefined active tasks' games in a session (`Games/`, docs/active-tasks.md): the game
/// starts with its step, takes the host's inputs (`stepkit_session_input`), advances with the
/// session's time (`tick`), and when it is over the step finishes (and, by default, the task moves
/// on). The game is a function of the run's seed and its inputs with their times, so a saved game
/// is its inputs, replayed on restore.
extension Session {
    /// The game of a step that starts now.
    mutating func startGame(_ settings: ActiveStepSettings, step: Step) {
        guard let game = settings.game else { return }
        let board = game.start(seed: seed ?? 0, step: step.identifier)
        updateCurrent { $0.active?.game = GameRun(board: board) }
    }

    /// `stepkit_session_input`: one input for the running game of the current step, at `time` on
    /// the session's clock (the clock's time if nil). Refused, changing nothing, when there is no
    /// running game, when the time is not within the step's current running period (nor before an
    /// earlier input's, nor after the session's time), or when the game does not take the input
    /// now (`STEPKIT_EANSWER`, the game's code).
    package mutating func input(_ value: JSON) throws(StepKitError) {
        try requireInProgress()
        let clockNow = now
        // A visit's run holds a game only on a game step (`startGame`), so its step has settings.
        guard path.currentHasGame else {
            throw stateError("notAGame", "The current step is not a game.")
        }
        // The game takes the input where the visit keeps it, through one access to the visit's
        // run: a refused input changes nothing (`GameRun.take`). Taken out and put back, the run
        // was reached twice an input, and every read of it copied it whole.
        guard let (input, time, over) = try changeCurrent({ (visit: inout Visit) throws(StepKitError) in
            try Session.take(value, into: &visit.active, clockNow: clockNow)
        }) else { return }
        let step = currentStep?.identifier ?? ""
        emit("gameInput", ["step": .string(step), "input": input.json], at: time)
        // A `control` event keeps no value (`AuditTrail`), so the input's JSON is not built for it.
        if audit.isOn { audit.record(.control, at: time, step: currentIndex, detail: "input") }
        clock.touched = true
        if over, let settings = currentStep?.active { finishGame(settings, at: time) }
        _checkInvariants()
    }

    /// `value` taken by the game of `run` (the current visit's) at `time` on the session's clock
    /// (the clock's time `clockNow` if the input names none): the input as taken, its time, and
    /// whether the game is over. Throws, changing nothing, as `input` describes.
    private static func take(_ value: JSON, into run: inout ActiveRun?, clockNow: Int64) throws(StepKitError)
        -> (input: GameInput, time: Int64, over: Bool) {
        guard case .some = run, case .some = run!.game else { throw Session.stateError("notAGame", "The current step is not a game.") }
        guard run!.status == .running, let since = run!.runningSince else {
            throw Session.stateError("activeState", "The game's step is \(run!.status.rawValue), not running.")
        }
        var time = clockNow
        if let given = value.objectValue?["time"] {
            guard case .int(let ms) = given, ms >= since, ms <= clockNow else {
                throw StepKitError(.invalidArgument, code: "inputTime",
                                   message: "\"time\" is a whole number of milliseconds on the session's clock, from when the step last started running (\(since)) up to now (\(clockNow)).",
                                   path: .root.key("time"))
            }
            time = ms
        }
        let at = run!.elapsed(at: time)
        let parsed = try GameInput.parse(value, at: at, saved: false)
        guard at >= run!.game!.time else {
            throw StepKitError(.invalidArgument, code: "inputTime", message: "The input is dated before the game's latest time.", path: .root.key("time"))
        }
        let input = GameInput(copying: parsed, at: at)
        try run!.game!.take(input)
        return (input, time, run!.game!.board.isOver)
    }

    /// The running game advanced through what came due by the session's time, one moment at a
    /// time (the game's time moves only to those moments, so an input dated between them is still
    /// taken); the step finishes when the game is over, dated when that came due. True when
    /// anything changed.
    mutating func advanceGame(at clockNow: Int64) -> Bool {
        guard let settings = currentStep?.active, let run = current?.active, run.status == .running,
              let since = run.runningSince, var game = run.game else { return false }
        let elapsed = run.elapsed(at: clockNow)
        var changed = false
        var budget = GameRun.maximumInputs
        while budget > 0, !game.board.isOver, let due = game.board.nextDue, due <= elapsed, due > game.time {
            budget -= 1
            game.advance(to: due)
            changed = true
        }
        guard changed else { return false }
        updateCurrent { $0.active?.game = game }
        if game.board.isOver {
            // Over when its last window closed, not when the host asked.
            finishGame(settings, at: since.addingSaturated(game.time.subtractingSaturated(run.elapsedBefore)).clamped(since, clockNow))
        }
        return true
    }

    private mutating func finishGame(_ settings: ActiveStepSettings, at time: Int64) {
        let step = currentStep?.identifier ?? ""
        emit("gameOver", ["step": .string(step)], at: time)
        finishActive(at: time, settings: settings)
    }

    /// The game's result in its step's results: `{identifier, type, startDate, endDate, …}`
    /// with the game's fields, and what they are recomputed from (`recorded`: the inputs as
    /// recorded and the step time the game reached; `GameRecording.swift`, verify).
    static func gameResult(_ game: GameRun, step: Step, start: JSON, end: JSON) -> JSON {
        var o = JSONObject(["identifier": .string(step.identifier), "type": .string(game.board.name), "startDate": start, "endDate": end])
        game.board.resultJSON.forEachEntry { key, value in o[key] = value }
        o["recorded"] = game.recordingJSON
        return .object(o)
    }
}

extension GameInput {
    /// `input` at the step time `at`.
    init(copying input: GameInput, at: Int64) {
        self = GameInput(kind: input.kind, at: at, target: input.target, key: input.key, from: input.from, to: input.to,
                         x: input.x, y: input.y, z: input.z, w: input.w, duration: input.duration, rotation: input.rotation)
    }
}
