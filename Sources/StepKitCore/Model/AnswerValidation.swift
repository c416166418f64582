import StepKitBase

/// The format part of accepting an answer, and the confirm-text part after it: `Task.accept`
/// (`Rules/Acceptance.swift`, the one decision, for `set_answer` and restore) runs it first, and
/// migration item by item (keeping what still fits): a question's answer by its answer format
/// (`Model/AnswerFormats/`), a form's item by item by theirs, with the rule a form adds across
/// items: a `confirmText` item must equal its original (the one confirm-text check, used when a
/// confirmation is set and when the form is left).
extension Step {
    /// This step's answer checked (`previous`: the answer it replaces, which some formats keep
    /// parts of; for a form, the items it does not change). The value is nil for an empty
    /// answer; `problems` has every problem, a form's with the item's path.
    func validate(_ answer: JSON, previous: JSON?, confirming: Form.Confirming) -> (value: JSON?, problems: [Problem]) {
        switch content {
        case .message:
            return (nil, [Problem(code: "noAnswer", text: Message("answer.notAccepted", ["step": .text(identifier)]), path: .root)])
        case .question(let format):
            do throws(AnswerRejection) {
                return (try format.validate(answer, previous: previous), [])
            } catch {
                return (nil, [error.problem(at: .root)])
            }
        case .form(let form):
            guard case .object(let changes) = answer else {
                return (nil, [Problem(code: "wrongType", text: Message("form.wrongType"), path: .root)])
            }
            let applied = form.validate(changes, previous: previous?.objectValue ?? JSONObject(), confirming: confirming)
            return (.object(applied.updated), applied.problems)
        }
    }
}

extension Form {
    /// When confirmations are checked against their originals.
    enum Confirming {
        /// Not now: a saved or migrated draft may hold a confirmation its original has since
        /// moved away from; leaving the form checks it (`confirmationProblems`).
        case never
        /// Each confirmation `changes` sets, against its original as it stands after the change,
        /// when the original has an answer (the participant may type the confirmation first).
        case changed
    }

    /// Each item of `changes` checked by its answer format and applied over `previous`, every
    /// problem reported (with the item's path) and none of them left out. `updated` has every
    /// item that passed; one that failed keeps what `previous` had. `set_answer` and restore keep
    /// it only when `problems` is empty; migration keeps the items that passed.
    func validate(_ changes: JSONObject, previous: JSONObject, confirming: Confirming) -> (updated: JSONObject, problems: [Problem]) {
        // Over no previous answer (a first answer; every form a restore checks), the result has
        // the changes' keys in their order: it starts as the changes and each value is replaced
        // where it stands, rather than the object being built again key by key (and hashed).
        let fresh = previous.count == 0
        var updated = fresh ? changes : previous
        var cleared: [String] = []
        var problems: [Problem] = []
        for (position, key) in changes.keys.enumerated() {
            guard let value = changes.value(at: position) else { continue }
            // Answers usually list a form's items in its order: the item at the same position
            // is checked first, before a look-up by name.
            let sameSpot = items[ifPresent: position].flatMap { $0.identifier == key ? $0 : nil }
            guard let item = sameSpot ?? item(key) else {
                problems.append(Problem(code: "unknownItem", text: Message("form.unknownItem", ["item": .text(key)]), path: .root.key(key), item: key))
                if fresh { cleared.append(key) }
                continue
            }
            do throws(AnswerRejection) {
                let kept = try item.format.validate(value, previous: fresh ? nil : previous[key])
                if !fresh {
                    updated[key] = kept
                } else if let kept {
                    updated.replaceValue(at: position, with: kept)
                } else {
                    cleared.append(key)
                }
            } catch {
                problems.append(error.problem(at: .root.key(key), item: key))
                // As if never applied: a failed item keeps what it had (over no previous answer,
                // nothing), which migration relies on to keep only the items that pass.
                if fresh { cleared.append(key) }
            }
        }
        for key in cleared { updated[key] = nil }
        if problems.isEmpty, confirming == .changed {
            problems = confirmationProblems(updated, items: changes.keys, originalRequired: false)
        }
        return (updated, problems)
    }

    /// The confirm-text check: each confirmation among `items` that has an answer in `answer`
    /// must equal its original's answer there. With `originalRequired`, a confirmation whose
    /// original has no answer fails too (leaving the form); without, it waits for the original.
    func confirmationProblems(_ answer: JSONObject, items: some Sequence<String>, originalRequired: Bool) -> [Problem] {
        guard !confirmations.isEmpty else { return [] }
        var problems: [Problem] = []
        for key in items {
            guard let confirm = confirmations[key], let value = answer[key] else { continue }
            let original = answer[confirm.originalItemIdentifier]
            if original == nil && !originalRequired { continue }
            do throws(AnswerRejection) { try confirm.confirm(value, original: original) } catch {
                problems.append(error.problem(at: .root.key(key), item: key))
            }
        }
        return problems
    }
}
