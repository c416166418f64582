import StepKitBase

// Step expressions: the calculations a step shows and its answer bounds.

extension TaskCompiler {
    /// What steps hold that reads other steps or calculations: the calculations a step shows and
    /// answer bounds written as expressions.
    static func compileStepExpressions(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for (index, step) in b.steps.enumerated() {
            var shown: [Int] = []
            for (i, name) in step.calculationNames.enumerated() {
                if let c = predicates.calculations.index[name] {
                    shown.append(c)
                } else {
                    b.d.error("unknownCalculation", "No calculation is called \"\(name)\".", at: step.definitionPath.key("calculations").index(i))
                }
            }
            if !shown.isEmpty { rules.stepCalculations[index] = shown }
            var bounds: [AnswerBounds] = []
            switch step.content {
            case .message:
                break
            // A format's path is made only when it has bounds written as expressions (few do).
            case .question(let format):
                guard hasBoundExpressions(format) else { break }
                // The bounds are rules of the step (`CompileScope.owned`).
                if let bound = predicates.scope.owned(by: index, { AnswerBounds.compile(format, item: nil, at: step.definitionPath.key("answerFormat"), predicates) }) { bounds.append(bound) }
            case .form(let form):
                for (i, item) in form.items.enumerated() where hasBoundExpressions(item.format) {
                    let path = formItemPath(step, item.identifier) ?? step.definitionPath.key("formItems").index(i)
                    if let bound = predicates.scope.owned(by: index, { AnswerBounds.compile(item.format, item: item.identifier, at: path.key("answerFormat"), predicates) }) { bounds.append(bound) }
                }
            }
            if !bounds.isEmpty { rules.answerBounds[index] = bounds }
        }
    }

    /// Whether `format` has a bound written as an expression (`AnswerBounds.compile` has nothing
    /// to do otherwise).
    private static func hasBoundExpressions(_ format: AnswerFormat) -> Bool {
        format.rules.boundExpressions.count > 0
    }

    /// The path of a form item in the definition (section headers count among `formItems`).
    private static func formItemPath(_ step: Step, _ identifier: String) -> JSONPath? {
        guard let entries = step.presentation["formItems"]?.arrayValue,
              let i = entries.firstIndex(where: { $0.objectValue?["identifier"]?.stringValue == identifier }) else { return nil }
        return step.definitionPath.key("formItems").index(i)
    }
}
