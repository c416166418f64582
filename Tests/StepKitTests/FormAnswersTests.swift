import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private func contactTask(ageMaximum: Int) -> String {
    """
    {"identifier": "contact", "steps": [
      {"type": "form", "identifier": "contact", "formItems": [
        {"identifier": "email", "text": "Email", "answerFormat": {"type": "email"}},
        {"identifier": "confirm", "text": "Confirm", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "email"}},
        {"identifier": "age", "optional": true, "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": \(ageMaximum)}}]},
      {"type": "completion", "identifier": "done"}]}
    """
}

private func form(_ task: Task) throws -> Form {
    guard case .form(let form)? = task.step(at: 0)?.content else { throw StepKitError(.internal, code: "x", message: "no form") }
    return form
}

private func restored(_ saved: JSON, _ task: Task, migrate: Bool) throws(StepKitError) -> Session {
    var options = SessionOptions()
    options.migrate = migrate
    let text = JSONWriter.string(saved)
    let result = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: options, clock: .system) }
    }
    return try result.get()
}

/// A step's answer has one validation (`Step.validate`, a form's through `Form.validate`) and one
/// confirm-text check (`Form.confirmationProblems`), which set_answer, restore, migration and
/// leaving the form share.
@Suite struct FormAnswersTests {
    @Test func oneValidationReportsEveryItemAndKeepsTheValidOnes() throws {
        let f = try form(try compile(contactTask(ageMaximum: 90)))
        let changes = try #require(try json(#"{"email": "ada@example.org", "age": 12, "phone": "1"}"#).objectValue)
        let applied = f.validate(changes, previous: JSONObject(), confirming: .changed)
        #expect(applied.problems.map(\.path.description) == ["age", "phone"])
        #expect(applied.problems.map(\.code) == ["outOfRange", "unknownItem"])
        #expect(applied.updated["email"] == .string("ada@example.org"))
        #expect(applied.updated["age"] == nil)
        #expect(applied.updated.keys == ["email"])
        // Over a previous answer, a failed item keeps what it had and a passing one replaces it.
        let previous = try #require(try json(#"{"age": 30, "email": "old@example.org"}"#).objectValue)
        let over = f.validate(changes, previous: previous, confirming: .changed)
        #expect(over.problems.map(\.code) == ["outOfRange", "unknownItem"])
        #expect(over.updated.keys == ["age", "email"])
        #expect(over.updated["age"] == .int(30) && over.updated["email"] == .string("ada@example.org"))
        // An item that clears itself (null) is left out either way, in the changes' order.
        let cleared = try #require(try json(#"{"age": null, "email": "ada@example.org"}"#).objectValue)
        #expect(f.validate(cleared, previous: JSONObject(), confirming: .never).updated.keys == ["email"])
        #expect(f.validate(cleared, previous: previous, confirming: .never).updated.keys == ["email"])
    }

    @Test func confirmationsAreCheckedWhenSetAndWhenLeavingOnly() throws {
        let f = try form(try compile(contactTask(ageMaximum: 90)))
        let previous = try #require(try json(#"{"email": "ada@example.org"}"#).objectValue)
        let mismatch = try #require(try json(#"{"confirm": "bob@example.org"}"#).objectValue)
        // Set now: checked against the original as it stands after the change.
        #expect(f.validate(mismatch, previous: previous, confirming: .changed).problems.map(\.code) == ["confirmationMismatch"])
        // Restore and migration: a draft may hold it; leaving the form checks it.
        let draft = f.validate(mismatch, previous: previous, confirming: .never)
        #expect(draft.problems.isEmpty)
        #expect(f.confirmationProblems(draft.updated, items: ["confirm"], originalRequired: true).map(\.code) == ["confirmationMismatch"])
        // A confirmation typed before its original waits for it when set, and fails when left.
        #expect(f.validate(mismatch, previous: JSONObject(), confirming: .changed).problems.isEmpty)
        #expect(f.confirmationProblems(mismatch, items: ["confirm"], originalRequired: true).map(\.code) == ["confirmationMismatch"])
    }

    @Test func aStepsAnswerIsCheckedByItsContent() throws {
        let task = try compile(contactTask(ageMaximum: 90))
        let formStep = try #require(task.step(at: 0)), done = try #require(task.step(at: 1))
        #expect(done.validate(.int(1), previous: nil, confirming: .changed).problems.map(\.code) == ["noAnswer"])
        #expect(formStep.validate(.int(1), previous: nil, confirming: .changed).problems.map(\.code) == ["wrongType"])
        let kept = formStep.validate(try json(#"{"age": 40}"#), previous: try json(#"{"email": "ada@example.org"}"#), confirming: .changed)
        #expect(kept.problems.isEmpty)
        #expect(kept.value == (try json(#"{"email": "ada@example.org", "age": 40}"#)))
        let question = try #require(try questionTask(#"{"type": "scale", "minimum": 0, "maximum": 10}"#).step(at: 0))
        #expect(question.validate(.int(4), previous: nil, confirming: .never).value == .int(4))
        #expect(question.validate(.int(11), previous: nil, confirming: .never).problems.map(\.path.description) == [""])
    }

    @Test func restoreAndMigrationValidateADraftAsSetAnswerDoes() throws {
        let v1 = try compile(contactTask(ageMaximum: 90))
        var s = Session(task: v1, options: SessionOptions(), clock: .system)
        // A draft whose confirmation no longer matches: allowed while the form is current.
        try s.setAnswer(try json(#"{"confirm": "ada@example.org", "age": 60}"#))
        try s.setAnswer(try json(#"{"email": "bob@example.org"}"#))
        #expect(s.forwardProblems().map(\.code) == ["confirmationMismatch"])
        let saved = Restoration.save(s)

        let back = try restored(saved, v1, migrate: false)
        #expect(back.answers == s.answers)
        #expect(back.forwardProblems().map(\.code) == ["confirmationMismatch"])

        // Version 2 narrows the age: migration drops that item alone and keeps the draft's others.
        let v2 = try compile(contactTask(ageMaximum: 50))
        let migrated = try restored(saved, v2, migrate: true)
        let report = try #require(migrated.restoreReport.objectValue)
        let dropped = report["dropped"]?.arrayValue?.compactMap { $0.objectValue?["item"]?.stringValue }
        #expect(dropped == ["age"])
        #expect(report["kept"]?.arrayValue?.count == 2)
        #expect(migrated.current?.stepIndex == 0)
        #expect(migrated.forwardProblems().map(\.code) == ["confirmationMismatch"])
    }
}
