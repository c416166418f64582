import StepKitBase

/// Restoration data: a session as versioned JSON that names the task's fingerprint and carries an
/// integrity check, and the way back from it. See `schema/restoration.schema.json`.
///
/// ResearchKit's restoration data is an opaque archive that loses the back stack; this keeps the
/// whole visit path, every answer on and off it, and every date, and is refused whole if
/// anything about it is wrong.
package enum Restoration {
    static let format = "stepkit-restoration"
    /// The members a saved visit may have.
    static let visitKeys: Set<String> = ["step", "startDate", "endDate", "answer", "skipped", "modified", "hiddenItems", "arrival", "active", "timeSpent", "instance"]
    static let version: Int64 = 1

    static func refuse(_ code: String, _ message: String, _ path: JSONPath = .root) -> StepKitError {
        StepKitError(.restore, code: code, message: message, path: path)
    }

    /// Restoration data as `stepkit_session_save` writes it, or an autosave file (a journal:
    /// `Restoration+Journal.swift`), back to a session. With `limits`, a text past them is
    /// refused with `InputLimits.checkText`'s error, naming `argument`, before anything else.
    package static func restore(_ text: TextBytes, limits: InputLimits? = nil, argument: String = "saved_json",
                        task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        let document: JSONObject
        if let newline = journalSnapshotEnd(text) {
            try limits?.checkText(text, argument: argument)
            document = try journalDocument(text, snapshotEnd: newline, key: options.integrityKey)
        } else {
            // The parse reads within the limits itself, and checks the text only when it
            // cannot (a pass over the whole text saved on every restore that fits).
            document = try signedDocument(text, key: options.integrityKey, within: limits, argument: argument).document
        }
        return try restore(document, task: task, options: options, clock: clock)
    }

    /// The document in `text` with its integrity checked and its integrity member removed, and
    /// the digest it carried. With `limits`, a text past them fails with their error.
    static func signedDocument(_ text: TextBytes, key: String?, within limits: InputLimits? = nil,
                               argument: String = "saved_json") throws(StepKitError) -> (document: JSONObject, digest: String) {
        let parsed: JSON
        if let plain = PlainJSON.parse(text, within: limits) {
            parsed = plain
        } else {
            try limits?.checkText(text, argument: argument)
            do throws(StepKitError) {
                parsed = try JSONParser.parseWithJansson(text)
            } catch {
                throw refuse("damaged", "The restoration data is damaged or truncated: " + (error.problems.first?.message ?? "not JSON."))
            }
        }
        guard case .object(var document) = parsed else { throw refuse("damaged", "The restoration data is not a JSON object.") }
        guard document["format"] == .string(format) else {
            throw refuse("notRestorationData", "This is not StepKit restoration data (\"format\" is not \"\(format)\").", .root.key("format"))
        }
        guard document["version"] == .int(version) else {
            throw refuse("unsupportedVersion", "Restoration data version \(document["version"].map(JSONWriter.string) ?? "(none)") is not supported; this library reads version \(version).", .root.key("version"))
        }
        let digest = document["integrity"]?.objectValue?["digest"]?.stringValue ?? ""
        if try quickCheck(text, key: key) == true {
            document["integrity"] = nil
        } else {
            try checkIntegrity(&document, key: key)
        }
        return (document, digest)
    }

    /// A document whose integrity was checked, back to a session.
    private static func restore(_ document: JSONObject, task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        guard let taskInfo = document["task"]?.objectValue, let identifier = taskInfo["identifier"]?.stringValue,
              let fingerprint = taskInfo["fingerprint"]?.stringValue else {
            throw refuse("damaged", "The restoration data does not name its task.", .root.key("task"))
        }
        guard identifier == task.identifier else {
            throw refuse("differentTask", "The restoration data is for the task \"\(identifier)\", not \"\(task.identifier)\".", .root.key("task").key("identifier"))
        }
        var options = options
        options.additionalTaskResults = ExternalResults()
        if let results = document["additionalTaskResults"].flatMap({ $0.isNull ? nil : $0 }) {
            let d = Diagnostics()
            options.additionalTaskResults = ExternalResults(results, at: .root.key("additionalTaskResults"), d)
            guard d.isEmpty else { throw refuse("damaged", "The saved additionalTaskResults are not task results.", .root.key("additionalTaskResults")) }
        }
        // The run's seed comes from the data alone (the options may not give one on restore); a
        // run migrated from a version that shuffled nothing draws one.
        let sameVersion = fingerprint == (try task.fingerprint.value())
        options.seed = try savedSeed(document["randomization"], task: task, required: sameVersion)
        if !sameVersion {
            guard options.migrate else {
                throw refuse("taskChanged", "The restoration data was saved on another version of the task \"\(identifier)\"; restore with the option \"migrate\": true to carry its answers over.", .root.key("task").key("fingerprint"))
            }
            var session = try migrate(document, to: task, options: options, clock: clock)
            try session.restoreLanguage(document["language"], requested: options.language)
            // Answers carried over to a version whose lists offer other choices: a selection
            // not offered now is removed, with an event (as after `set_answer`).
            session.removeUnavailableChoices()
            return session
        }
        var session = try exact(document, task: task, options: options, clock: clock)
        try session.restoreLanguage(document["language"], requested: options.language)
        // Replay-checked data holds no selection that is not offered (each was accepted, and a
        // later answer that took one away removed it); this keeps that true for any data.
        session.removeUnavailableChoices()
        return session
    }
}
