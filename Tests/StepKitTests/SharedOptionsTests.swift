import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

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
