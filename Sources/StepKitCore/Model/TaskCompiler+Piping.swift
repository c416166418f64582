import StepKitBase

// Piping: the `{{placeholders}}` of texts, checked against the calculations.

extension TaskCompiler {
    /// Checks the `{{placeholders}}` of every step's texts, step modifiers' texts and validation
    /// messages against the calculations, and notes the steps that hold some.
    static func compilePiping(_ b: Builder, _ calculations: Calculations, _ definition: JSON, _ rules: inout TaskRules) {
        let known: (String) -> Bool = { calculations.index(of: $0) != nil }
        // Per-instance values are scoped as reads are (`pipedInstance`); the sections are
        // worked out only for a task that pipes one.
        let perInstance = calculations.list.contains { $0.block != nil }
        let sections = perInstance ? repeatingSections(b) : RepeatingSections()
        func scoped(_ step: Int?) -> ((String) -> (code: String, message: String)?)? {
            guard perInstance else { return nil }
            return { name in pipedInstance(name, in: step, calculations, sections, b) }
        }
        for (i, step) in b.steps.enumerated()
        where Piping.checkStep(step.presentation, at: step.definitionPath, known: known, scoped: scoped(i), b.d) {
            rules.pipedSteps.insert(i)
        }
        let root = definition.objectValue
        for (key, modifier) in (root?["stepModifiers"]?.objectValue?.entries ?? []) {
            let setPath = JSONPath.root.key("stepModifiers").key(key).key("set")
            for (field, value) in modifier.objectValue?["set"]?.objectValue?.entries ?? [] {
                if let s = value.stringValue, Piping.check(s, at: setPath.key(field), known: known, scoped: scoped(b.stepIndex[key]), b.d),
                   let i = b.stepIndex[key] {
                    rules.pipedSteps.insert(i)
                }
            }
        }
        func messages(_ list: JSON?, at path: JSONPath, step: Int?) {
            for (i, entry) in (list?.arrayValue ?? []).enumerated() {
                if let s = entry.objectValue?["message"]?.stringValue {
                    Piping.check(s, at: path.index(i).key("message"), known: known, scoped: scoped(step), b.d)
                }
            }
        }
        messages(root?["validations"], at: .root.key("validations"), step: nil)
        for pending in b.pendingValidations { messages(pending.value, at: pending.path, step: pending.step) }
    }

    /// What is wrong with a text of step `step` (nil: the task's) showing `name`: nothing for
    /// a value over all instances; a per-instance value (`{"forEach": BLOCK}`) is shown in the
    /// instance the participant is in by a step of its repeating section (`Session.piped`), and
    /// anywhere else no instance is meant: refused, as a read there is (`outsideInstance`;
    /// docs/expressions.md, "Piping"). A form's repeating group shows its step's texts once for
    /// all its instances, so only its instances' `title`s show its per-instance values.
    private static func pipedInstance(_ name: String, in step: Int?, _ calculations: Calculations, _ sections: RepeatingSections,
                                      _ b: Builder) -> (code: String, message: String)? {
        guard let i = calculations.index(of: name), let block = calculations.list[ifPresent: i]?.block else { return nil }
        switch block {
        case .section(let n, _):
            guard let entry = sections.entries[ifPresent: n] else { return nil }
            if let step, entry.contains(step) { return nil }
            return ("outsideInstance",
                    "The placeholder \"{{\(name)}}\" shows a value computed for each instance of the repeating section \"\(entry.identifier)\", outside its instances, where no instance of it is meant: show it in a step of \"\(entry.identifier)\" (the instance the participant is in), or pipe a calculation over its instances ({\"count\": {\"over\": {\"section\": \"\(entry.identifier)\"}, ...}}) or at an index ({\"answer\": {\"section\": \"\(entry.identifier)\", \"step\": ..., \"index\": 0}}).")
        case .inner(let owner, _, let item, _):
            return pipedInstance(name, in: step, block: .answer(step: owner, item: item), b)
        case .answer:
            return pipedInstance(name, in: step, block: block, b)
        }
    }

    /// `pipedInstance` for a form's block (a nested one as its group): refused in a step's texts.
    private static func pipedInstance(_ name: String, in step: Int?, block: BlockReference, _ b: Builder) -> (code: String, message: String)? {
        switch block {
        case .answer(let owner, let item):
            let where_ = b.steps[ifPresent: owner].map { "\"\(item ?? $0.identifier)\" of \"\($0.identifier)\"" } ?? "\"\(item ?? "")\""
            return ("outsideInstance",
                    "The placeholder \"{{\(name)}}\" shows a value computed for each instance of the repeating block \(where_), outside its instances, where no instance of it is meant (a step's texts are shown once for all of them): show it in the block's \"title\" (each instance's own), or pipe a calculation over its instances ({\"sum\": {\"over\": ...}}) or at an index.")
        default:
            return nil
        }
    }
}
