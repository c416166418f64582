import CStepKit
import StepKitBase
import StepKitCore

// stepkit_session_report, stepkit_session_consent_document: what the host observed on a step
// StepKit cannot see, and the signed consent document.

@c @implementation
public func stepkit_session_report(_ session: OpaquePointer?, _ report_json: UnsafePointer<CChar>?,
                                   _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.take(session, report_json, argument: "report_json", out) { (s: inout Session, report) throws(StepKitError) in try s.report(report) }
}

@c @implementation
public func stepkit_session_consent_document(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session").store.read { (s: borrowing Session) throws(StepKitError) in try s.consentDocument() }
    }
}
