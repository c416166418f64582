import StepKitBase

// Initial answers: `initial` expressions, compiled once every step is known.

extension TaskCompiler {
    /// `initial` expressions: each must have the type its answer format's answers have (a choice
    /// format takes a choice, a string or a number: the value of one choice).
    static func compileInitials(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for pending in b.pendingInitials {
            guard let step = b.steps[ifPresent: pending.step],
                  let format = step.format(item: pending.item),
                  let expression = predicates.scope.owned(by: pending.step, { compileInitial(pending.value, format, at: pending.path, b, predicates) }) else { continue }
            rules.initials[pending.step, default: []].append(InitialAnswer(item: pending.item, expression: expression, path: pending.path))
        }
        // A repeating group's items' `initial`: evaluated in each instance, with it in scope.
        for pending in b.pendingInstanceInitials {
            guard let step = b.steps[ifPresent: pending.step], let group = step.format(item: pending.block)?.repeating?.form,
                  let format = group.item(pending.item)?.format else { continue }
            let block = BlockReference.answer(step: pending.step, item: pending.block)
            guard let expression = predicates.scope.within(block, { compileInitial(pending.value, format, at: pending.path, b, predicates) }) else { continue }
            rules.initials[pending.step, default: []].append(InitialAnswer(item: pending.item, block: pending.block, expression: expression, path: pending.path))
        }
    }

    /// One `initial`, of the type `format`'s answers have.
    private static func compileInitial(_ value: JSON, _ format: AnswerFormat, at path: JSONPath, _ b: Builder,
                                       _ predicates: PredicateCompiler) -> Expression? {
        guard let answerType = format.rules.expressionType else {
            b.d.error("wrongType", "A \(format.resultType.rawValue) answer has no initial value an expression can give.", at: path)
            return nil
        }
        let expecting: ExpressionType? = answerType == .choice ? nil : answerType
        guard let (expression, type) = ExpressionCompiler(predicates: predicates).compile(value, at: path, expecting: expecting) else { return nil }
        if answerType == .choice, ![.choice, .string, .number, .any].contains(type) {
            b.d.error("wrongType", "The initial value of a choice is a choice's value (a string or a number), found \(type.described).", at: path)
            return nil
        }
        return expression
    }
}
