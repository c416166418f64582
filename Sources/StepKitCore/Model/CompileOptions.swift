import StepKitBase

/// Options of `stepkit_task_compile_with_options`: the limits on a definition.
package struct CompileOptions: Sendable {
    /// 200,000 steps and sections: about 250 MiB at the compile's peak for the smallest steps
    /// (an instruction costs about 1.2 KiB while compiling), within what the size limit allows.
    static let defaultMaxSteps = 200_000

    package var input = InputLimits.definition
    package var maxSteps = defaultMaxSteps

    /// `defaults`: the input limits that apply unless `limits` overrides them (a FHIR
    /// Questionnaire nests deeper than a task definition: `InputLimits.questionnaire`).
    package static func parse(_ value: JSON?, defaults: InputLimits = .definition) throws(StepKitError) -> CompileOptions {
        var options = CompileOptions()
        options.input = defaults
        guard let value, !value.isNull else { return options }
        let d = Diagnostics()
        if let r = FieldReader(value, at: .root, d, what: "compile options") {
            if let limits = r.value("limits") {
                let l = FieldReader(limits, at: .root.key("limits"), d, what: "limits")
                options.input = defaults.overridden(by: l, bytesKey: "maxDefinitionBytes", depthKey: "maxDepth", stringKey: "maxStringBytes")
                if let v = l?.integer("maxSteps", in: 1...100_000_000) { options.maxSteps = v }
                l?.finish()
            }
            r.finish()
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return options
    }
}
