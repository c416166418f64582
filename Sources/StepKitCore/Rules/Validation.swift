import StepKitBase

/// A cross-field rule (`validations: [{"when", "message"}]` on a form step or on the task):
/// `when` describes the problem; while it holds, going forward is refused with `message`
/// (code `validationFailed`), as a missing required answer is. A form's rules are checked when
/// the form is left going forward, the task's when going forward would end the task completed.
/// `Session.forwardProblems` is the one place that applies them, so the state, `go_forward`,
/// `finish` and the replay of a restore decide alike.
struct Validation: Sendable {
    let when: Predicate
    let message: String

    static let code = "validationFailed"

    /// Reads `validations` (an array of `{"when", "message"}`), reporting every problem.
    static func compileList(_ value: JSON, at path: JSONPath, _ predicates: PredicateCompiler) -> [Validation] {
        let d = predicates.diagnostics
        guard case .array(let entries) = value else {
            d.error("wrongType", "\"validations\" is an array of {\"when\": condition, \"message\": text}.", at: path)
            return []
        }
        var list: [Validation] = []
        for (i, entry) in entries.enumerated() {
            let entryPath = path.index(i)
            guard let r = FieldReader(entry, at: entryPath, d, what: "a validation") else { continue }
            let when = r.value("when", required: true).flatMap { predicates.compile($0, at: entryPath.key("when")) }
            let message = r.string("message", required: true, nonEmpty: true)
            r.finish()
            if let when, let message { list.append(Validation(when: when, message: message)) }
        }
        return list
    }
}
