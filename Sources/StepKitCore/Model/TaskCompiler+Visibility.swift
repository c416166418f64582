import StepKitBase

// Visibility and validations: compiled once every step is known.

extension TaskCompiler {
    /// Form items', form section headers' and sections' `visibleWhen`, and the forms' and the
    /// task's `validations`, compiled once every step is known (kept out of `compile` so its frame
    /// stays small under the recursion of compiling expressions).
    static func compileVisibilityAndValidations(_ b: Builder, _ predicates: PredicateCompiler, _ r: FieldReader, _ rules: inout TaskRules) {
        // Each a rule of its step (`CompileScope.owned`).
        for pending in b.pendingVisibility {
            if let predicate = predicates.scope.owned(by: pending.step, { predicates.compile(pending.value, at: pending.path) }) {
                rules.visibility[pending.step, default: [:]][pending.item] = predicate
            }
        }
        for pending in b.pendingHeaders {
            guard let predicate = predicates.scope.owned(by: pending.step, { predicates.compile(pending.value, at: pending.path) }) else { continue }
            let position = rules.formHeaders[pending.step]?.count ?? 0
            rules.formHeaders[pending.step, default: []].append(FormHeaderRule(entry: pending.entry, title: pending.title, items: pending.items, predicate: predicate))
            for item in pending.items { rules.itemHeaders[pending.step, default: [:]][item] = position }
        }
        for pending in b.pendingValidations {
            let list = predicates.scope.owned(by: pending.step) { Validation.compileList(pending.value, at: pending.path, predicates) }
            if !list.isEmpty { rules.stepValidations[pending.step] = list }
        }
        if let value = r.value("validations") {
            rules.taskValidations = Validation.compileList(value, at: .root.key("validations"), predicates)
        }
        for pending in b.pendingSections {
            if let predicate = predicates.compile(pending.value, at: pending.path) {
                rules.sectionVisibility[pending.section] = predicate
            }
        }
    }
}
