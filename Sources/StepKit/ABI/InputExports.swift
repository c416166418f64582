import CStepKit
import StepKitBase
import StepKitCore

// The predefined active tasks' games: stepkit_session_input (docs/active-tasks.md).

@c @implementation
public func stepkit_session_input(_ session: OpaquePointer?, _ input_json: UnsafePointer<CChar>?,
                                  _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.take(session, input_json, argument: "input_json", out) { (s: inout Session, input) throws(StepKitError) in try s.input(input) }
}
