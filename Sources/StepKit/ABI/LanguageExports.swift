import CStepKit
import StepKitBase
import StepKitCore

// The participant's language: stepkit_session_set_language, stepkit_message_catalogue.

@c @implementation
public func stepkit_session_set_language(_ session: OpaquePointer?, _ language: UnsafePointer<CChar>?,
                                         _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.change(out) { (wantsState: Bool) throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        guard let language else { throw .nullArgument("language") }
        let tag = shortText(language)
        return try handle.call(wantsState: wantsState) { (s: inout Session) throws(StepKitError) in try s.setLanguage(tag) }
    }
}

@c @implementation
public func stepkit_message_catalogue(_ language: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        guard let language else { throw .nullArgument("language") }
        return try MessageCatalogue.shippedJSON(shortText(language))
    }
}
