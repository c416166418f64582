/// The options a host gives when it opens a session (`options_json`).
struct SessionOptions: Sendable {
    var taskRunUUID: String?
    var additionalTaskResults = ExternalResults()

    static func parse(_ value: JSON?) throws(StepKitError) -> SessionOptions {
        guard let value, !value.isNull else { return SessionOptions() }
        let d = Diagnostics()
        var options = SessionOptions()
        if let r = FieldReader(value, at: .root, d, what: "session options") {
            if let uuid = r.string("taskRunUUID") {
                options.taskRunUUID = UUIDText.normalized(uuid)
                if options.taskRunUUID == nil {
                    d.error("invalidValue", "\"taskRunUUID\" must be a UUID (8-4-4-4-12 hexadecimal digits).", at: .root.key("taskRunUUID"))
                }
            }
            if let results = r.value("additionalTaskResults") {
                options.additionalTaskResults = ExternalResults(results, at: .root.key("additionalTaskResults"), d)
            }
            r.finish()
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return options
    }
}
