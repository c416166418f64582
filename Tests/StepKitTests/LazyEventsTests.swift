import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Events are built only when someone will see them: a call's output or the event callback
/// (issue 14). A call with neither builds none, and the calls after it are unaffected.
@Suite struct LazyEventsTests {
    static let task = """
    {"identifier": "t", "steps": [
      {"type": "question", "identifier": "a", "answerFormat": {"type": "boolean"}},
      {"type": "question", "identifier": "b", "answerFormat": {"type": "boolean"}}]}
    """

    @Test func sessionBuildsNoEventWhileNotRecording() throws {
        var session = Session(task: try compile(LazyEventsTests.task), options: SessionOptions(), clock: ManualClock(1000).clock)
        _ = session.takeEvents()
        session.recordsEvents = false
        try session.setAnswer(.bool(true))
        try session.goForward()
        #expect(session.pendingEvents.isEmpty)
        #expect(session.currentStep?.identifier == "b")
        session.recordsEvents = true
        try session.goBackward()
        let types = session.takeEvents().compactMap { $0.objectValue?["type"]?.stringValue }
        #expect(types == ["stepWillAppear", "stepDidChange"])
    }

    @Test func handleCallWithoutOutputOrCallbackBuildsNoneAndLeavesRecordingOn() throws {
        let handle = try SessionHandle(Session(task: try compile(LazyEventsTests.task), options: SessionOptions(),
                                               clock: ManualClock(1000).clock), options: SessionOptions())
        _ = try handle.call(wantsState: false) { (s: inout Session) throws(StepKitError) in
            // The first step's events, queued when the session opened, stay for this call to take;
            // the call adds none.
            let queued = s.pendingEvents.count
            try s.setAnswer(.bool(true))
            #expect(s.pendingEvents.count == queued)
        }
        // A rejected call (b is unanswered) leaves recording as it was, too.
        #expect(throws: StepKitError.self) {
            _ = try handle.call(wantsState: false) { (s: inout Session) throws(StepKitError) in
                try s.goForward()
                try s.goForward()
            }
        }
        handle.store.read { #expect($0.recordsEvents) }
        let text = try #require(try handle.call(wantsState: true) { (s: inout Session) throws(StepKitError) in try s.goBackward() })
        defer { free(text) }
        let state = try json(String(cString: text))
        let types = state.objectValue?["events"]?.arrayValue?.compactMap { $0.objectValue?["type"]?.stringValue }
        #expect(types == ["stepWillAppear", "stepDidChange"])
    }
}
