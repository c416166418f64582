import StepKitBase

/// The options of `stepkit_task_compile_fhir` and `stepkit_task_translate_fhir`:
/// `{"strict": false, "requiredAnswersChecked": "atCompletion", "valueSets": {...}, "limits": {...}}` (the limits are
/// `stepkit_task_compile_with_options`'s).
package struct FHIRImportOptions: Sendable {
    /// Any report entry is a definition error.
    var strict = false
    /// The translated task's `requiredAnswersChecked`: FHIR's rule (a required item must be
    /// answered in a completed response, and a renderer lets people move freely) by default.
    var requiredAnswers = RequiredAnswers.atCompletion
    /// The value sets the host supplies: canonical URL → concepts (`system`, `code`, `display`).
    var valueSets: [String: [JSONObject]] = [:]
    package var compile = CompileOptions.questionnaire

    package static func parse(_ value: JSON?) throws(StepKitError) -> FHIRImportOptions {
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
        if let sets = object["valueSets"] {
            options.valueSets = try parseValueSets(sets)
            object["valueSets"] = nil
        }
        options.compile = try CompileOptions.parse(.object(object), defaults: .questionnaire)
        return options
    }
}

extension FHIRImportOptions {
    /// `{"URL": [{"system": S, "code": C, "display": D}, ...]}`: each concept an object with a
    /// non-empty string `code` and optional string `system` and `display`; every problem
    /// reported at once with its path.
    private static func parseValueSets(_ value: JSON) throws(StepKitError) -> [String: [JSONObject]] {
        let base = JSONPath.root.key("valueSets")
        guard case .object(let sets) = value else {
            throw StepKitError(.invalidArgument, code: "wrongType", message: "\"valueSets\" must be an object: value set URL → concepts.", path: base)
        }
        let d = Diagnostics()
        var result: [String: [JSONObject]] = [:]
        sets.forEachEntry { url, list in
            let path = base.key(url)
            guard case .array(let concepts) = list else {
                d.error("wrongType", "A value set's concepts must be an array.", at: path)
                return
            }
            var kept: [JSONObject] = []
            for (i, c) in concepts.enumerated() {
                guard case .object(let o) = c else {
                    d.error("wrongType", "A concept must be an object {\"system\", \"code\", \"display\"}.", at: path.index(i))
                    continue
                }
                if case .string(let code)? = o["code"], !code.isEmpty {} else {
                    d.error("missingKey", "A concept needs a non-empty string \"code\".", at: path.index(i).key("code"))
                }
                for key in ["system", "display"] where o[key] != nil && o[key]?.stringValue == nil {
                    d.error("wrongType", "\"\(key)\" must be a string.", at: path.index(i).key(key))
                }
                o.forEachEntry { key, _ in
                    if !["system", "code", "display"].contains(key) {
                        d.error("unknownKey", "A concept has only \"system\", \"code\" and \"display\".", at: path.index(i).key(key))
                    }
                }
                kept.append(o)
            }
            if kept.isEmpty && concepts.isEmpty { d.error("invalidValue", "A value set needs at least one concept.", at: path) }
            result[url] = kept
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return result
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
