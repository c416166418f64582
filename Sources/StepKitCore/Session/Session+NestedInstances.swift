import StepKitBase

/// Repeating groups inside repeating groups (a medication, and for each medication its doses):
/// the inner block's instances are an array inside each instance of the outer one
/// (`{"medication": [{"name": "A", "doses": [{"amount": 5}, {"amount": 10}]}]}`), so everything
/// an answer carries (results, restoration data, migration, the QuestionnaireResponse) nests by
/// itself. What this file adds is the calls and the state: an inner block is named by its path,
/// `medication.doses`, and its instances are those of the outer instance the participant is in;
/// `medication[1].doses` names the outer instance too, and is refused unless it is that one
/// (`outsideOuterInstance`: enter the outer instance first). Groups nest one level
/// (`TaskCompiler+Repeats`), so nothing here recurses.
extension Session {
    /// An inner block named in a call: the outer block (a repeating group of the current form
    /// step), the inner group's identifier and format, and the outer instance it is read in.
    struct NestedBlock {
        let step: Int
        let stepIdentifier: String
        let outer: RepeatingBlock
        let inner: String
        let format: RepeatingFormat
        /// The outer instance the participant is in (whose inner instances the call means).
        let outerIndex: Int

        /// The block's name in the state and in events: `outer.inner`.
        var name: String { (outer.item ?? "") + "." + inner }
        /// Which instances of it a message means: those in the outer instance.
        var inOuterInstance: String { " in instance \(outerIndex) of \"\(outer.item ?? "")\"" }
        /// Its cursor's key in `instancesCursor`.
        var cursorKey: String { Session.nestedCursorKey(outer: outer.item ?? "", inner: inner) }
    }

    /// The inner repeating groups of a block: the repeating groups among its group's items.
    static func nestedGroups(of format: AnswerFormat?) -> [(identifier: String, format: RepeatingFormat)] {
        guard let r = format?.rules as? RepeatingFormat, case .group(let form) = r.content else { return [] }
        return form.items.compactMap { item in
            guard let nested = item.format.repeating, case .group = nested.content else { return nil }
            return (item.identifier, nested)
        }
    }

    /// The inner block `name` (`outer.inner` or `outer[k].inner`) of the current step, nil when
    /// `name` is no path (a block of the step itself). Refuses a path that names no inner group
    /// of the step, or an outer instance the participant is not in.
    func currentNestedBlock(_ name: String?) throws(StepKitError) -> NestedBlock? {
        guard let name, let dot = name.firstIndex(of: ".") else { return nil }
        var outerName = String(name[..<dot])
        let innerName = String(name[name.index(after: dot)...])
        var named: Int?
        if let open = outerName.firstIndex(of: "["), outerName.hasSuffix("]") {
            let digits = outerName[outerName.index(after: open)..<outerName.index(before: outerName.endIndex)]
            guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let k = Int(digits) else {
                throw StepKitError(.invalidArgument, code: "unknownBlock", message: "\"\(name)\" is no block path: write \"group.inner\" or \"group[k].inner\" (k an instance index from 0).")
            }
            named = k
            outerName = String(outerName[..<open])
        }
        let (index, step, outer) = try currentBlock(outerName)
        guard let nested = Session.nestedGroups(of: step.format(item: outer.item)).first(where: { $0.identifier == innerName }) else {
            let names = Session.nestedGroups(of: step.format(item: outer.item)).map { "\"" + outerName + "." + $0.identifier + "\"" }
            throw StepKitError(.invalidArgument, code: "unknownBlock",
                               message: "The repeating group \"\(outerName)\" has no repeating group \"\(innerName)\"" + (names.isEmpty ? "." : "; it has " + names.joined(separator: ", ") + "."))
        }
        let current = min(instancesCursor[step: index, block: outer.item ?? ""], max(instanceCount(step: index, block: outer) - 1, 0))
        if let named, named != current {
            let count = instanceCount(step: index, block: outer)
            try Session.requireInstance(named, of: count, in: outerName)
            throw stateError("outsideOuterInstance", "The participant is in instance \(current) of \"\(outerName)\", not \(named): enter it (stepkit_session_enter_instance \"\(outerName)\" \(named)) before changing its \"\(innerName)\".")
        }
        return NestedBlock(step: index, stepIdentifier: step.identifier, outer: outer, inner: innerName, format: nested.format, outerIndex: current)
    }

    /// The inner block's instances in its outer instance, as stored.
    func storedInstances(_ n: NestedBlock) -> [JSON] {
        storedInstances(step: n.step, block: n.outer)[ifPresent: n.outerIndex]?.objectValue?[n.inner]?.arrayValue ?? []
    }

    /// How many instances the inner block has in its outer instance: its answer's entries, at
    /// least `minCount` (an inner group has no `count` expression).
    func instanceCount(_ n: NestedBlock) -> Int {
        max(storedInstances(n).count, n.format.bounds.minCount)
    }

    /// The cursor key of an inner block: which of its instances the participant is in, within
    /// the outer instance they are in (moving in the outer block starts it again at 0).
    static func nestedCursorKey(outer: String, inner: String) -> String { outer + "." + inner }

    /// Writes the inner block's instances into its outer instance (the outer instances before it
    /// made, empty), as a change of the step's answer.
    private mutating func setNestedInstances(_ instances: [JSON], _ n: NestedBlock) {
        var outerList = storedInstances(step: n.step, block: n.outer)
        while outerList.count <= n.outerIndex { outerList.append(.object(JSONObject())) }
        var object = outerList[n.outerIndex].objectValue ?? JSONObject()
        object[n.inner] = instances.isEmpty ? nil : .array(instances)
        outerList[n.outerIndex] = .object(object)
        setInstances(outerList, step: n.step, block: n.outer, stepIdentifier: n.stepIdentifier)
    }

    /// An instance event of an inner block: its path and the outer instance it is in.
    private mutating func emitNested(_ kind: String, _ n: NestedBlock, _ index: Int) {
        emit(kind, ["step": .string(n.stepIdentifier), "block": .string(n.name), "outerIndex": .int(Int64(n.outerIndex)), "index": .int(Int64(index))])
    }

    /// Adds an instance after the last to the inner block, in the outer instance the participant
    /// is in, and moves into it.
    mutating func addNestedInstance(_ n: NestedBlock) throws(StepKitError) {
        let count = instanceCount(n)
        guard count < n.format.bounds.maxCount else {
            throw stateError("tooManyInstances", "\"\(n.name)\" has \(count) instances\(n.inOuterInstance), its maxCount: no more may be added.")
        }
        var instances = storedInstances(n)
        while instances.count < count + 1 { instances.append(.object(JSONObject())) }
        setNestedInstances(instances, n)
        instancesCursor.move(step: n.step, block: n.cursorKey, to: count)
        emitNested("instanceAdded", n, count)
        clock.touched = true
        _checkInvariants()
    }

    /// How many instances inner block `n` has, when `position` is one of them; an index out of
    /// range is refused with `instanceOutOfRange`, naming the range.
    func nestedInstanceCount(_ n: NestedBlock, requiring position: Int) throws(StepKitError) -> Int {
        let count = instanceCount(n)
        try Session.requireInstance(position, of: count, in: n.name, within: n.inOuterInstance)
        return count
    }

    /// Removes instance `position` of the inner block (in the outer instance the participant is
    /// in), with its answers.
    mutating func removeNestedInstance(_ n: NestedBlock, at position: Int) throws(StepKitError) {
        let count = try nestedInstanceCount(n, requiring: position)
        guard count - 1 >= n.format.bounds.minCount else {
            throw stateError("tooFewInstances", "\"\(n.name)\" needs at least \(n.format.bounds.minCount) instances (its minCount): none may be removed.")
        }
        var instances = storedInstances(n)
        if position < instances.count { instances.remove(at: position) }
        let key = n.cursorKey
        let cursor = instancesCursor[step: n.step, block: key]
        let moved = cursor > position ? cursor - 1 : min(cursor, count - 2)
        setNestedInstances(instances, n)
        instancesCursor.move(step: n.step, block: key, to: max(moved, 0))
        emitNested("instanceRemoved", n, position)
        clock.touched = true
        _checkInvariants()
    }

    /// Moves the inner block into instance `position` of the outer instance the participant is in.
    mutating func enterNestedInstance(_ n: NestedBlock, at position: Int) throws(StepKitError) {
        _ = try nestedInstanceCount(n, requiring: position)
        instancesCursor.move(step: n.step, block: n.cursorKey, to: position)
        emitNested("instanceEntered", n, position)
        _checkInvariants()
    }

    /// Moving within an outer block starts its inner blocks' cursors again at their first
    /// instance (the cursor is within the outer instance the participant is in).
    mutating func resetNestedCursors(step index: Int, outer: RepeatingBlock) {
        guard let step = task.step(at: index) else { return }
        for nested in Session.nestedGroups(of: step.format(item: outer.item)) {
            instancesCursor.move(step: index, block: Session.nestedCursorKey(outer: outer.item ?? "", inner: nested.identifier), to: 0)
        }
    }

    /// The state's entries for the inner blocks of `outer`, in the outer instance the participant
    /// is in: a repeating group's members, with `outer` (the outer block) and `outerIndex`.
    func nestedInstancesJSON(step index: Int, step: Step, outer: RepeatingBlock, outerCount: Int, into out: inout JSONObject) {
        let nestedList = Session.nestedGroups(of: step.format(item: outer.item))
        guard !nestedList.isEmpty, let outerItem = outer.item else { return }
        let current = min(instancesCursor[step: index, block: outerItem], max(outerCount - 1, 0))
        let instance = storedInstances(step: index, block: outer)[ifPresent: current]?.objectValue
        for nested in nestedList {
            let stored = instance?[nested.identifier]?.arrayValue ?? []
            let count = max(stored.count, nested.format.bounds.minCount)
            let block = RepeatingBlock(item: nested.identifier, bounds: nested.format.bounds)
            var titles: [JSON] = []
            for k in 0..<count { titles.append(instanceTitle(block, step: step, number: k + 1, instance: stored[ifPresent: k]).map { .string($0) } ?? .null) }
            var fields = Session.instancesEntry(count: count, current: instancesCursor[step: index, block: Session.nestedCursorKey(outer: outerItem, inner: nested.identifier)],
                                                bounds: nested.format.bounds, expected: nil, floor: nested.format.bounds.minCount, titles: titles)
            fields["outer"] = .string(outerItem)
            fields["outerIndex"] = .int(Int64(current))
            out[Session.nestedCursorKey(outer: outerItem, inner: nested.identifier)] = .object(fields)
        }
    }

    /// `set_answer`'s check of inner blocks: the answer gives no outer instance more inner
    /// instances than it has (add one first), as an outer block's own check does.
    func nestedRepeatProblems(_ given: [JSON], step index: Int, block: RepeatingBlock, stepIdentifier: String) -> [Problem] {
        guard let step = task.step(at: index), let outerItem = block.item else { return [] }
        let nestedList = Session.nestedGroups(of: step.format(item: block.item))
        guard !nestedList.isEmpty else { return [] }
        let stored = storedInstances(step: index, block: block)
        var problems: [Problem] = []
        for (k, instance) in given.enumerated() {
            for nested in nestedList {
                guard let list = instance.objectValue?[nested.identifier]?.arrayValue else { continue }
                let count = max(stored[ifPresent: k]?.objectValue?[nested.identifier]?.arrayValue?.count ?? 0, nested.format.bounds.minCount)
                guard list.count > count else { continue }
                problems.append(Problem(code: "instanceOutOfRange",
                                        message: "\"\(outerItem).\(nested.identifier)\" has \(count) instances in instance \(k) of \"\(outerItem)\"; add one (stepkit_session_add_instance \"\(outerItem).\(nested.identifier)\") before answering instance \(list.count).",
                                        path: JSONPath.root.key(outerItem).index(k).key(nested.identifier).index(list.count - 1), item: outerItem))
            }
        }
        return problems
    }
}
