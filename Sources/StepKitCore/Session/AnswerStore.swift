import StepKitBase

/// A run's answers by step: the latest answer of every step that has one, on the path or not
/// (kept to prefill a step visited again; a form's answer is an object of its items' answers),
/// and the answers going back set aside.
///
/// Going back to an earlier visit of a step (a loop) shows that visit's own answer; going
/// forward to the step again brings the later answer back, so nothing typed is lost.
struct AnswerStore: Sendable, Equatable {
    /// Per step: its latest answer.
    private(set) var latest: IndexTable<JSON> = [:]
    /// Per step: answers of later visits that going back took off the path, most recent last.
    /// Never an empty list: a step with none has no entry.
    private(set) var later: IndexTable<[JSON]> = [:]

    init() { _ = AnswerStore.storageTypeReady }

    /// The Swift runtime makes the table's storage type (the buffer class of `[JSON?]`) from its
    /// mangled name the first time a process grows a table: about 35k instructions, once, which
    /// fell on the first answer the process stored, inside a step (`benchmarks/README.md`, "Wave
    /// 6: the no-output step"). A session's opening does it instead, with the process's other
    /// first-call work (the run's first `IndexTable<JSON>` growth, on a table thrown away).
    private static let storageTypeReady: Bool = {
        var table = IndexTable<JSON>()
        table[0] = .null
        return table.count == 1
    }()

    /// Answers as restored (`Restoration`); an empty list of later answers is no entry.
    init(latest: IndexTable<JSON>, later: IndexTable<[JSON]>) {
        self.latest = latest
        for (step, list) in later where !list.isEmpty { self.later[step] = list }
    }

    /// Step `index`'s latest answer.
    subscript(index: Int) -> JSON? {
        get { latest[index] }
        set { latest[index] = newValue }
    }

    /// Going back from a later visit of step `index` to an earlier one that answered `earlier`:
    /// the later answer is set aside, and the earlier one is the step's answer again.
    mutating func setAside(step index: Int, restoring earlier: JSON?) {
        if let answer = latest[index] { later[index, default: []].append(answer) }
        latest[index] = earlier
    }

    /// Arriving at step `index` again: the answer set aside last (if any) is its answer again.
    mutating func bringBack(step index: Int) {
        // Looked up before it is changed: a `?.popLast()` through the table's modify accessor
        // costs as much on a miss (nearly every arrival) as on a hit.
        guard !later.isEmpty, var list = later[index], let answer = list.popLast() else { return }
        latest[index] = answer
        later[index] = list.isEmpty ? nil : list
    }

    /// Checks that no step keeps an empty list of later answers and that every step indexed is
    /// one of the task's `stepCount` steps. Debug builds only.
    func _checkInvariants(stepCount: Int) {
        #if DEBUG
        for (step, _) in latest { precondition(step >= 0 && step < stepCount, "an answer for step \(step), past the task") }
        for (step, list) in later {
            precondition(step >= 0 && step < stepCount, "later answers for step \(step), past the task")
            precondition(!list.isEmpty, "step \(step) keeps an empty list of later answers")
        }
        #endif
    }
}
