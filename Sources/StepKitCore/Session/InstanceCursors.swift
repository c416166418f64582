import StepKitBase

/// Which instance of each repeating block the participant is in (`Session+Instances.swift`):
/// per step, per block (a form's group or repeating item by its identifier; a repeating
/// question by the empty name; a repeating group inside a group by `outer.inner`, within the
/// outer instance the participant is in), the instance's index from 0. A block not listed is in
/// its first instance. The instances themselves are the block's answer (an array, `AnswerStore`).
struct InstanceCursors: Sendable, Equatable {
    private(set) var current: IndexTable<[String: Int]> = [:]

    init() {}

    /// The instance block `block` of step `step` is in.
    subscript(step step: Int, block block: String) -> Int {
        current[step]?[block] ?? 0
    }

    /// Moves block `block` of step `step` into instance `index` (0 is the default, not kept).
    mutating func move(step: Int, block: String, to index: Int) {
        var blocks = current[step] ?? [:]
        blocks[block] = index == 0 ? nil : index
        current[step] = blocks.isEmpty ? nil : blocks
    }

    var isEmpty: Bool { current.isEmpty }

    /// As saved (`Restoration`): `{step: {block: index}}`, null when every block is in its first.
    func json(in task: Task) -> JSON {
        guard !current.isEmpty else { return .null }
        var steps = JSONObject()
        for (index, blocks) in current {
            guard let step = task.step(at: index) else { continue }
            var object = JSONObject()
            for key in blocks.keys.sorted() { object[key.isEmpty ? step.identifier : key] = .int(Int64(blocks[key] ?? 0)) }
            steps[step.identifier] = .object(object)
        }
        return .object(steps)
    }

    /// Checks that every cursor is of one of the task's steps, names one of its repeating
    /// blocks and is within that block's `maxCount`. Debug builds only.
    func _checkInvariants(task: Task) {
        #if DEBUG
        for (step, blocks) in current {
            precondition(!blocks.isEmpty, "step \(step) keeps an empty list of cursors")
            let repeats = task.rules.repeats[step] ?? []
            for (block, index) in blocks {
                if let dot = block.firstIndex(of: ".") {
                    // An inner block's cursor: a repeating group inside one of the step's.
                    let outer = String(block[..<dot]), inner = String(block[block.index(after: dot)...])
                    guard let found = repeats.first(where: { $0.item == outer }),
                          let nested = Session.nestedGroups(of: task.step(at: step)?.format(item: found.item)).first(where: { $0.identifier == inner }) else {
                        preconditionFailure("a cursor for \"\(block)\" of step \(step), which is no inner repeating block")
                    }
                    precondition(index > 0 && index < nested.format.bounds.maxCount, "cursor \(index) of \"\(block)\" is within its maxCount")
                    continue
                }
                guard let found = repeats.first(where: { ($0.item ?? "") == block }) else {
                    preconditionFailure("a cursor for \"\(block)\" of step \(step), which is no repeating block")
                }
                precondition(index > 0 && index < found.bounds.maxCount, "cursor \(index) of \"\(block)\" is within its maxCount")
            }
        }
        #endif
    }
}
