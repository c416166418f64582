import StepKitBase

/// A game as what made it: its inputs as recorded (`{"type", "at", …}`, `at` in milliseconds of
/// the step's own time) and the step time it was advanced to. Restoration data keeps a game so
/// (`Restoration+Games.swift`) and a step result records it beside the game's fields
/// (`"recorded"`, docs/active-tasks.md), so that restore and verify (`Verify/SubmittedGame.swift`)
/// recompute the game the same way: the one replay below, whatever the game (`GameSettings`).
extension GameRun {
    /// `{"inputs": [...], "time": ms}`, what a result records.
    var recordingJSON: JSON {
        .object(["inputs": .array(inputs.map(\.json)), "time": .int(time)])
    }

    /// Why recorded inputs do not make a game.
    enum ReplayProblem: Error {
        /// The input at this position is not an input as recorded.
        case invalidInput(Int)
        /// The inputs are valid but the game does not take them (out of order, refused, too many).
        case notTaken(StepKitError)
    }

    /// The game of the step `step` of `settings` replayed from the seed: each recorded input
    /// (read as saved, with its `at`) taken at its time, then advanced to `time`.
    static func replay(_ settings: GameSettings, seed: UInt64, step: String, recorded inputs: [JSON], time: Int64) throws(ReplayProblem) -> GameRun {
        guard inputs.count <= GameRun.maximumInputs else {
            throw .notTaken(GameInput.refused("tooManyInputs", "A game takes at most \(GameRun.maximumInputs) inputs."))
        }
        var decoded: [GameInput] = []
        decoded.reserveCapacity(inputs.count)
        for (j, input) in inputs.enumerated() {
            do throws(StepKitError) {
                decoded.append(try GameInput.parse(input, at: nil, saved: true))
            } catch {
                throw .invalidInput(j)
            }
        }
        do throws(StepKitError) {
            return try replay(settings, seed: seed, step: step, inputs: decoded, time: time)
        } catch {
            throw .notTaken(error)
        }
    }
}
