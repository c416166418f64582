import StepKitBase

/// The answers predicates, expressions and bounds read from a session.
///
/// The session is read where it is, never through a copy or a pointer: the readers are
/// non-mutating methods and `borrowing` parameters (`Navigator`), each handed the session by
/// address (`PassedByAddress`), and `StoredAnswers` holds the session it is made from for the
/// length of one evaluation (`docs/architecture.md`, "A session's parts", has the measurement).

/// For each step, its latest visit on the path (the current one with its live answer); steps
/// off the path and skipped visits are unanswered.
extension Session: AnswerLookup {
    func latestAnswer(step index: Int) -> JSON? {
        guard let position = path.latestPosition(of: index), let visit = path[ifPresent: position] else { return nil }
        if visit.skipped { return nil }
        // A repeating section's step reads as answered only in the instance the block is in.
        if let n = task.rules.blockOfStep[index], visit.instance != stepInstances.current(n) { return nil }
        return position == path.count - 1 && !isFinished ? answers[index] : visit.answer
    }

    /// Form item `item`'s answer; a hidden item of the current visit reads as unanswered
    /// (closed visits already left hidden items out).
    func itemAnswer(step index: Int, item: String) -> JSON? {
        guard let value = latestAnswer(step: index)?.objectValue?[item] else { return nil }
        if currentIndex == index && !isFinished && !isVisible(item, step: index) { return nil }
        return value
    }

    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? {
        switch selector {
        case .step(let index):
            guard let value = latestAnswer(step: index), let format = task.step(at: index)?.format() else { return nil }
            return (value, format.resultType)
        case .item(let index, let item):
            guard let value = itemAnswer(step: index, item: item),
                  let format = task.step(at: index)?.format(item: item) else { return nil }
            return (value, format.resultType)
        case .external(let taskID, let step, let item):
            return external.answer(task: taskID, step: step, item: item)
        case .instance(let read):
            return read.value(self, .none).map { ($0, read.type) }
        }
    }

    func instanceCount(_ block: BlockReference) -> Int { expressionInstanceCount(block, on: self) }

    func instanceEntry(_ block: BlockReference, _ index: Int) -> JSON? {
        expressionInstanceEntry(block, index, on: self, hiding: true)
    }
}

extension Session {
    /// Whether `predicate` holds on the answers as stored (as `StoredAnswers` reads them), read
    /// from the session where it is. A comparison of a question's or a form item's answer (nearly
    /// every `visibleWhen`) reads the answer in place; only an expression, or a comparison of an
    /// instance or of another task's result, goes through a `StoredAnswers`, which holds a copy
    /// of the session: made for every form's visibility check, the copy and its release were
    /// about 1,350 instructions a form (`benchmarks/README.md`, "Wave 6: the no-output step").
    func holdsOnStoredAnswers(_ predicate: Predicate) -> Bool {
        switch predicate {
        case .all(let ps): return ps.allSatisfy { holdsOnStoredAnswers($0) }
        case .any(let ps): return ps.contains { holdsOnStoredAnswers($0) }
        case .not(let p): return !holdsOnStoredAnswers(p)
        case .always(let b): return b
        case .compare(let c):
            // What `StoredAnswers.answerValue` reads for these two selectors.
            guard let type = c.type else { return c.evaluate(StoredAnswers(self)) }
            switch c.selector {
            case .step(let index): return c.holds(for: latestAnswer(step: index).map { ($0, type) })
            case .item(let index, let item): return c.holds(for: latestAnswer(step: index)?.objectValue?[item].map { ($0, type) })
            case .external, .instance: return c.evaluate(StoredAnswers(self))
            }
        case .expression: return predicate.evaluate(StoredAnswers(self))
        }
    }
}

/// The answers as stored, with no item hidden: what `visibleWhen` reads, so that one item's
/// visibility never depends on another's (no cycles to chase).
struct StoredAnswers: AnswerLookup {
    private let session: Session

    init(_ session: borrowing Session) { self.session = copy session }

    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)? {
        switch selector {
        case .item(let index, let item):
            guard let value = answerValue(selector),
                  let format = session.task.step(at: index)?.format(item: item) else { return nil }
            return (value, format.resultType)
        default:
            return session.answer(selector)
        }
    }

    func answerValue(_ selector: Selector) -> JSON? {
        switch selector {
        case .item(let index, let item): return session.latestAnswer(step: index)?.objectValue?[item]
        case .instance(let read): return read.value(self, .none)
        default: return session.answerValue(selector)
        }
    }

    func calculationValues() -> [ExpressionValue] {
        session.calculationCache.values(session.task.calculations, view: .stored, lookup: self)
    }

    var evaluationTime: Int64 { session.evaluationTime }

    func instanceCount(_ block: BlockReference) -> Int { session.expressionInstanceCount(block, on: self) }

    func instanceEntry(_ block: BlockReference, _ index: Int) -> JSON? {
        session.expressionInstanceEntry(block, index, on: self, hiding: false)
    }
}
