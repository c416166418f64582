import StepKitBase

/// The options of `stepkit_task_verify_result`: `{"ignore": ["dates"], "unknownFields":
/// "error", "allowIncomplete": false}`.
package struct VerifyOptions: Sendable {
    /// What the check leaves out: `dates` (their order and form), `calculations` (the submitted
    /// values are not compared; the recomputed result still has the engine's).
    var ignoreDates = false
    var ignoreCalculations = false
    /// A member the result's or the response's shape does not have is a divergence
    /// (`unknownField`); with `"unknownFields": "ignore"` it is passed over.
    var unknownFieldsAreErrors = true
    /// A run that stops before navigation ends (a run saved or abandoned) is not a divergence.
    var allowIncomplete = false

    package init() {}

    package static func parse(_ value: JSON?) throws(StepKitError) -> VerifyOptions {
        var options = VerifyOptions()
        guard let value, !value.isNull else { return options }
        let d = Diagnostics()
        if let r = FieldReader(value, at: .root, d, what: "verify options") {
            if let ignore = r.array("ignore") {
                for (i, entry) in ignore.enumerated() {
                    switch entry.stringValue {
                    case "dates"?: options.ignoreDates = true
                    case "calculations"?: options.ignoreCalculations = true
                    default:
                        d.error("invalidValue", "\"ignore\" lists \"dates\" and \"calculations\".", at: .root.key("ignore").index(i))
                    }
                }
            }
            if let unknown = r.choice("unknownFields", of: ["error", "ignore"]) { options.unknownFieldsAreErrors = unknown == "error" }
            if let incomplete = r.bool("allowIncomplete") { options.allowIncomplete = incomplete }
            r.finish()
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return options
    }
}
