import CStepKit
import StepKitBase
import StepKitCore

// stepkit_task_verify_result: a submission replayed against its task (the work is in Verify/).

@c @implementation
public func stepkit_task_verify_result(_ task: OpaquePointer?, _ submitted_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                       _ out_report: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out_report) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task")
        let options = try VerifyOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .compileOptions))
        let submission = try Boundary.json(submitted_json, argument: "submitted_json", limits: .submission)
        return try Verification.verify(submission, task: handle.task, options: options)
    }
}
