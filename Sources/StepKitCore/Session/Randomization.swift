import StepKitBase

/// The run's seeded order (docs/randomization.md): which lists are shuffled (choices, a form's
/// items, a section's steps), the order each is shown in, and the seed. The order is a function of the seed and the task alone — PCG32
/// (`Support/PCG32.swift`) on a stream named after the list — so any host can compute it, and
/// restore recomputes it and refuses data that holds another.
enum Randomization {
    /// The largest seed: 2^53 − 1, so a seed is exact as a JSON number in every language.
    static let maximumSeed: UInt64 = (1 << 53) - 1

    /// A seed from the session options: a whole number from 0 to 2^53 − 1.
    static func seed(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> UInt64? {
        guard case .int(let i) = value else {
            d.error("wrongType", "\"seed\" is a whole number from 0 to \(maximumSeed), found \(value.typeName).", at: path)
            return nil
        }
        guard i >= 0, UInt64(i) <= maximumSeed else {
            d.error("outOfRange", "\"seed\" is a whole number from 0 to \(maximumSeed), found \(i).", at: path)
            return nil
        }
        return UInt64(i)
    }

    /// A seed drawn for a run opened without one.
    static func drawSeed() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next() & maximumSeed
    }

    /// One shuffled list of a step: a question's choices, a form's items, or a form item's
    /// choices. `name` names its PCG32 stream.
    struct List: Sendable {
        enum Kind: Sendable { case choices, items, steps }
        let kind: Kind
        /// The form item whose choices it is (nil: the question's, or the form's items).
        let item: String?
        let name: String
        let count: Int
        let pinned: Set<Int>
    }

    /// The shuffled lists of a step, in definition order.
    static func lists(of step: Step) -> [List] {
        var lists: [List] = []
        func choices(_ format: AnswerFormat, item: String?) {
            guard format.rules.isShuffled, let options = format.rules.choiceOptions else { return }
            let pinned = Set(options.indices.filter { options[$0].pinned })
            lists.append(List(kind: .choices, item: item, name: item.map { step.identifier + "/" + $0 } ?? step.identifier,
                              count: options.count, pinned: pinned))
        }
        switch step.content {
        case .message: break
        case .question(let format): choices(format, item: nil)
        case .form(let form):
            if step.presentation["shuffleItems"]?.boolValue == true, let entries = step.presentation["formItems"]?.arrayValue {
                // Section headers and pinned items stay where they are.
                let pinned = Set(entries.indices.filter { i in
                    let entry = entries[i].objectValue
                    return entry?["identifier"]?.stringValue == nil || entry?["pinned"]?.boolValue == true
                })
                lists.append(List(kind: .items, item: nil, name: step.identifier + "#items", count: entries.count, pinned: pinned))
            }
            for item in form.items { choices(item.format, item: item.identifier) }
        }
        return lists
    }

    /// Whether any step shuffles anything, or a section its steps (a run of such a task draws
    /// a seed).
    static func shuffles(_ task: Task) -> Bool {
        task.steps.contains { !lists(of: $0).isEmpty } || task.sections.contains(where: \.shuffled)
    }

    /// The list of a section's steps, named `section#steps`: its steps in definition order,
    /// those with `"pinned": true` staying in place; nil unless it shuffles its steps.
    static func list(of section: Section, _ steps: [Step]) -> List? {
        guard section.shuffled, section.firstStep <= section.lastStep, section.lastStep < steps.count else { return nil }
        let pinned = Set((section.firstStep...section.lastStep).filter { steps[$0].presentation["pinned"]?.boolValue == true }
            .map { $0 - section.firstStep })
        return List(kind: .steps, item: nil, name: section.identifier + "#steps", count: section.lastStep - section.firstStep + 1, pinned: pinned)
    }

    /// The run's step order under `seed` (`StepOrder`): every shuffled section's steps among
    /// its own positions, every other step where it is.
    static func stepOrder(of task: Task, seed: UInt64?) -> StepOrder {
        guard let seed, task.sections.contains(where: \.shuffled) else { return .definition }
        var stepAt = Array(task.steps.indices)
        for section in task.sections {
            guard let list = list(of: section, task.steps) else { continue }
            for (k, entry) in order(of: list, seed: seed).enumerated() { stepAt[section.firstStep + k] = section.firstStep + entry }
        }
        return StepOrder(stepAt: stepAt)
    }

    /// A shuffled section's order as JSON (the result's and the restoration data's
    /// `randomization.orders[section]`): `{"steps": [identifiers]}`; nil when it shuffles nothing.
    static func orderJSON(of section: Section, _ steps: [Step], seed: UInt64) -> JSON? {
        guard let list = list(of: section, steps) else { return nil }
        return .object(["steps": .array(order(of: list, seed: seed).map { .string(steps[section.firstStep + $0].identifier) })])
    }

    /// A list's order under `seed`: for each position, the index of the entry shown there.
    static func order(of list: List, seed: UInt64) -> [Int] {
        PCG32.order(count: list.count, pinned: list.pinned, seed: seed, name: list.name)
    }

    /// A step's presented order as JSON (the state's `order`, the result's and the restoration
    /// data's `randomization.orders`): `{"choices": [values]}` for a question,
    /// `{"items": [identifiers or null for headers], "itemChoices": {item: [values]}}` for a form;
    /// nil when the step shuffles nothing.
    static func orderJSON(of step: Step, seed: UInt64) -> JSON? {
        let lists = lists(of: step)
        guard !lists.isEmpty else { return nil }
        var object = JSONObject()
        var itemChoices = JSONObject()
        for list in lists {
            let order = order(of: list, seed: seed)
            switch list.kind {
            case .items:
                let entries = step.presentation["formItems"]?.arrayValue ?? []
                object["items"] = .array(order.map { entries[ifPresent: $0]?.objectValue?["identifier"] ?? .null })
            case .choices:
                let options = step.format(item: list.item)?.rules.choiceOptions ?? []
                let values = JSON.array(order.compactMap { options[ifPresent: $0]?.value })
                if let item = list.item { itemChoices[item] = values } else { object["choices"] = values }
            case .steps: break  // a section's, never a step's (`orderJSON(of:_:seed:)`)
            }
        }
        if itemChoices.count > 0 { object["itemChoices"] = .object(itemChoices) }
        return .object(object)
    }

    /// The order of every list the task shuffles under `seed`, by step or section identifier
    /// (the restoration data's `randomization.orders`; restore recomputes and compares it).
    static func orders(of task: Task, seed: UInt64) -> JSONObject {
        var orders = JSONObject()
        for step in task.steps {
            if let order = orderJSON(of: step, seed: seed) { orders[step.identifier] = order }
        }
        for section in task.sections {
            if let order = orderJSON(of: section, task.steps, seed: seed) { orders[section.identifier] = order }
        }
        return orders
    }
}
