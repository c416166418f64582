import StepKitBase

/// The read-only review of a saved or finished run (`stepkit_task_review`): what a host shows as
/// "your answers", listed as a review step lists them (`ReviewEntry`), without opening a session.
package enum StandaloneReview {
    /// `text` is restoration data (a save or an autosave journal, restored and checked as
    /// `stepkit_session_restore` does) or a task result (`stepkit_session_result`; read as
    /// `stepkit_task_verify_result` reads one, but not replayed: verify a result to trust it).
    /// `parse` reads `text` as one JSON value within the caller's limits.
    package static func review(_ text: TextBytes, task: Task, options: SessionOptions,
                               parse: () throws(StepKitError) -> JSON) throws(StepKitError) -> JSON {
        if Restoration.journalSnapshotEnd(text) != nil { return try fromSaved(text, task: task, options: options) }
        guard case .object(let object) = try parse() else {
            throw notARun("A run to review is restoration data or a task result, an object.")
        }
        if object["format"] != nil { return try fromSaved(text, task: task, options: options) }
        guard object["results"] != nil else {
            throw notARun("A run to review is restoration data (with \"format\") or a task result (with \"results\").")
        }
        var report = Divergences()
        guard let result = SubmittedResult.read(object, task: task, options: VerifyOptions(), into: &report) else {
            throw StepKitError(.invalidArgument, code: "otherTask", message: report.list.first?.message ?? "The result is not of this task.",
                               path: .root.key("identifier"))
        }
        var entries: [JSON] = []
        for submitted in result.steps {
            guard let step = task.step(at: submitted.step), step.takesAnswers else { continue }
            let entry = ReviewEntry.json(step: step, answer: submitted.answer, skipped: submitted.isEmpty, hidden: [])
            // A repeating section's step result, under its instance (a result carries no titles).
            if let k = submitted.instance, let n = task.rules.blockOfStep[submitted.step], let block = task.rules.stepBlocks[ifPresent: n] {
                entries.append(ReviewEntry.instanced(entry, block: block.identifier, instance: k, title: nil))
            } else {
                entries.append(entry)
            }
        }
        return .object([
            "taskIdentifier": .string(task.identifier),
            "taskRunUUID": .string(result.taskRunUUID),
            "source": .string("result"),
            "steps": .array(entries),
        ])
    }

    private static func fromSaved(_ text: TextBytes, task: Task, options: SessionOptions) throws(StepKitError) -> JSON {
        let session = try Restoration.restore(text, limits: .document, argument: "run_json", task: task, options: options, clock: .system)
        guard case .object(var review) = session.standaloneReviewJSON() else { return .null }
        review["source"] = .string("restorationData")
        return .object(review)
    }

    private static func notARun(_ message: String) -> StepKitError {
        StepKitError(.invalidArgument, code: "notARun", message: message, path: .root)
    }
}
