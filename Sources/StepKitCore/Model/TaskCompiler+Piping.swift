import StepKitBase

// Piping: the `{{placeholders}}` of texts, checked against the calculations.

extension TaskCompiler {
    /// Checks the `{{placeholders}}` of every step's texts, step modifiers' texts and validation
    /// messages against the calculations, and notes the steps that hold some.
    static func compilePiping(_ b: Builder, _ calculations: Calculations, _ definition: JSON, _ rules: inout TaskRules) {
        let known: (String) -> Bool = { calculations.index(of: $0) != nil }
        for (i, step) in b.steps.enumerated() where Piping.checkStep(step.presentation, at: step.definitionPath, known: known, b.d) {
            rules.pipedSteps.insert(i)
        }
        let root = definition.objectValue
        for (key, modifier) in (root?["stepModifiers"]?.objectValue?.entries ?? []) {
            let setPath = JSONPath.root.key("stepModifiers").key(key).key("set")
            for (field, value) in modifier.objectValue?["set"]?.objectValue?.entries ?? [] {
                if let s = value.stringValue, Piping.check(s, at: setPath.key(field), known: known, b.d), let i = b.stepIndex[key] {
                    rules.pipedSteps.insert(i)
                }
            }
        }
        func messages(_ list: JSON?, at path: JSONPath) {
            for (i, entry) in (list?.arrayValue ?? []).enumerated() {
                if let s = entry.objectValue?["message"]?.stringValue { Piping.check(s, at: path.index(i).key("message"), known: known, b.d) }
            }
        }
        messages(root?["validations"], at: .root.key("validations"))
        for pending in b.pendingValidations { messages(pending.value, at: pending.path) }
    }
}
