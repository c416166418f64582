/// The options of `stepkit_task_compile_fhir` and `stepkit_task_translate_fhir`:
/// `{"strict": false, "limits": {...}}` (the limits are `stepkit_task_compile_with_options`'s).
struct FHIRImportOptions: Sendable {
    /// Any report entry is a definition error.
    var strict = false
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
