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
        // The run's figures without its game (`timing`), so the game below is held once.
        guard let settings = currentStep?.active, current?.active?.game != nil, var timing = current?.active else {
            throw stateError("notAGame", "The current step is not a game.")
        }
        timing.game = nil
        guard timing.status == .running, let since = timing.runningSince else {
            throw stateError("activeState", "The game's step is \(timing.status.rawValue), not running.")
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
        let at = timing.elapsed(at: time)
        var input = try GameInput.parse(value, at: at, saved: false)
        guard var game = current?.active?.game else { return }
        guard at >= game.time else {
            throw StepKitError(.invalidArgument, code: "inputTime", message: "The input is dated before the game's latest time.", path: .root.key("time"))
        }
        input = GameInput(copying: input, at: at)
        // The visit lets go of the game while it changes, so its arrays are not copied; a
        // refused input leaves `game` as it was (`GameRun.take`), and it goes back unchanged.
        updateCurrent { $0.active?.game = nil }
        do {
            try game.take(input)
        } catch {
            updateCurrent { $0.active?.game = game }
            throw error
        }
        let step = currentStep?.identifier ?? ""
        updateCurrent { $0.active?.game = game }
        emit("gameInput", ["step": .string(step), "input": input.json], at: time)
        if audit.isOn { audit.record(.control, at: time, step: currentIndex, new: input.json, detail: "input") }
        clock.touched = true
        if game.board.isOver { finishGame(settings, at: time) }
        _checkInvariants()
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
