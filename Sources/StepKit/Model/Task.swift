/// A compiled task: immutable, validated once, shared by every session on any thread.
struct Task: Sendable {
    let identifier: String
    let steps: [Step]
    /// Step identifier to its index in `steps`: every look-up by identifier is O(1).
    let stepIndex: [String: Int]

    func step(at index: Int) -> Step? {
        steps.indices.contains(index) ? steps[index] : nil
    }

    /// `stepkit_task_info`.
    var info: JSON {
        .object([
            "identifier": .string(identifier),
            "stepCount": .int(Int64(steps.count)),
            "steps": .array(steps.map { .object(["identifier": .string($0.identifier), "type": .string($0.type)]) }),
        ])
    }
}
