import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private let survey = """
{"identifier": "survey", "steps": [
  {"type": "instruction", "identifier": "intro", "title": "Hello"},
  {"type": "question", "identifier": "age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90, "unit": "years"}},
  {"type": "form", "identifier": "contact", "formItems": [
    {"identifier": "email", "text": "Email", "answerFormat": {"type": "email"}},
    {"identifier": "confirm", "text": "Confirm", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "email"}},
    {"sectionTitle": "Optional"},
    {"identifier": "note", "optional": true, "answerFormat": {"type": "text"}}]},
  {"type": "question", "identifier": "pain", "optional": true, "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10}},
  {"type": "completion", "identifier": "done"}]}
"""

@Suite struct SessionTests {
    func open() throws -> (Session, ManualClock) {
        let clock = ManualClock(1_767_225_600_000)
        let session = Session(task: try compile(survey), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: clock.clock)
        return (session, clock)
    }

    @Test func walksToACompleteResult() throws {
        var (s, clock) = try open()
        try s.goForward()
        #expect(throws: StepKitError.self) { try s.goForward() }
        try s.setAnswer(.int(30))
        clock.now += 1500
        try s.goForward()
        try s.setAnswer(try json(#"{"email": "ada@example.org", "confirm": "ada@example.org"}"#))
        try s.goForward()
        try s.skip()
        #expect(s.stateJSON().objectValue?["navigation"]?.objectValue?["hasNextStep"] == .bool(false))
        try s.goForward()
        #expect(s.finishReason == .completed)
        let result = try #require(s.resultJSON().objectValue)
        #expect(result["taskRunUUID"] == .string("0A2B3C4D-1111-4222-8333-444455556666"))
        #expect(result["startDate"] == .string("2026-01-01T00:00:00.000Z"))
        let steps = try #require(result["results"]?.arrayValue)
        #expect(steps.compactMap { $0.objectValue?["identifier"]?.stringValue } == ["intro", "age", "contact", "pain", "done"])
        let age = try #require(steps[1].objectValue?["results"]?.arrayValue?.first?.objectValue)
        #expect(age["answer"] == .int(30))
        #expect(age["type"] == .string("numeric"))
        #expect(age["unit"] == .string("years"))
        #expect(age["endDate"] == .string("2026-01-01T00:00:01.500Z"))
        let pain = try #require(steps[3].objectValue?["results"]?.arrayValue?.first?.objectValue)
        #expect(pain["answer"] == .null)
        let contact = try #require(steps[2].objectValue?["results"]?.arrayValue)
        #expect(contact.count == 3)
        #expect(throws: StepKitError.self) { try s.goForward() }
    }

    @Test func backKeepsAnswersToPrefillButLeavesTheResult() throws {
        var (s, _) = try open()
        try s.goForward()
        try s.setAnswer(.int(40))
        try s.goForward()
        try s.goBackward()
        #expect(s.stateJSON().objectValue?["answer"] == .int(40))
        try s.goBackward()
        let steps = s.resultJSON().objectValue?["results"]?.arrayValue ?? []
        #expect(steps.count == 1)
        try s.goForward()
        #expect(s.stateJSON().objectValue?["answer"] == .int(40))
        #expect(throws: StepKitError.self) { var first = s; try first.goBackward(); try first.goBackward() }
    }

    @Test func formChecksConfirmationAndRequiredItems() throws {
        var (s, _) = try open()
        try s.goForward()
        try s.setAnswer(.int(30))
        try s.goForward()
        #expect(s.forwardProblems().map(\.path.description) == ["email", "confirm"])
        let mismatch = try json(#"{"email": "ada@example.org", "confirm": "bob@example.org"}"#)
        do throws(StepKitError) {
            try s.setAnswer(mismatch)
            Issue.record("mismatch accepted")
        } catch {
            #expect(error.status == .answer)
            #expect(error.problems.first?.path.description == "confirm")
        }
        try s.setAnswer(try json(#"{"email": "ada@example.org", "confirm": "ada@example.org"}"#))
        // Changing the original afterwards blocks leaving the form until they agree again.
        try s.setAnswer(try json(#"{"email": "eve@example.org"}"#))
        #expect(s.forwardProblems().map(\.code) == ["confirmationMismatch"])
        #expect(throws: StepKitError.self) { try s.goForward() }
        try s.setAnswer(try json(#"{"confirm": "eve@example.org", "note": "hi"}"#))
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"nope": 1}"#)) }
        try s.goForward()
    }

    @Test func skipAndFinishRules() throws {
        var (s, _) = try open()
        #expect(throws: StepKitError.self) { try s.skip() }
        try s.goForward()
        #expect(throws: StepKitError.self) { try s.skip() }
        #expect(throws: StepKitError.self) { try s.finish(.completed) }
        #expect(throws: StepKitError.self) { try s.setAnswer(.string("x")) }
        try s.finish(.saved)
        #expect(s.finishReason == .saved)
        #expect(throws: StepKitError.self) { try s.finish(.discarded) }
        #expect(s.stateJSON().objectValue?["step"] == .null)
    }

    @Test func instructionTakesNoAnswer() throws {
        var (s, _) = try open()
        do throws(StepKitError) {
            try s.setAnswer(.bool(true))
            Issue.record("accepted")
        } catch {
            #expect(error.status == .state)
        }
    }

    @Test func newClockBeforeAnythingHappenedRestartsTheRun() throws {
        var (s, _) = try open()
        let later = ManualClock(1_800_000_000_000)
        s.setClock(later.clock)
        #expect(s.startDate == 1_800_000_000_000)
        try s.goForward()
        let other = ManualClock(1)
        s.setClock(other.clock)
        #expect(s.startDate == 1_800_000_000_000)
    }
}

/// Sessions opened with no options share one options object (`FixedOptions.holding`); any option
/// given makes the session's own. An option the default check left out would be dropped, so
/// these tests name every option the host can give and count the stored ones.
@Suite struct SharedOptionsTests {
    private let task = """
    {"identifier": "t", "steps": [
      {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}},
      {"type": "completion", "identifier": "done"}]}
    """

    /// `SessionOptions.isDefault` reads every stored option; a new one must be added there too.
    @Test func theDefaultCheckReadsEveryStoredOption() {
        #expect(Mirror(reflecting: SessionOptions()).children.count == 14, "an option was added: read it in SessionOptions.isDefault")
        #expect(Mirror(reflecting: Prefill()).children.count == 4, "read the new field in Prefill.isDefault")
        #expect(Mirror(reflecting: AuditOptions()).children.count == 4, "read the new field in AuditOptions.isDefault")
        #expect(Mirror(reflecting: SessionLimits()).children.count == 2, "read the new field in SessionLimits.isDefault")
    }

    @Test func noOptionsIsTheDefault() throws {
        #expect(SessionOptions().isDefault)
        #expect(try SessionOptions.parse(nil).isDefault)
        #expect(try SessionOptions.parse(json("null")).isDefault)
        #expect(try SessionOptions.parse(json("{}")).isDefault)
        // Given with their default values, the options are the defaults.
        #expect(try SessionOptions.parse(json(#"{"audit": true, "continueOnRecorderFailure": false, "recorderFileSizeLimit": 1048576}"#)).isDefault)
    }

    @Test func everyOptionGivenIsNotTheDefault() throws {
        let given = [
            #"{"taskRunUUID": "0A2B3C4D-1111-4222-8333-444455556666"}"#,
            #"{"additionalTaskResults": []}"#,
            #"{"integrityKey": "k"}"#,
            #"{"autosave": "/tmp/x.json"}"#,
            #"{"defaultResult": {"identifier": "t", "results": []}}"#,
            #"{"alwaysCheckForDefaultResult": true}"#,
            #"{"personalData": {"height": 170}}"#,
            #"{"language": "de"}"#,
            #"{"seed": 7}"#,
            #"{"outputDirectory": "/tmp"}"#,
            #"{"recorderFileSizeLimit": 2048}"#,
            #"{"continueOnRecorderFailure": true}"#,
            #"{"audit": false}"#,
            #"{"audit": {"actor": "nurse"}}"#,
            #"{"audit": {"reason": "visit 2"}}"#,
            #"{"audit": {"recordRestore": false}}"#,
            #"{"limits": {"maxAnswerBytes": 4096}}"#,
            #"{"limits": {"maxSampleDepth": 8}}"#,
        ]
        for text in given {
            #expect(try !SessionOptions.parse(json(text)).isDefault, "\(text)")
        }
        #expect(try !SessionOptions.parse(json(#"{"migrate": true}"#), restoring: true).isDefault)
        var catalogues = SessionOptions()
        catalogues.messageCatalogues["de"] = MessageCatalogue.shipped["en"]
        #expect(!catalogues.isDefault)
    }

    @Test func sessionsWithoutOptionsShareOneOptionsObject() throws {
        let task = try compile(self.task)
        let a = Session(task: task, options: SessionOptions(), clock: ManualClock(0).clock)
        let b = Session(task: task, options: SessionOptions(), clock: ManualClock(0).clock)
        #expect(a.fixed === b.fixed)
        let audited = Session(task: task, options: try SessionOptions.parse(json(#"{"audit": false}"#)), clock: ManualClock(0).clock)
        #expect(audited.fixed !== a.fixed)
        #expect(!audited.options.audit.enabled)
        #expect(a.options.audit.enabled)
    }
}
