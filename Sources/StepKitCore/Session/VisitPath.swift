import StepKitBase

/// The visits of a run in order, and the index that finds a step's latest visit in O(1).
///
/// Empty only when the task ended before showing any step (every step skipped by its rules);
/// otherwise the last visit is the current step. A collection of its visits (read as an array
/// is), changed only at its end: a visit is pushed on arriving and popped going back, and a
/// visit's own fields (its dates, answer, active run) change in place.
struct VisitPath: Sendable, RandomAccessCollection {
    private var visits: [Visit] = []
    /// Per step: the position of its latest visit, so predicates find it in O(1).
    private var latest: IndexTable<Int> = [:]
    /// Per position: the position of the same step's visit before it (-1: none), which becomes
    /// the step's latest visit again when this one is popped. Kept beside the visits rather
    /// than as a list per step, which cost an allocation on every visit.
    private var earlier: [Int] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { visits.count }

    /// A visit, read or changed in place; its step never changes (push and pop do that).
    subscript(position: Int) -> Visit {
        get { visits[position] }
        _modify {
            let step = visits[position].stepIndex
            yield &visits[position]
            assert(visits[position].stepIndex == step, "a visit keeps its step: push and pop change the path's steps")
        }
    }

    /// The position of step `index`'s latest visit, or nil when the path has none.
    func latestPosition(of index: Int) -> Int? { latest[index] }

    /// The current visit's step, kept beside the visits (`last` copies the visit whole,
    /// retaining its answer, hidden items and arrival): read several times a call, it is a
    /// stored value the callers load in place, where reading it from the array was a call each.
    private(set) var currentStep: Int?

    /// Whether the current visit's active run holds a game, read in place.
    var currentHasGame: Bool { visits.indices.last.map { visits[$0].hasGame } ?? false }

    mutating func push(_ visit: consuming Visit) {
        earlier.append(latest.updateValue(visits.count, forKey: visit.stepIndex) ?? -1)
        currentStep = visit.stepIndex
        visits.append(visit)
    }

    /// Removes the current visit; the step's visit before it (if any) is its latest again.
    mutating func pop() {
        guard let visit = visits.popLast() else { return }
        let before = earlier.popLast() ?? -1
        latest[visit.stepIndex] = before >= 0 ? before : nil
        currentStep = visits.indices.last.map { visits[$0].stepIndex }
    }

    /// Changes the current visit in place (nothing when the path is empty).
    mutating func updateLast(_ change: (inout Visit) -> Void) {
        guard let last = visits.indices.last else { return }
        change(&visits[last])
    }

    /// Changes the current visit in place with a change that may be refused (nil when the path
    /// is empty); a refused change must leave the visit as it was.
    mutating func changeLast<R>(_ change: (inout Visit) throws(StepKitError) -> R) throws(StepKitError) -> R? {
        guard let last = visits.indices.last else { return nil }
        return try change(&visits[last])
    }

    /// Checks that the index agrees with the visits: every step's latest position holds a visit
    /// of that step and no later visit is of it, and each visit's earlier position is the
    /// previous visit of its step. Debug builds only (the tests call it after every operation).
    func _checkInvariants() {
        #if DEBUG
        precondition(earlier.count == visits.count, "one earlier position per visit")
        precondition(currentStep == visits.last?.stepIndex, "the current step is the last visit's")
        var seen: [Int: Int] = [:]
        for (position, visit) in visits.enumerated() {
            precondition(earlier[position] == (seen[visit.stepIndex] ?? -1),
                         "visit \(position)'s earlier visit is the previous visit of its step")
            seen[visit.stepIndex] = position
        }
        precondition(latest.count == seen.count, "a latest position for every step on the path, and only those")
        for (step, position) in seen { precondition(latest[step] == position, "step \(step)'s latest visit is at \(position)") }
        #endif
    }
}
