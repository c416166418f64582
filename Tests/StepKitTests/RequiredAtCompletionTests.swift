import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// `requiredAnswersChecked` (issue 29, item 1): per step (ResearchKit's rule, the default) or at
/// completion (FHIR's: "a required item must be answered in a completed response"; SDC: the
/// status SHALL NOT become `completed` while one is missing, and renderers let people move
/// freely). Expectations follow that rule, not the engine's output.
@Suite struct RequiredAtCompletionTests {
    /// A required question, a form with a required item, an optional one and a confirmation of
    /// an e-mail, and a last required question.
    static func definition(_ mode: String?) -> String {
        """
        {"identifier": "t", \(mode.map { #""requiredAnswersChecked": "\#($0)", "# } ?? "")"steps": [
          {"type": "question", "identifier": "age", "title": "Age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 120}},
          {"type": "form", "identifier": "contact", "title": "Contact", "formItems": [
            {"identifier": "email", "text": "E-mail", "answerFormat": {"type": "text"}},
            {"identifier": "again", "text": "E-mail again", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "email"}},
            {"identifier": "phone", "text": "Phone", "optional": true, "answerFormat": {"type": "text"}}]},
          {"type": "question", "identifier": "mood", "question": "Mood today", "answerFormat": {"type": "boolean"}}]}
        """
    }

    func open(_ mode: String? = "atCompletion") throws -> Session {
        Session(task: try compile(Self.definition(mode)), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"),
                clock: ManualClock(1_767_225_600_000).clock)
    }

    func missing(_ s: Session) -> [String] {
        s.stateJSON().objectValue?["missingAnswers"]?.arrayValue?.compactMap { $0.objectValue?["path"]?.stringValue } ?? []
    }

    @Test func perStepIsTheDefaultAndUnchanged() throws {
        var s = try open(nil)
        #expect(s.task.rules.requiredAnswers == .perStep)
        #expect(throws: StepKitError.self) { try s.goForward() }
        #expect(s.currentStep?.identifier == "age")
        // The state lists the current step's missing answer, where else none can be missing.
        #expect(missing(s) == ["age"])
        let explicit = try open("perStep")
        #expect(explicit.task.rules.requiredAnswers == .perStep)
    }

    @Test func anUnknownModeIsADefinitionError() throws {
        let found = problems(Self.definition("onSubmit"))
        #expect(found.map(\.code) == ["invalidValue"])
        #expect(found.first?.path.description == "requiredAnswersChecked")
    }

    @Test func goingForwardLeavesMissingAnswersAndTheStateListsThemEverywhere() throws {
        var s = try open()
        #expect(s.stateJSON().objectValue?["navigation"]?.objectValue?["canGoForward"] == .bool(true))
        try s.goForward()
        #expect(s.currentStep?.identifier == "contact")
        try s.setAnswer(try json(#"{"phone": "555"}"#))
        #expect(missing(s) == ["age", "contact.email", "contact.again"])
        try s.goForward()
        #expect(s.currentStep?.identifier == "mood")
        // The result records what was left: the question unanswered, the form with what it has.
        let results = try #require(s.resultJSON().objectValue?["results"]?.arrayValue)
        #expect(results.first?.objectValue?["results"]?.arrayValue?.first?.objectValue?["answer"] == .null)
        let form = results[1].objectValue?["results"]?.arrayValue ?? []
        #expect(form.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["email", "again", "phone"])
        #expect(form.map { $0.objectValue?["answer"] } == [.null, .null, .string("555")])
        let state = try #require(s.stateJSON().objectValue)
        let list = try #require(state["missingAnswers"]?.arrayValue)
        #expect(list.count == 4)
        let first = try #require(list.first?.objectValue)
        #expect(first["step"] == .string("age"))
        #expect(first["item"] == nil)
        #expect(first["code"] == .string("answerRequired"))
        #expect(first["message"] == .string("Answer \"Age\" to finish."))
        let email = try #require(list[1].objectValue)
        #expect(email["step"] == .string("contact"))
        #expect(email["item"] == .string("email"))
        #expect(email["message"] == .string("Answer \"E-mail\" to finish."))
        #expect(list[3].objectValue?["message"] == .string("Answer \"Mood today\" to finish."))
        // On the last step, going forward would complete: refused, so the state says so.
        #expect(state["navigation"]?.objectValue?["canGoForward"] == .bool(false))
        #expect(state["problems"]?.arrayValue?.count == 4)
        // Going back shows the earlier step with the list still complete.
        try s.goBackward()
        #expect(missing(s) == ["age", "contact.email", "contact.again"])
    }

    @Test func completingIsRefusedWithEveryMissingAnswerAndChangesNothing() throws {
        var s = try open()
        try s.goForward()
        try s.goForward()
        try s.setAnswer(.bool(true))
        let before = Restoration.save(s)
        for attempt in 0..<2 {
            do throws(StepKitError) {
                if attempt == 0 { try s.goForward() } else { try s.finish(.completed) }
                Issue.record("completed with answers missing")
            } catch {
                #expect(error.status == .state)
                #expect(error.problems.map(\.path.description) == ["age", "contact.email", "contact.again"])
                #expect(error.problems.map(\.step) == ["age", "contact", "contact"])
                #expect(error.json.objectValue?["errors"]?.arrayValue?.count == 3)
            }
            #expect(Restoration.save(s) == before)
        }
        #expect(!s.isFinished)
        // Answering them, wherever they are, lets the task complete.
        try s.goBackward()
        try s.setAnswer(try json(#"{"email": "a@b.org", "again": "a@b.org"}"#))
        try s.goBackward()
        try s.setAnswer(.int(40))
        try s.goForward()
        try s.goForward()
        #expect(missing(s).isEmpty)
        try s.goForward()
        #expect(s.finishReason == .completed)
    }

    @Test func anInvalidAnswerIsStillRefusedAtOnce() throws {
        var s = try open()
        #expect(throws: StepKitError.self) { try s.setAnswer(.int(300)) }
        try s.goForward()
        // A confirmation that does not match its original is wrong, not missing: refused as it
        // is set, and leaving the form with one typed before its original is refused too.
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"email": "a@b.org", "again": "x@b.org"}"#)) }
        try s.setAnswer(try json(#"{"again": "x@b.org"}"#))
        do throws(StepKitError) {
            try s.goForward()
            Issue.record("left a form whose confirmation has no original")
        } catch {
            #expect(error.problems.map(\.item) == ["again"])
            #expect(error.problems.map(\.code) != ["answerRequired"])
        }
        #expect(s.currentStep?.identifier == "contact")
    }

    @Test func restoreReplaysARunLeftWithMissingAnswers() throws {
        var s = try open()
        try s.goForward()
        try s.goForward()
        let saved = Restoration.save(s)
        let text = JSONWriter.string(saved)
        let back = try text.withCString { pointer in
            try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: ManualClock(1_767_225_600_000).clock)
        }
        #expect(back.currentStep?.identifier == "mood")
        #expect(missing(back) == ["age", "contact.email", "contact.again", "mood"])
        // The replay checks each visit as go_forward does: its answers may be missing now.
        #expect(back.stateJSON().objectValue?["navigation"]?.objectValue?["canGoForward"] == .bool(false))
    }

    @Test func migrationWalksOverStepsThatWereLeftUnanswered() throws {
        var s = try open()
        try s.goForward()
        try s.goForward()
        let text = JSONWriter.string(Restoration.save(s))
        // A new version of the task (a title changed): the run continues where it was, since
        // the steps passed without answers could be passed.
        let next = try compile(Self.definition("atCompletion").replacingTitle())
        var options = SessionOptions()
        options.migrate = true
        let back = try text.withCString { pointer in
            try Restoration.restore(pointer, task: next, options: options, clock: ManualClock(1_767_225_700_000).clock)
        }
        #expect(back.currentStep?.identifier == "mood")
        #expect(missing(back) == ["age", "contact.email", "contact.again", "mood"])
    }

    @Test func theCheckerNoLongerTakesARequiredAnswerForGiven() throws {
        // A branch on "age unanswered" never runs when age must be answered to leave it; at
        // completion it may well run.
        let rule = #""navigationRules": {"contact": {"type": "predicate", "branches": [{"when": {"result": "age", "answered": false}, "destination": "mood"}]}}"#
        func task(_ mode: String) -> String {
            String(Self.definition(mode).dropLast()) + ", " + rule + "}"
        }
        #expect(try findings(task("perStep")).map(\.code).contains("branchNeverTaken"))
        #expect(!(try findings(task("atCompletion")).map(\.code).contains("branchNeverTaken")))
    }

    @Test func theFHIRImportChecksAtCompletionUnlessAskedOtherwise() throws {
        let q = try json("""
        {"resourceType": "Questionnaire", "id": "q", "item": [
          {"linkId": "1", "text": "First", "type": "string", "required": true},
          {"linkId": "9", "text": "Ninth", "type": "string", "required": true}]}
        """)
        let byDefault = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(byDefault.definition.objectValue?["requiredAnswersChecked"] == .string("atCompletion"))
        var s = Session(task: byDefault.task, options: SessionOptions())
        try s.goForward()
        try s.setAnswer(.string("nine"))
        #expect(throws: StepKitError.self) { try s.goForward() }
        let response = try #require(byDefault.task.fhir.map { s.fhirResponse($0) }?.objectValue)
        #expect(response["status"] == .string("in-progress"))
        let perStep = try FHIRImporter.compile(q, options: try FHIRImportOptions.parse(try json(#"{"requiredAnswersChecked": "perStep"}"#)))
        var t = Session(task: perStep.task, options: SessionOptions())
        #expect(throws: StepKitError.self) { try t.goForward() }
        #expect(throws: StepKitError.self) { try FHIRImportOptions.parse(try json(#"{"requiredAnswersChecked": "never"}"#)) }
    }

    @Test func aSavedRunIsInProgressAndADiscardedOneStopped() throws {
        let q = try json(#"{"resourceType": "Questionnaire", "id": "q", "item": [{"linkId": "1", "text": "First", "type": "string"}]}"#)
        let task = try FHIRImporter.compile(q, options: FHIRImportOptions()).task
        let layout = try #require(task.fhir)
        var saved = Session(task: task, options: SessionOptions())
        try saved.finish(.saved)
        #expect(saved.fhirResponse(layout).objectValue?["status"] == .string("in-progress"))
        var discarded = Session(task: task, options: SessionOptions())
        try discarded.finish(.discarded)
        #expect(discarded.fhirResponse(layout).objectValue?["status"] == .string("stopped"))
    }
}

private extension String {
    /// The definition with the first step's title changed: another version of the task.
    func replacingTitle() -> String {
        var out = ""
        var rest = Substring(self)
        let target = "\"title\": \"Age\""
        while !rest.isEmpty {
            if rest.hasPrefix(target) {
                out += "\"title\": \"Your age\""
                rest = rest.dropFirst(target.count)
            } else {
                out.append(rest.removeFirst())
            }
        }
        return out
    }
}
