import CStepKit
import StepKitBase
import StepKitCore

// stepkit_session_review_edit, stepkit_task_review: review steps (the work is in
// Session/Session+Review.swift and Session/StandaloneReview.swift).

@c @implementation
public func stepkit_session_review_edit(_ session: OpaquePointer?, _ step_identifier: UnsafePointer<CChar>?,
                                        _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    SessionCall.move(session, out) { (s: inout Session) throws(StepKitError) in
        guard let step_identifier else { throw .nullArgument("step_identifier") }
        try s.editFromReview(String(cString: step_identifier))
    }
}

@c @implementation
public func stepkit_task_review(_ task: OpaquePointer?, _ run_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        guard let run_json else { throw .nullArgument("run_json") }
        let options = try SessionOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .document), restoring: true)
        return try StandaloneReview.review(TextBytes(cString: run_json), task: handle.task, options: options) { () throws(StepKitError) in
            try Boundary.json(run_json, argument: "run_json", limits: .document)
        }
    }
}
