import StepKitBase

/// How navigation reached a visit's step: the rules, branches and skip rules involved, for
/// authors debugging a task (the state's `arrival`, and each saved visit's).
///
/// Navigation writes its decisions down as indexes (`ArrivalNote`), which costs nothing to build
/// on a move; they become JSON only when a state or a save shows them (`json(in:)`). Restored
/// visits keep the JSON they were saved with, which the replay has checked is what navigation
/// decides (`Restoration.checkAllowed`).
enum Arrival: Sendable, Equatable {
    /// As navigation decided it, in order.
    case notes(ArrivalNotes)
    /// As restoration data carried it (JSON null when it carried none).
    case saved(JSON)

    /// The arrival as the state and restoration data show it: an array of notes.
    func json(in task: Task) -> JSON {
        switch self {
        case .notes(let notes): return .array(notes.map { $0.json(in: task) })
        case .saved(let json): return json
        }
    }
}

/// The decisions of one move, in order. Most moves make none or one (a step's rule), so one
/// is kept inline and only a second allocates: as an array, every move with a rule allocated
/// one (about 0.2k instructions a step, `benchmarks/README.md`, seventh round). An enum rather
/// than a first note beside an array: a move without notes then copies and destroys a tag.
enum ArrivalNotes: Sendable, Equatable, Sequence, ExpressibleByArrayLiteral {
    case none
    case one(ArrivalNote)
    case many([ArrivalNote])

    init() { self = .none }

    init(arrayLiteral notes: ArrivalNote...) {
        self = .none
        for note in notes { append(note) }
    }

    var isEmpty: Bool { if case .none = self { return true } else { return false } }

    mutating func append(_ note: ArrivalNote) {
        switch self {
        case .none: self = .one(note)
        case .one(let first): self = .many([first, note])
        case .many(var notes):
            self = .none  // lets go of the array, so appending does not copy it
            notes.append(note)
            self = .many(notes)
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let notes: ArrivalNotes
        fileprivate var position = 0

        mutating func next() -> ArrivalNote? {
            defer { position += 1 }
            switch notes {
            case .none: return nil
            case .one(let note): return position == 0 ? note : nil
            case .many(let list): return list[ifPresent: position]
            }
        }
    }

    func makeIterator() -> Iterator { Iterator(notes: self) }
}

/// One decision navigation made on its way to a step.
enum ArrivalNote: Sendable, Equatable {
    /// The rule of a step or section (`owner`) governed the move, and `branch` of it was taken.
    case rule(Routing.Owner, RuleBranch)
    /// Section `index` was passed over.
    case skippedSection(Int, Routing.SkipReason)
    /// Step `index` was passed over by its skip rule.
    case skippedStep(Int)
    /// Step `index`'s modifier applied.
    case modified(Int)
    /// The skip rules went round in a circle without showing a step, so the task ended.
    case skipLoop
    /// Navigation ended the task.
    case end

    /// Which way a rule sent navigation.
    enum RuleBranch: Sendable, Equatable {
        /// A direct rule's destination.
        case direct
        /// Branch `index` of a predicate rule.
        case branch(Int)
        /// A predicate rule's `defaultDestination`, no branch holding.
        case defaultDestination
        /// A predicate rule with no default, no branch holding: the next step in order.
        case nextInOrder
    }

    func json(in task: Task) -> JSON {
        func step(_ index: Int) -> JSON { .string(task.step(at: index)?.identifier ?? "") }
        switch self {
        case .rule(let owner, let branch):
            let rule = JSON.string(task.routing.identifier(of: owner))
            switch branch {
            case .direct: return .object(["rule": rule, "type": .string("direct")])
            case .branch(let i): return .object(["rule": rule, "type": .string("predicate"), "branch": .int(Int64(i))])
            case .defaultDestination: return .object(["rule": rule, "type": .string("predicate"), "branch": .string("defaultDestination")])
            case .nextInOrder: return .object(["rule": rule, "type": .string("predicate"), "branch": .string("nextInOrder")])
            }
        case .skippedSection(let s, let reason):
            return .object(["skipped": .string(task.section(at: s)?.identifier ?? ""), "by": .string(reason.rawValue)])
        case .skippedStep(let index):
            return .object(["skipped": step(index), "by": .string(Routing.SkipReason.skipRule.rawValue)])
        case .modified(let index):
            return .object(["modified": step(index), "by": .string("stepModifier")])
        case .skipLoop:
            return .object(["note": .string("Skip rules loop without showing a step; the task ends.")])
        case .end:
            return .object(["end": .bool(true)])
        }
    }
}
