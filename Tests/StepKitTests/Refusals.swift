import Testing
@testable import StepKitBase
@testable import StepKitCore

// What every refusal must leave as it was, checked alike by the tests of repeating blocks at
// any depth (a refusal changes nothing: state, saved data).

/// The code restoring `text` on `task` is refused with (nil: it restores).
func refusalCode(_ text: String, _ task: Task) -> String? {
    do throws(StepKitError) {
        _ = try Restoration.restore(text: text, task: task)
        return nil
    } catch { return error.problems.first?.code }
}

/// Expects `call` to throw with `code`, and the session's saved data and state not to change.
func refuses(_ s: inout Session, _ code: String, _ call: (inout Session) throws(StepKitError) -> Void) throws {
    let saved = try Restoration.saveText(s)
    let state = s.stateJSON()
    var threw: StepKitError?
    do throws(StepKitError) { try call(&s) } catch { threw = error }
    #expect(threw?.problems.first?.code == code, "expected \(code), got \(String(describing: threw?.problems.map(\.code)))")
    #expect(try Restoration.saveText(s) == saved)
    #expect(s.stateJSON() == state)
}
