import CStepKit
import StepKitBase
import StepKitCore

// Repeating blocks: stepkit_session_add_instance, stepkit_session_remove_instance,
// stepkit_session_enter_instance (Session+Instances.swift).

@c @implementation
public func stepkit_session_add_instance(_ session: OpaquePointer?, _ block: UnsafePointer<CChar>?,
                                         _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let name = block.map { shortText($0) }
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.addInstance(name) }
    }
}

@c @implementation
public func stepkit_session_remove_instance(_ session: OpaquePointer?, _ block: UnsafePointer<CChar>?, _ index: Int64,
                                            _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    instanceCall(session, block, index, out) { (s: inout Session, name, position) throws(StepKitError) in try s.removeInstance(name, at: position) }
}

@c @implementation
public func stepkit_session_enter_instance(_ session: OpaquePointer?, _ block: UnsafePointer<CChar>?, _ index: Int64,
                                           _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    instanceCall(session, block, index, out) { (s: inout Session, name, position) throws(StepKitError) in try s.enterInstance(name, at: position) }
}

/// A call on one instance of a block (`remove`, `enter`): the session, the block's name and the
/// instance's index read and checked, then `body` on the session.
private func instanceCall(_ session: OpaquePointer?, _ block: UnsafePointer<CChar>?, _ index: Int64,
                          _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                          _ body: (inout Session, String?, Int) throws(StepKitError) -> Void) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let name = block.map { shortText($0) }
        let position = try instanceIndex(index)
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try body(&s, name, position) }
    }
}

/// An instance index as the engine takes it; one past any block's bounds is refused by the
/// session with the block's count in the message.
private func instanceIndex(_ index: Int64) throws(StepKitError) -> Int {
    guard index >= 0, index <= Int64(Int32.max) else {
        throw StepKitError(.invalidArgument, code: "instanceOutOfRange", message: "index must be from 0 to the block's instance count - 1; \(index) is not.")
    }
    return Int(index)
}
