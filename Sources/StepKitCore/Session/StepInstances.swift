import StepKitBase

/// The instances of each repeating block of steps (`Session+StepBlocks.swift`): per block (its
/// place in `TaskRules.stepBlocks`), how many instances were made, which one the participant is
/// in, and the answers of every other instance.
///
/// The current instance's answers are the block's steps' answers in `AnswerStore`, so whatever
/// reads a step's answer (set_answer, conditions, the state) reads the instance the participant
/// is in; moving into another instance (`Session.switchInstance`) parks them here and brings
/// that instance's back. A block not listed has made no instance and is in its first.
struct StepInstances: Sendable, Equatable {
    struct Block: Sendable, Equatable {
        /// The instances made: added, or entered by navigation (at least one more than the last
        /// instance that holds answers). The block has at least its `minCount` and its `count`.
        var made = 0
        /// The instance the participant is in (or was in last).
        var current = 0
        /// The answers of every instance but the current one, by instance then step index;
        /// never an empty entry.
        var parked: [Int: [Int: JSON]] = [:]

        var isDefault: Bool { made == 0 && current == 0 && parked.isEmpty }
    }

    private(set) var blocks: [Int: Block] = [:]

    init() {}

    subscript(block n: Int) -> Block {
        get { blocks[n] ?? Block() }
        set { blocks[n] = newValue.isDefault ? nil : newValue }
    }

    var isEmpty: Bool { blocks.isEmpty }

    /// The instance block `n` is in, read without copying its entry (every condition reading a
    /// block's step asks).
    func current(_ n: Int) -> Int { blocks[n]?.current ?? 0 }

    /// The instances block `n` made.
    func made(_ n: Int) -> Int { blocks[n]?.made ?? 0 }

    /// Changes block `n`'s entry in place: taken out of the table first, so its parked answers
    /// are changed without a copy of every instance's (what a switch of instance did at first:
    /// a third of a step's instructions with 100 instances).
    mutating func modify<R>(_ n: Int, _ body: (inout Block) -> R) -> R {
        var entry = blocks.removeValue(forKey: n) ?? Block()
        let result = body(&entry)
        if !entry.isDefault { blocks[n] = entry }
        return result
    }

    /// How many instances each block made, with no answers parked and every block in its first
    /// instance: what the replay of a restore starts from.
    var madeOnly: StepInstances {
        var out = StepInstances()
        for (n, block) in blocks { out[block: n] = Block(made: block.made) }
        return out
    }

    /// Checks that every block is one of the task's, its instance and parked instances within its
    /// `maxCount` and below the instances made, no instance parked empty or as the current one,
    /// and only the block's own steps parked. Debug builds only.
    func _checkInvariants(task: Task) {
        #if DEBUG
        for (n, block) in blocks {
            precondition(!block.isDefault, "block \(n) keeps a default entry")
            guard let definition = task.rules.stepBlocks[ifPresent: n] else { preconditionFailure("instances of block \(n), which the task does not have") }
            precondition(block.made <= definition.bounds.maxCount, "block \(n) made \(block.made) instances, past its maxCount")
            precondition(block.current >= 0 && block.current < definition.bounds.maxCount, "block \(n)'s current instance is within its maxCount")
            for (k, answers) in block.parked {
                precondition(k != block.current, "block \(n) parks its current instance")
                precondition(k >= 0 && k < block.made, "block \(n) parks instance \(k), which was never made")
                precondition(!answers.isEmpty, "block \(n) parks an empty instance \(k)")
                for step in answers.keys { precondition(definition.contains(step), "block \(n) parks step \(step), which is not one of its steps") }
            }
        }
        #endif
    }
}
