import StepKitBase

/// A game in restoration data: `{"type", "inputs": [{type, at, …}], "time", "result"}`. The game
/// is not saved as it stands but as what made it: restore plays the inputs again from the seed
/// (each must be taken, at its time), advances to the saved time, and refuses the data
/// (`gameMismatch`) unless the game it gets has the saved result — so the restored game is the
/// saved one exactly, and a result can be recomputed from its inputs.
///
/// `rules` names the revision of the games' scoring the result was computed with: 2 since
/// spatial span scores and PSAT times follow ResearchKit's rules. Data without it (saved by
/// revision 1) still replays input by input, and its spatial span or PSAT result is recomputed
/// under the current rules rather than compared, so a game saved mid-way before the change is
/// not lost.
extension Restoration {
    static let gameRules: Int64 = 2

    static func encode(_ game: GameRun) -> JSON {
        .object([
            "type": .string(game.board.name),
            "inputs": .array(game.inputs.map(\.json)),
            "time": .int(game.time),
            "result": .object(game.board.resultJSON),
            "rules": .int(gameRules),
        ])
    }

    /// Replays every saved game of `visits` (whose steps are known to be the task's).
    static func restoreGames(_ visits: inout [Visit], saved: [JSON], task: Task, seed: UInt64?) throws(StepKitError) {
        for i in visits.indices {
            let path = JSONPath.root.key("path").index(i).key("active").key("game")
            let savedGame = saved[ifPresent: i]?.objectValue?["active"]?.objectValue?["game"]
            guard let step = task.step(at: visits[i].stepIndex), let run = visits[i].active else { continue }
            guard let settings = step.active?.game else {
                if savedGame != nil { throw refuse("damaged", "A saved game belongs to a step that is not a game.", path) }
                continue
            }
            // Data saved before the step started has no game; a started step has one.
            guard let savedGame else {
                if run.status != .prepared { throw refuse("damaged", "The saved game step \"\(step.identifier)\" has no game.", path) }
                continue
            }
            guard let o = savedGame.objectValue, o["type"] == .string(settings.start(seed: 0, step: "").name),
                  let inputs = o["inputs"]?.arrayValue, inputs.count <= GameRun.maximumInputs,
                  case .int(let time)? = o["time"], time >= 0, let result = o["result"] else {
                throw refuse("damaged", "A saved game is {\"type\", \"inputs\", \"time\", \"result\", \"rules\"} for its step's game.", path)
            }
            let game: GameRun
            do throws(GameRun.ReplayProblem) {
                game = try GameRun.replay(settings, seed: seed ?? 0, step: step.identifier, recorded: inputs, time: time)
            } catch {
                switch error {
                case .invalidInput(let j):
                    throw refuse("damaged", "A saved game input is not valid.", path.key("inputs").index(j))
                case .notTaken(let problem):
                    throw refuse("gameMismatch", "The saved game of \"\(step.identifier)\" does not replay: \(problem.problems.first?.message ?? "")", path)
                }
            }
            let rescored = o["rules"] == nil && ["spatialSpanMemory", "psat"].contains(game.board.name)
            if let rules = o["rules"], rules != .int(gameRules) {
                throw refuse("damaged", "A saved game's \"rules\" must be \(gameRules).", path.key("rules"))
            }
            guard rescored || JSON.object(game.board.resultJSON) == result else {
                throw refuse("gameMismatch", "The saved game of \"\(step.identifier)\" does not give its saved result when replayed from the seed.", path.key("result"))
            }
            visits[i].active?.game = game
        }
    }
}
