/// The options of `stepkit_task_compile_fhir` and `stepkit_task_translate_fhir`:
/// `{"strict": false, "requiredAnswersChecked": "atCompletion", "limits": {...}}` (the limits are
/// `stepkit_task_compile_with_options`'s).
struct FHIRImportOptions: Sendable {
    /// Any report entry is a definition error.
    var strict = false
    /// The translated task's `requiredAnswersChecked`: FHIR's rule (a required item must be
    /// answered in a completed response, and a renderer lets people move freely) by default.
    var requiredAnswers = RequiredAnswers.atCompletion
    var compile = CompileOptions.questionnaire

    static func parse(_ value: JSON?) throws(StepKitError) -> FHIRImportOptions {
        var options = FHIRImportOptions()
        guard let value, !value.isNull else { return options }
        guard case .object(var object) = value else {
            throw StepKitError(.invalidArgument, code: "wrongType", message: "The options must be an object, found \(value.typeName).")
        }
        if let strict = object["strict"] {
            guard case .bool(let b) = strict else {
                throw StepKitError(.invalidArgument, code: "wrongType", message: "\"strict\" must be true or false.", path: JSONPath.root.key("strict"))
            }
            options.strict = b
            object["strict"] = nil
        }
        if let required = object["requiredAnswersChecked"] {
            guard let name = required.stringValue, let chosen = RequiredAnswers(rawValue: name) else {
                throw StepKitError(.invalidArgument, code: "invalidValue", message: "\"requiredAnswersChecked\" must be \"perStep\" or \"atCompletion\".",
                                   path: JSONPath.root.key("requiredAnswersChecked"))
            }
            options.requiredAnswers = chosen
            object["requiredAnswersChecked"] = nil
        }
        options.compile = try CompileOptions.parse(.object(object), defaults: .questionnaire)
        return options
    }
}

extension CompileOptions {
    /// A Questionnaire's defaults: a task definition's, nested deeper (`InputLimits.questionnaire`).
    static var questionnaire: CompileOptions {
        var options = CompileOptions()
        options.input = .questionnaire
        return options
    }
}
