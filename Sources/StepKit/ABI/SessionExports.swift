import CStepKit

// stepkit_session_*: opening a session and every call on one.

@c @implementation
public func stepkit_session_open(_ task: OpaquePointer?, _ options_json: UnsafePointer<CChar>?,
                                 _ out_session: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    SessionCall.create(out_session) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        let options = try SessionOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .document))
        return (Session(task: handle.task, options: options), options)
    }
}

@c @implementation
public func stepkit_session_restore(_ task: OpaquePointer?, _ saved_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                    _ out_session: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    SessionCall.create(out_session) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        guard let saved_json else {
            throw StepKitError(.invalidArgument, code: "nullArgument", message: "saved_json is NULL.")
        }
        let options = try SessionOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .document), restoring: true)
        try InputLimits.document.checkSize(saved_json, argument: "saved_json")
        return (try Restoration.restore(saved_json, task: handle.task, options: options, clock: .system), options)
    }
}

@c @implementation
public func stepkit_session_save(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.outputText(out) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        return handle.store.saveText()
    }
}

@c @implementation
public func stepkit_session_free(_ session: OpaquePointer?) {
    HandleRegistry.release(session, as: SessionHandle.self)
}

@c @implementation
public func stepkit_session_state(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").state()
    }
}

@c @implementation
public func stepkit_session_set_answer(_ session: OpaquePointer?, _ answer_json: UnsafePointer<CChar>?,
                                       _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let answer = try Boundary.json(answer_json, argument: "answer_json", limits: handle.limits.answer)
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.setAnswer(answer) }
    }
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
        guard let reason else {
            throw StepKitError(.invalidArgument, code: "nullArgument", message: "reason is NULL.")
        }
        guard let finishReason = FinishReason(rawValue: shortText(reason)) else {
            let names = FinishReason.allCases.map { "\"" + $0.rawValue + "\"" }.joined(separator: ", ")
            throw StepKitError(.invalidArgument, code: "invalidReason", message: "Unknown finish reason; expected one of: \(names).")
        }
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.finish(finishReason) }
    }
}

@c @implementation
public func stepkit_session_result(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").store.read { $0.resultJSON() }
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
    /// Opens or restores a session: `*out_session` is NULL unless it succeeds, and with autosave
    /// the path is claimed (no other live session may hold it) and the first save written before
    /// the handle is handed out; a failure lets the claim go.
    static func create(_ out_session: UnsafeMutablePointer<OpaquePointer?>?,
                       _ body: () throws(StepKitError) -> (Session, SessionOptions)) -> Int32 {
        guard let out_session else {
            return Boundary.fail(StepKitError(.invalidArgument, code: "nullArgument", message: "out_session is NULL."))
        }
        out_session.pointee = nil
        return Boundary.status { () throws(StepKitError) in
            let (session, options) = try body()
            let store = try SessionStore(session, autosavePath: options.autosavePath)
            out_session.pointee = HandleRegistry.register(SessionHandle(store, limits: options.limits))
        }
    }

    static func move(_ session: OpaquePointer?, _ out: Boundary.OutString?,
                     _ body: (inout Session) throws(StepKitError) -> Void) -> Int32 {
        Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
            try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").call(wantsState: wantsState, body)
        }
    }
}

/// A short C string argument (a reason, an operation, an identifier) as text, read no further
/// than `limit` bytes so a missing NUL cannot run away.
func shortText(_ text: UnsafePointer<CChar>, limit: Int = 256) -> String {
    var n = 0
    while n < limit && text[n] != 0 { n += 1 }
    return String(decoding: UnsafeRawBufferPointer(start: text, count: n), as: UTF8.self)
}
