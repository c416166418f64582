import StepKitBase

/// A game's result in a submitted step result: `{"identifier": step, "type": game, …the game's
/// fields, "recorded": {"inputs": [...], "time": ms}}` (docs/active-tasks.md), and where it is.
///
/// A game is a function of the run's seed and its inputs with their times, so its fields are not
/// taken on trust: the replay plays the recorded inputs again from the submitted seed, with the
/// replay restore uses (`GameRun.replay(_:seed:step:recorded:time:)`, so every game the engine
/// has is covered alike), and every field that differs from what the replay gives is reported
/// by name (`gameMismatch`). The recomputed game goes into the replayed run, so the report's
/// result holds the engine's game, not the submitted one.
struct SubmittedGame: Sendable {
    var object: JSONObject
    var path: JSONPath

    /// The members of a game's result that are not the game's fields.
    static let ownMembers: Set<String> = ["identifier", "type", "startDate", "endDate", "recorded"]
}

extension Replay {
    /// The game `submitted` recomputed from its recorded inputs, its fields compared with the
    /// replay's (each difference reported); nil, with the reason reported, when it cannot be
    /// recomputed (no recording, no seed for a game that draws, inputs the game does not take).
    func recomputeGame(_ submitted: SubmittedGame, settings: GameSettings, step: Step, report: inout Divergences) -> GameRun? {
        let o = submitted.object, path = submitted.path, id = step.identifier
        let name = settings.start(seed: 0, step: id).name
        guard o["type"] == .string(name) else {
            report.add(.wrongType, "The step \"\(id)\" is a \(name) game; its result's \"type\" is \"\(name)\".", at: path.key("type"), step: id)
            return nil
        }
        guard let recorded = o["recorded"] else {
            report.add(.gameMismatch, "The \(name) result of \"\(id)\" records no inputs (\"recorded\"), so its fields cannot be recomputed.",
                       at: path.key("recorded"), step: id)
            return nil
        }
        guard case .object(let r) = recorded, case .array(let inputs)? = r["inputs"], case .int(let time)? = r["time"], time >= 0, r.count == 2 else {
            report.add(.wrongType, "\"recorded\" is {\"inputs\": [the inputs as recorded], \"time\": the step time the game reached, in ms}.",
                       at: path.key("recorded"), step: id)
            return nil
        }
        var seed: UInt64 = 0
        if settings.usesSeed {
            guard let given = self.seed else {
                report.add(.gameMismatch, "The \(name) game of \"\(id)\" draws from the run's seed, but the submission records none (\"randomization.seed\"): its fields cannot be recomputed.",
                           at: .root.key("randomization"), step: id)
                return nil
            }
            seed = given
        }
        let game: GameRun
        do throws(GameRun.ReplayProblem) {
            game = try GameRun.replay(settings, seed: seed, step: id, recorded: inputs, time: time)
        } catch {
            switch error {
            case .invalidInput(let j):
                report.add(.wrongType, "A recorded input is {\"type\", \"at\", …} as docs/active-tasks.md describes.",
                           at: path.key("recorded").key("inputs").index(j), step: id)
            case .notTaken(let problem):
                report.add(.gameMismatch, "The recorded inputs of \"\(id)\" do not replay from the seed: \(problem.problems.first?.message ?? "refused").",
                           at: path.key("recorded").key("inputs"), step: id, reason: problem.problems.first?.code)
            }
            return nil
        }
        let fields = game.board.resultJSON
        fields.forEachEntry { key, value in
            guard let claimed = o[key] else {
                report.add(.gameMismatch, "The \(name) result of \"\(id)\" has no \"\(key)\"; replaying its recorded inputs gives \(Self.shown(value)).",
                           at: path.key(key), step: id)
                return
            }
            if !claimed.sameValue(as: value) {
                report.add(.gameMismatch, "The \(name) result's \"\(key)\" is submitted as \(Self.shown(claimed)); replaying its recorded inputs from the seed gives \(Self.shown(value)).",
                           at: path.key(key), step: id)
            }
        }
        for key in o.keys where fields[key] == nil && !SubmittedGame.ownMembers.contains(key) {
            report.add(.gameMismatch, "\"\(key)\" is not a field of the \(name) result.", at: path.key(key), step: id)
        }
        return game
    }

    /// A value as a message shows it: its text when short.
    private static func shown(_ value: JSON) -> String {
        let text = JSONWriter.string(value)
        return text.utf8.count <= 80 ? text : "another \(value.typeName) (\(text.utf8.count) bytes written)"
    }
}

extension Session {
    /// Puts `game` in the current visit's active run (the replay's game step), as if played.
    mutating func replaceCurrentGame(_ game: GameRun) {
        updateCurrent { $0.active?.game = game }
    }
}
