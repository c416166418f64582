import StepKitBase

/// `visibleWhen` on a form's section header: while it does not hold, every item from the header
/// up to the next header is hidden (as if each item had that `visibleWhen` too; an item's own
/// `visibleWhen` must hold as well). `visibleWhen` on a task section (`type: section`) is
/// `Routing`'s to apply: the section is skipped while it does not hold.
struct FormHeaderRule: Sendable {
    /// The header's index in the form's `formItems`, for the checker's paths.
    let entry: Int
    let title: String
    /// The items it governs, in order.
    let items: [String]
    let predicate: Predicate
}

/// A form item some `visibleWhen` governs: its section header's condition and its own (either
/// may be absent). Shown while both hold.
struct GovernedItem: Sendable {
    let identifier: String
    let header: Predicate?
    let own: Predicate?

    func isVisible(_ answers: some AnswerLookup) -> Bool {
        (header?.evaluate(answers) ?? true) && (own?.evaluate(answers) ?? true)
    }
}
