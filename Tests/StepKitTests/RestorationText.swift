@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The tests hand restoration data over as the C functions receive it, a C string; the engine
/// takes its bytes (`TextBytes`), which the C boundary makes, as this does.
extension Restoration {
    static func restore(_ text: UnsafePointer<CChar>, limits: InputLimits? = nil, argument: String = "saved_json",
                        task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        try restore(TextBytes(cString: text), limits: limits, argument: argument, task: task, options: options, clock: clock)
    }
}
