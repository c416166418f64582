import CStepKit
import StepKitBase
import StepKitCore

// The predefined active tasks' games: stepkit_session_input (docs/active-tasks.md).

@c @implementation
public func stepkit_session_input(_ session: OpaquePointer?, _ input_json: UnsafePointer<CChar>?,
                                  _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let input = try Boundary.json(input_json, argument: "input_json", limits: handle.limits.answer)
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.input(input) }
    }
}
