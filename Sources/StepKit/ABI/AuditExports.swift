import CStepKit
import StepKitBase
import StepKitCore

// stepkit_session_audit, stepkit_session_set_audit_context: the session's audit trail.

@c @implementation
public func stepkit_session_audit(_ session: OpaquePointer?, _ start_index: Int64, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        guard start_index >= 0, start_index <= Int64(Int32.max) else {
            throw StepKitError(.invalidArgument, code: "invalidValue", message: "start_index must be from 0 to 2147483647.")
        }
        return try handle.store.auditListing(from: Int(start_index))
    }
}

@c @implementation
public func stepkit_session_set_audit_context(_ session: OpaquePointer?, _ actor: UnsafePointer<CChar>?, _ reason: UnsafePointer<CChar>?) -> Int32 {
    Boundary.status { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        let actor = try AuditText.read(actor, argument: "actor")
        let reason = try AuditText.read(reason, argument: "reason")
        try handle.store.transaction { (s: inout Session) in s.setAuditContext(actor: actor, reason: reason) }
    }
}

/// An actor or a reason: NULL for none, else at most `limit` bytes of text.
enum AuditText {
    static let limit = 4096

    static func read(_ text: UnsafePointer<CChar>?, argument: String) throws(StepKitError) -> String? {
        guard let text else { return nil }
        // Bytes are counted before decoding (bad UTF-8 decodes to a longer replacement).
        var length = 0
        while length <= limit && text[length] != 0 { length += 1 }
        guard length <= limit else {
            throw StepKitError(.invalidArgument, code: "tooLong", message: "\(argument) is longer than \(limit) bytes.")
        }
        return shortText(text, limit: length)
    }
}
