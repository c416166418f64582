import CStepKit
import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The exported functions as a C host calls them: status codes, error JSON, ownership, limits.
@Suite struct ABITests {
    func lastError() throws -> JSONObject {
        try #require(stepkit_last_error().map { try json(String(cString: $0)) }?.objectValue)
    }

    func compileTask(_ text: String, options: String? = nil) -> (Int32, OpaquePointer?) {
        var task: OpaquePointer?
        let status = text.withCString { t in
            options.map { o in o.withCString { stepkit_task_compile_with_options(t, $0, &task) } } ?? stepkit_task_compile(t, &task)
        }
        return (status, task)
    }

    func call(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32) -> (Int32, JSON?) {
        var out: UnsafeMutablePointer<CChar>?
        let status = body(&out)
        defer { stepkit_string_free(out) }
        return (status, out.flatMap { try? json(String(cString: $0)) })
    }

    @Test func limitsRefuseHostileInputBeforeParsing() throws {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let (s1, t1) = compileTask(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "title": \#(deep)}]}"#)
        #expect(s1 == STEPKIT_EINVAL && t1 == nil)
        #expect(try lastError()["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("tooDeep"))
        let small = #"{"limits": {"maxDefinitionBytes": 10}}"#
        #expect(compileTask(#"{"identifier": "t", "steps": []}"#, options: small).0 == STEPKIT_EINVAL)
        #expect(try lastError()["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("tooLarge"))
        let steps = #"{"limits": {"maxSteps": 1}}"#
        #expect(compileTask(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}]}"#, options: steps).0 == STEPKIT_EDEFINITION)
        #expect(compileTask("{}", options: #"{"limits": {"bogus": 1}}"#).0 == STEPKIT_EINVAL)

        let (status, task) = compileTask(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "text"}}]}"#)
        #expect(status == STEPKIT_OK)
        defer { stepkit_task_free(task) }
        var session: OpaquePointer?
        #expect(#"{"limits": {"maxAnswerBytes": 64}}"#.withCString { stepkit_session_open(task, $0, &session) } == STEPKIT_OK)
        defer { stepkit_session_free(session) }
        let before = call { stepkit_session_state(session, $0) }.1
        let big = "\"" + String(repeating: "x", count: 100) + "\""
        #expect(call { out in big.withCString { stepkit_session_set_answer(session, $0, out) } }.0 == STEPKIT_EINVAL)
        #expect(try lastError()["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("tooLarge"))
        #expect(call { stepkit_session_state(session, $0) }.1?.objectValue?["answer"] == before?.objectValue?["answer"])
        #expect(call { out in #""fine""#.withCString { stepkit_session_set_answer(session, $0, out) } }.0 == STEPKIT_OK)
        // A call that changes the session may skip its output.
        #expect(#""finer""#.withCString { stepkit_session_set_answer(session, $0, nil) } == STEPKIT_OK)
        #expect(call { stepkit_session_state(session, $0) }.1?.objectValue?["answer"] == .string("finer"))
    }

    @Test func nullArgumentsAndDeadHandles() throws {
        var task: OpaquePointer?
        #expect(stepkit_task_compile(nil, &task) == STEPKIT_EINVAL && task == nil)
        #expect(stepkit_task_compile("{}", nil) == STEPKIT_EINVAL)
        #expect(call { stepkit_session_state(nil, $0) }.0 == STEPKIT_EINVAL)
        #expect(stepkit_session_state(nil, nil) == STEPKIT_EINVAL)
        let (_, t) = compileTask(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]}"#)
        var session: OpaquePointer?
        #expect(stepkit_session_open(t, nil, &session) == STEPKIT_OK)
        stepkit_task_free(t)
        // The session keeps its task alive.
        #expect(call { stepkit_session_go_forward(session, $0) }.1?.objectValue?["status"] == .string("finished"))
        stepkit_session_free(session)
        // Freed handles are refused, double frees are no-ops, a task is not a session.
        #expect(call { stepkit_session_state(session, $0) }.0 == STEPKIT_EINVAL)
        #expect(try lastError()["errors"]?.arrayValue?.first?.objectValue?["code"] == .string("invalidHandle"))
        stepkit_session_free(session)
        stepkit_task_free(t)
        let (_, other) = compileTask(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]}"#)
        defer { stepkit_task_free(other) }
        #expect(call { stepkit_session_state(other, $0) }.0 == STEPKIT_EINVAL)
    }

    @Test func eventsReachTheCallbackInOrderAndInTheOutput() throws {
        let (_, task) = compileTask(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "a"}, {"type": "countdown", "identifier": "c"}]}"#)
        defer { stepkit_task_free(task) }
        var session: OpaquePointer?
        #expect(stepkit_session_open(task, nil, &session) == STEPKIT_OK)
        defer { stepkit_session_free(session) }
        final class Box { var events: [String] = []; var freed = false }
        let box = Box()
        let context = Unmanaged.passRetained(box).toOpaque()
        #expect(stepkit_session_set_event_callback(session, { event, user in
            guard let event, let user else { return }
            Unmanaged<Box>.fromOpaque(user).takeUnretainedValue().events.append(String(cString: event))
        }, context, { user in
            guard let user else { return }
            let box = Unmanaged<Box>.fromOpaque(user).takeRetainedValue()
            box.freed = true
        }) == STEPKIT_OK)
        let (status, state) = call { stepkit_session_go_forward(session, $0) }
        #expect(status == STEPKIT_OK)
        let listed = state?.objectValue?["events"]?.arrayValue?.compactMap { $0.objectValue?["type"]?.stringValue } ?? []
        // The events queued when the session opened come first, then this call's.
        #expect(listed == ["stepWillAppear", "stepDidChange", "stepWillAppear", "stepDidChange", "activeStepStarted"])
        #expect(box.events.compactMap { try? json($0).objectValue?["type"]?.stringValue } == listed)
        #expect(stepkit_session_set_event_callback(session, nil, nil, nil) == STEPKIT_OK)
        #expect(box.freed)
    }
}
