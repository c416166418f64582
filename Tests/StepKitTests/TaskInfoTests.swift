import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// `stepkit_task_info` names the task as restoration data does and lists its recorders, so a
/// host need not open a session and save it, or walk the definition, to learn either.
@Suite struct TaskInfoTests {
    @Test func theFingerprintIsTheSHA256OfTheCanonicalDefinition() throws {
        // Written with spaces, keys out of order and 1.0 for 1; the canonical text is
        // {"identifier":"t","steps":[{"identifier":"q","title":"Pain","type":"instruction"}]},
        // whose SHA-256 (sha256sum) is the value below.
        let task = try compile(#"{"steps": [{"type": "instruction", "title": "Pain", "identifier": "q"}], "identifier": "t"}"#)
        let info = try task.info.objectValue
        #expect(info?["fingerprint"] == .string("a4c9d03acb3d5ab42cfa2a80b9eee7eb945c3345bc920b6a2c7bc857b642e76d"))
    }

    @Test func theFingerprintIsTheOneRestorationDataNames() throws {
        let text = #"""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "q", "answerFormat": {"type": "scale", "minimum": 1, "maximum": 5}},
          {"type": "completion", "identifier": "done"}]}
        """#
        let task = try compile(text)
        var session = Session(task: task, options: SessionOptions())
        try session.setAnswer(.int(3))
        let saved = try JSONParser.parse(try Restoration.saveText(session))
        let named = saved.objectValue?["task"]?.objectValue?["fingerprint"]
        #expect(named != nil)
        #expect(try task.info.objectValue?["fingerprint"] == named)
        // Another compile of the same text names it the same; a changed definition does not.
        #expect(try compile(text).info.objectValue?["fingerprint"] == named)
        let changed = try compile(text.replacingOccurrences("\"maximum\": 5", "\"maximum\": 6"))
        #expect(try changed.info.objectValue?["fingerprint"] != named)
    }

    @Test func theRecordersAreTheOnesTheDefinitionLists() throws {
        // Recorders of both kinds, one inside a section; the binding's test reads the same file.
        let task = try compile(readFile(repositoryRoot + "Tests/fixtures/recording.json") ?? "")
        #expect(try task.info.objectValue?["recorders"] == (try json(#"""
        [{"identifier": "accel", "type": "accelerometer", "permission": "motion", "step": "walk"},
         {"identifier": "taps", "type": "custom", "permission": null, "step": "walk"},
         {"identifier": "pulse", "type": "healthQuantity", "permission": "health", "step": "rest"},
         {"identifier": "gps", "type": "location", "permission": "location", "startStep": "getReady", "stopStep": "rest"},
         {"identifier": "mic", "type": "audio", "permission": "microphone", "startStep": "walk", "stopStep": null}]
        """#)))
    }

    @Test func aTaskWithoutRecordersListsNone() throws {
        let task = try compile(#"{"identifier": "t", "steps": [{"type": "active", "identifier": "a", "stepDuration": 5}]}"#)
        #expect(try task.info.objectValue?["recorders"] == .array([]))
    }
}
