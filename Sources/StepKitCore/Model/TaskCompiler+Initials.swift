import StepKitBase

// Initial answers: `initial` expressions, compiled once every step is known.

extension TaskCompiler {
    /// `initial` expressions: each must have the type its answer format's answers have (a choice
    /// format takes a choice, a string or a number: the value of one choice).
    static func compileInitials(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for pending in b.pendingInitials {
            guard let step = b.steps[ifPresent: pending.step],
                  let format = step.format(item: pending.item) else { continue }
            guard let answerType = format.rules.expressionType else {
                b.d.error("wrongType", "A \(format.resultType.rawValue) answer has no initial value an expression can give.", at: pending.path)
                continue
            }
            let expecting: ExpressionType? = answerType == .choice ? nil : answerType
            guard let (expression, type) = ExpressionCompiler(predicates: predicates).compile(pending.value, at: pending.path, expecting: expecting) else { continue }
            if answerType == .choice, ![.choice, .string, .number, .any].contains(type) {
                b.d.error("wrongType", "The initial value of a choice is a choice's value (a string or a number), found \(type.described).", at: pending.path)
                continue
            }
            rules.initials[pending.step, default: []].append(InitialAnswer(item: pending.item, expression: expression, path: pending.path))
        }
    }
}
