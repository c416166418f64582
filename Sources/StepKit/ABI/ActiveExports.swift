import CStepKit
import StepKitBase
import StepKitCore

// Active steps, timers, recorders and events: stepkit_session_control (and its deprecated
// name stepkit_session_active), _tick, _record, _set_event_callback.

@c @implementation
public func stepkit_session_control(_ session: OpaquePointer?, _ op: UnsafePointer<CChar>?,
                                    _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let operation: Session.ActiveOperation = try Boundary.choice(op, argument: "op", code: "invalidOperation", what: "operation")
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.activeOperation(operation) }
    }
}

/// The name stepkit_session_control had before the ABI took verbs; kept one release.
@c @implementation
public func stepkit_session_active(_ session: OpaquePointer?, _ op: UnsafePointer<CChar>?,
                                   _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    stepkit_session_control(session, op, out)
}

@c @implementation
public func stepkit_session_tick(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").call(wantsState: wantsState) { (s: inout Session) in s.tick() }
    }
}

@c @implementation
public func stepkit_session_record(_ session: OpaquePointer?, _ recorder_id: UnsafePointer<CChar>?, _ samples_json: UnsafePointer<CChar>?,
                                   _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        guard let recorder_id else { throw .nullArgument("recorder_id") }
        let recorder = shortText(recorder_id)
        let samples = try Boundary.json(samples_json, argument: "samples_json", limits: handle.limits.samples)
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.record(recorder, samples) }
    }
}

@c @implementation
public func stepkit_session_set_event_callback(_ session: OpaquePointer?, _ fn: stepkit_event_fn?, _ user_data: UnsafeMutableRawPointer?,
                                               _ free_user_data: stepkit_free_fn?) -> Int32 {
    Boundary.status { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        handle.setCallback(fn.map { EventCallback(function: $0, userData: user_data, releaseUserData: free_user_data) })
    }
}
