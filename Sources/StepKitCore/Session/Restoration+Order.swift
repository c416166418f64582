import StepKitBase

/// The randomized order in restoration data: the seed, and the order of every list the task
/// shuffles (choices, items, a section's steps), which must be exactly what the seed gives (docs/randomization.md).
extension Restoration {
    /// The saved seed, or nil when none was saved. A task that shuffles needs one.
    static func savedSeed(_ value: JSON?, task: Task, required: Bool = true) throws(StepKitError) -> UInt64? {
        guard let value, !value.isNull else {
            if task.rules.shuffles && required {
                throw refuse("damaged", "The task shuffles, but the restoration data has no \"randomization\" seed.", .root.key("randomization"))
            }
            return nil
        }
        guard let object = value.objectValue, case .int(let seed)? = object["seed"], seed >= 0,
              UInt64(seed) <= Randomization.maximumSeed, object["orders"]?.objectValue != nil, object.count == 2 else {
            throw refuse("damaged", "\"randomization\" is {\"seed\": a whole number from 0 to \(Randomization.maximumSeed), \"orders\": {...}}.", .root.key("randomization"))
        }
        return UInt64(seed)
    }

    /// The replay check of the order: each saved order is the one the seed gives, and every
    /// list the task shuffles has one. Data whose order the seed does not give is refused (an
    /// edited order, or a seed changed without its orders).
    static func checkOrder(_ value: JSON?, task: Task, seed: UInt64?) throws(StepKitError) {
        guard let seed, let saved = value?.objectValue?["orders"]?.objectValue else { return }
        let expected = Randomization.orders(of: task, seed: seed)
        for (identifier, order) in expected.entries {
            let path = JSONPath.root.key("randomization").key("orders").key(identifier)
            guard let given = saved[identifier] else {
                throw refuse("orderMismatch", "The restoration data has no order for \"\(identifier)\", which the task shuffles.", path)
            }
            guard given == order else {
                throw refuse("orderMismatch", "The saved order of \"\(identifier)\" is not the one the seed \(seed) gives.", path)
            }
        }
        guard saved.count == expected.count else {
            throw refuse("orderMismatch", "The restoration data has orders for steps or sections the task does not shuffle.", .root.key("randomization").key("orders"))
        }
    }
}
