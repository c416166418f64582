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

extension Restoration {
    /// Restores from restoration data held as Swift text, handed over as a host hands it.
    static func restore(text: String, task: Task, options: SessionOptions = SessionOptions(),
                        clock: Clock = .system) throws(StepKitError) -> Session {
        let result = text.withCString { pointer in
            Result { () throws(StepKitError) -> Session in try restore(pointer, task: task, options: options, clock: clock) }
        }
        return try result.get()
    }

    /// `document` (without its integrity member) signed as restoration data is: what a test
    /// edits by hand and hands back, so that only the edit is judged.
    static func resignedText(_ document: JSONObject) throws -> String {
        let text = JSONWriter.string(.object(document))
        let (algorithm, digest) = try sign(text, key: nil)
        return String(text.dropLast()) + integrityHead(algorithm) + digest + integrityEnd
    }
}

extension SessionOptions {
    /// The options of a restore that migrates to a newer version of the task.
    static var migrating: SessionOptions {
        var options = SessionOptions()
        options.migrate = true
        return options
    }
}
