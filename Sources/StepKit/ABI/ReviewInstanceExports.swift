import CStepKit
import StepKitBase
import StepKitCore

// stepkit_session_review_edit_instance: "Edit" on a review step into one instance of a
// repeating block (Session/Session+Review.swift, `editFromReview(_:block:instance:)`).

@c @implementation
public func stepkit_session_review_edit_instance(_ session: OpaquePointer?, _ step_identifier: UnsafePointer<CChar>?,
                                                 _ block: UnsafePointer<CChar>?, _ index: Int64,
                                                 _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.move(session, out) { (s: inout Session) throws(StepKitError) in
        guard let step_identifier else { throw .nullArgument("step_identifier") }
        // Past Int32 no block has an instance (maxCount is at most 1000): refused as one past the
        // block's instances would be, with the range in the message.
        guard index >= 0, index <= Int64(Int32.max) else {
            throw StepKitError(.invalidArgument, code: "instanceOutOfRange", message: "index must be from 0 to the block's instance count - 1; \(index) is not.")
        }
        try s.editFromReview(String(cString: step_identifier), block: block.map { shortText($0) }, instance: Int(index))
    }
}
