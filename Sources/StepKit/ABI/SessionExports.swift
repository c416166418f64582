import CStepKit
import StepKitBase
import StepKitCore

// stepkit_session_*: opening a session and every call on one.

@c @implementation
public func stepkit_session_open(_ task: OpaquePointer?, _ options_json: UnsafePointer<CChar>?,
                                 _ out_session: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    Boundary.create(out_session, argument: "out_session") { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        let options = try SessionOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .document))
        return try SessionHandle(Session(task: handle.task, options: options), options: options)
    }
}

@c @implementation
public func stepkit_session_restore(_ task: OpaquePointer?, _ saved_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                    _ out_session: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    Boundary.create(out_session, argument: "out_session") { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        guard let saved_json else {
            throw .nullArgument("saved_json")
        }
        let options = try SessionOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .document), restoring: true)
        return try SessionHandle(Restoration.restore(TextBytes(cString: saved_json), limits: .document, argument: "saved_json", task: handle.task,
                                                     options: options, clock: .system), options: options)
    }
}

@c @implementation
public func stepkit_session_save(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.outputText(out) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        return try handle.store.saveText()
    }
}

@c @implementation
public func stepkit_session_free(_ session: OpaquePointer?) {
    HandleRegistry.release(session, as: SessionHandle.self)
}

@c @implementation
public func stepkit_session_state(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.outputWritten(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").state()
    }
}

@c @implementation
public func stepkit_session_set_answer(_ session: OpaquePointer?, _ answer_json: UnsafePointer<CChar>?,
                                       _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.take(session, answer_json, argument: "answer_json", out) { (s: inout Session, answer) throws(StepKitError) in try s.setAnswer(answer) }
}

@c @implementation
public func stepkit_session_go_forward(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.move(session, out) { (s: inout Session) throws(StepKitError) in try s.goForward() }
}

@c @implementation
public func stepkit_session_go_backward(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.move(session, out) { (s: inout Session) throws(StepKitError) in try s.goBackward() }
}

@c @implementation
public func stepkit_session_skip(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.move(session, out) { (s: inout Session) throws(StepKitError) in try s.skip() }
}

@c @implementation
public func stepkit_session_finish(_ session: OpaquePointer?, _ reason: UnsafePointer<CChar>?,
                                   _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let finishReason: HostFinishReason = try Boundary.choice(reason, argument: "reason", code: "invalidReason", what: "finish reason")
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.finish(finishReason.reason) }
    }
}

@c @implementation
public func stepkit_session_result(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.outputWritten(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").store.written { $0.writeResult(to: &$1) }
    }
}

@c @implementation
public func stepkit_session_set_clock(_ session: OpaquePointer?, _ fn: stepkit_clock_fn?, _ user_data: UnsafeMutableRawPointer?) -> Int32 {
    Boundary.status { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let clock = fn.map { Clock.host($0, context: user_data) } ?? .system
        try handle.store.transaction { (s: inout Session) in s.setClock(clock) }
    }
}

/// The calls that move through the task and answer with the new state.
enum SessionCall {
    static func move(_ session: OpaquePointer?, _ out: Boundary.OutString?,
                     _ body: (inout Session) throws(StepKitError) -> Void) -> Int32 {
        Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
            try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").call(wantsState: wantsState, body)
        }
    }

    /// A call that takes one JSON document from the host, read under the session's answer limits
    /// (an answer, a report, a game's input; `argument` names it in errors), and answers with the
    /// new state.
    static func take(_ session: OpaquePointer?, _ document: UnsafePointer<CChar>?, argument: String, _ out: Boundary.OutString?,
                     _ body: (inout Session, JSON) throws(StepKitError) -> Void) -> Int32 {
        Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
            let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
            let value = try Boundary.json(document, argument: argument, limits: handle.limits.answer)
            return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try body(&s, value) }
        }
    }
}
