import StepKitBase

/// How expressions read repeating blocks in a session (`Expressions/Instances.swift`): how many
/// instances a block has, one instance's entry with the items its per-instance `visibleWhen`
/// hides left out, and which items those rules hide.
///
/// A block's instances are read as the block's answer is: on the path (a block whose step is off
/// the path, or was skipped, has none), the live answer on the current step. Its count is the
/// state's (`Session+Instances`): the answer's entries, `minCount` and the `count` expression,
/// whichever is most.
extension Session {
    func repeatingBlock(_ reference: BlockReference) -> RepeatingBlock? {
        switch reference {
        case .answer(let step, let item): return task.rules.repeats[step]?.first { $0.item == item }
        case .section: return nil
        // An inner block's instances are read through its outer one's (`innerInstances`).
        case .inner(let step, let outer, _, _): return task.rules.repeats[step]?.first { $0.item == outer }
        }
    }

    /// The block's instances as expressions count them, its entries read through `lookup`.
    func expressionInstanceCount(_ reference: BlockReference, on lookup: some AnswerLookup) -> Int {
        if case .section(let n, _) = reference { return sectionExpressionCount(n) }
        guard let block = repeatingBlock(reference) else { return 0 }
        let step = reference.step
        guard let position = path.latestPosition(of: step), path[ifPresent: position]?.skipped == false else { return 0 }
        var count = max(lookup.answerValue(reference.selector)?.arrayValue?.count ?? 0, block.bounds.minCount)
        if let expression = block.count, case .number(let d) = countValue(expression) {
            count = max(count, Session.clampedCount(d, block))
        }
        return min(count, block.bounds.maxCount)
    }

    /// A `count` expression's value on the stored answers. It reads no instances (the compiler
    /// refuses one that does, directly or through calculations), so the calculations it reads
    /// are computed here alone: computing every calculation could reach an aggregate over this
    /// very block, which would ask for its count again.
    private func countValue(_ expression: Expression) -> ExpressionValue {
        let stored = StoredAnswers(self)
        let direct = ExpressionDependencies(of: expression).calculations
        guard !direct.isEmpty else { return expression.evaluate(stored) }
        let list = task.calculations.list
        var needed = Set<Int>()
        var pending = direct
        while let i = pending.popLast() {
            guard needed.insert(i).inserted, let c = list[ifPresent: i] else { continue }
            pending += c.dependencies.calculations
        }
        var values = Array(repeating: ExpressionValue.null, count: list.count)
        for i in task.calculations.order where needed.contains(i) && list.indices.contains(i) {
            var evaluator = ExpressionEvaluator(stored, calculations: values)
            values[i] = evaluator.value(list[i].expression)
        }
        var evaluator = ExpressionEvaluator(stored, calculations: values)
        return evaluator.value(expression)
    }

    /// Instance `index` of the block as `lookup` shows the block's answer; `hiding`: the items
    /// its per-instance `visibleWhen` hides now on the current step are left out.
    func expressionInstanceEntry(_ reference: BlockReference, _ index: Int, on lookup: some AnswerLookup, hiding: Bool) -> JSON? {
        if case .section(let n, _) = reference { return sectionEntry(n, index, hiding: hiding) }
        guard index >= 0, let entry = lookup.answerValue(reference.selector)?.arrayValue?[ifPresent: index] else { return nil }
        guard hiding, case .answer(let step, let item?) = reference, currentIndex == step, !isFinished,
              case .object(var object) = entry else { return entry }
        for hidden in hiddenInInstance(step: step, block: item, index) { object[hidden] = nil }
        return .object(object)
    }

    /// The items of instance `index` of block `block` (a group of step `step`) that their
    /// `visibleWhen` hides now, in the group's order: evaluated in that instance, on the stored
    /// answers (as every `visibleWhen` is, so no item's visibility depends on another's).
    func hiddenInInstance(step: Int, block: String, _ index: Int) -> [String] {
        guard let rules = task.rules.instanceVisibility[step]?.first(where: { $0.block == block }) else { return [] }
        let stored = StoredAnswers(self)
        let scope = InstanceScope(.answer(step: step, item: block), index)
        return rules.items.compactMap { $0.predicate.evaluate(stored, in: scope) ? nil : $0.item }
    }

    /// What the per-instance rules of step `index` hide now, as `block[k].item` entries of the
    /// visit's hidden items (what closing the visit leaves out of each instance, and what the
    /// required answers skip).
    func instanceHiddenItems(step index: Int) -> [String] {
        guard let list = task.rules.instanceVisibility[index], let blocks = task.rules.repeats[index] else { return [] }
        var hidden: [String] = []
        for entry in list {
            guard let block = blocks.first(where: { $0.item == entry.block }) else { continue }
            for k in 0..<instanceCount(step: index, block: block) {
                for item in hiddenInInstance(step: index, block: entry.block, k) { hidden.append(Session.instanceKey(entry.block, k, item)) }
            }
        }
        return hidden
    }

    /// `block[k].item`: an item of one instance, as the visit's hidden items and problems' paths
    /// name it.
    static func instanceKey(_ block: String, _ index: Int, _ item: String) -> String {
        block + "[" + String(index) + "]." + item
    }

    /// Leaves the `block[k].item` entries of `hidden` out of a form's answer's instances (the
    /// other entries name the form's own items and are already left out).
    static func removeInstanceItems(_ object: inout JSONObject, hiding hidden: [String]) {
        for key in hidden {
            guard let open = key.firstIndex(of: "["), let close = key[open...].firstIndex(of: "]"),
                  key.index(after: close) < key.endIndex, key[key.index(after: close)] == ".",
                  let k = Int(key[key.index(after: open)..<close]) else { continue }
            let block = String(key[..<open])
            let item = String(key[key.index(close, offsetBy: 2)...])
            guard case .array(var list)? = object[block], case .object(var instance)? = list[ifPresent: k],
                  instance[item] != nil else { continue }
            instance[item] = nil
            list[k] = .object(instance)
            object[block] = .array(list)
        }
    }

    /// The state's `hidden` of a block: per instance, the items its rules hide (nil: the block
    /// has no per-instance `visibleWhen`).
    func instancesHiddenJSON(step index: Int, block: RepeatingBlock, count: Int) -> JSON? {
        guard let item = block.item, task.rules.instanceVisibility[index]?.contains(where: { $0.block == item }) == true else { return nil }
        return .array((0..<count).map { k in .array(hiddenInInstance(step: index, block: item, k).map { .string($0) }) })
    }
}
