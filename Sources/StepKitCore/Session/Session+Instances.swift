import StepKitBase

/// Repeating blocks in a session: how many instances a block has, adding, removing and moving
/// into one, and the state's `instances`.
///
/// A block's instances are its answer: an array, one entry per instance in order (an object of
/// its items' answers for a group, one answer for a repeating question). The array may be
/// shorter than the instance count: the instances after it exist and are empty. The count is
/// never less than the array (an instance holding answers is never dropped by anything but
/// `removeInstance`), nor than `minCount`, nor than the block's `count` expression (up to
/// `maxCount`): the expression adds instances, and lowering it removes none (the state's
/// `overCount` asks the host to remove them explicitly).
extension Session {
    /// The block's name in calls and in the state: its item's identifier, or for a repeating
    /// question step, the step's.
    static func blockName(_ block: RepeatingBlock, step: Step) -> String { block.item ?? step.identifier }

    /// Refuses an instance index that is not one of the `count` instances of the block `name`
    /// (`within`: which instances, for an inner block's), naming the range; every call that
    /// takes an index refuses it alike.
    static func requireInstance(_ position: Int, of count: Int, in name: String, within: String = "") throws(StepKitError) {
        guard position >= 0 && position < count else {
            throw StepKitError(.invalidArgument, code: "instanceOutOfRange",
                               message: "\"\(name)\" has \(count) instances\(within) (0 to \(count - 1)); there is no instance \(position).")
        }
    }

    /// The instances block `block` of step `index` holds answers for: the live answer on the
    /// current step, the latest answer elsewhere.
    func storedInstances(step index: Int, block: RepeatingBlock) -> [JSON] {
        guard let answer = answers[index] else { return [] }
        if let item = block.item { return answer.objectValue?[item]?.arrayValue ?? [] }
        return answer.arrayValue ?? []
    }

    /// What the block's `count` expression says now (nil: it has none, or it is null), as a
    /// whole number; not clamped (`countProblem` refuses an answer that takes it out of bounds).
    func expectedCount(step index: Int, block: RepeatingBlock, on lookup: some AnswerLookup) -> Double? {
        guard let count = block.count, case .number(let d) = count.evaluate(lookup) else { return nil }
        return d
    }

    /// How many instances the block has now.
    func instanceCount(step index: Int, block: RepeatingBlock) -> Int {
        let expected = expectedCount(step: index, block: block, on: StoredAnswers(self)).map { Session.clampedCount($0, block) } ?? 0
        return max(storedInstances(step: index, block: block).count, block.bounds.minCount, expected)
    }

    /// A count within the block's bounds (a value out of them never reaches here on answers
    /// `set_answer` accepted; restored or prefilled answers are clamped).
    static func clampedCount(_ d: Double, _ block: RepeatingBlock) -> Int {
        guard d.isFinite, d > 0 else { return 0 }
        return Int(min(d.rounded(.down), Double(block.bounds.maxCount)))
    }

    /// The repeating block `name` of the current step (nil: the step's only block).
    func currentBlock(_ name: String?) throws(StepKitError) -> (index: Int, step: Step, block: RepeatingBlock) {
        try requireInProgress()
        guard let index = currentIndex, let step = currentStep else {
            throw StepKitError(.internal, code: "noStep", message: "The session has no current step.")
        }
        let blocks = task.rules.repeats[index] ?? []
        guard !blocks.isEmpty else {
            throw stateError("noRepeatingBlock", "The step \"\(step.identifier)\" has no repeating block.")
        }
        if let name {
            guard let block = blocks.first(where: { Session.blockName($0, step: step) == name }) else {
                let names = blocks.map { "\"" + Session.blockName($0, step: step) + "\"" }.joined(separator: ", ")
                throw StepKitError(.invalidArgument, code: "unknownBlock", message: "The step \"\(step.identifier)\" has no repeating block \"\(name)\"; it has \(names).")
            }
            return (index, step, block)
        }
        guard blocks.count == 1, let block = blocks.first else {
            throw StepKitError(.invalidArgument, code: "blockRequired", message: "The step \"\(step.identifier)\" has several repeating blocks: name one.")
        }
        return (index, step, block)
    }

    /// Adds an instance after the last to the current step's block `name` and moves into it.
    package mutating func addInstance(_ name: String?) throws(StepKitError) {
        // A step of a repeating section: its block's instances (`Session+StepBlocks`).
        try requireInProgress()
        if let n = try currentStepBlock(name) { return try addStepInstance(n) }
        // A repeating group inside one (`medication.doses`): in the outer instance the participant is in.
        if let n = try currentNestedBlock(name) { return try addNestedInstance(n) }
        let (index, step, block) = try currentBlock(name)
        let count = instanceCount(step: index, block: block)
        guard count < block.bounds.maxCount else {
            throw stateError("tooManyInstances", "\"\(Session.blockName(block, step: step))\" has \(count) instances, its maxCount: no more may be added.")
        }
        var instances = storedInstances(step: index, block: block)
        let empty: JSON = block.item == nil || isRepeatingQuestion(index, block) ? .null : .object(JSONObject())
        while instances.count < count + 1 { instances.append(empty) }
        setInstances(instances, step: index, block: block, stepIdentifier: step.identifier)
        instancesCursor.move(step: index, block: block.item ?? "", to: count)
        resetNestedCursors(step: index, outer: block)
        // Its items' `initial`s, evaluated in it.
        if task.rules.initials[index] != nil { applyInstanceInitials(step: index, block: block.item, instance: count) }
        emit("instanceAdded", ["step": .string(step.identifier), "block": .string(Session.blockName(block, step: step)), "index": .int(Int64(count))])
        clock.touched = true
        _checkInvariants()
    }

    /// Removes instance `position` of the current step's block `name`, with its answers.
    package mutating func removeInstance(_ name: String?, at position: Int) throws(StepKitError) {
        try requireInProgress()
        if let n = try currentStepBlock(name) { return try removeStepInstance(n, at: position) }
        if let n = try currentNestedBlock(name) { return try removeNestedInstance(n, at: position) }
        let (index, step, block) = try currentBlock(name)
        let count = instanceCount(step: index, block: block)
        let blockName = Session.blockName(block, step: step)
        try Session.requireInstance(position, of: count, in: blockName)
        let expected = expectedCount(step: index, block: block, on: StoredAnswers(self)).map { Session.clampedCount($0, block) } ?? 0
        guard count - 1 >= block.bounds.minCount else {
            throw stateError("tooFewInstances", "\"\(blockName)\" needs at least \(block.bounds.minCount) instances (its minCount): none may be removed.")
        }
        guard count - 1 >= expected else {
            throw stateError("belowCount", "\"\(blockName)\" has \(expected) instances because of its count; change the answer it counts before removing one.")
        }
        var instances = storedInstances(step: index, block: block)
        if position < instances.count { instances.remove(at: position) }
        // The instances after it move up; so does the cursor past it.
        let cursor = instancesCursor[step: index, block: block.item ?? ""]
        let moved = cursor > position ? cursor - 1 : min(cursor, count - 2)
        setInstances(instances, step: index, block: block, stepIdentifier: step.identifier)
        instancesCursor.move(step: index, block: block.item ?? "", to: max(moved, 0))
        if position == cursor { resetNestedCursors(step: index, outer: block) }
        emit("instanceRemoved", ["step": .string(step.identifier), "block": .string(blockName), "index": .int(Int64(position))])
        clock.touched = true
        _checkInvariants()
    }

    /// Moves the current step's block `name` into instance `position`.
    package mutating func enterInstance(_ name: String?, at position: Int) throws(StepKitError) {
        try requireInProgress()
        if let n = try currentStepBlock(name) { return try enterStepInstance(n, at: position) }
        if let n = try currentNestedBlock(name) { return try enterNestedInstance(n, at: position) }
        let (index, step, block) = try currentBlock(name)
        let count = instanceCount(step: index, block: block)
        try Session.requireInstance(position, of: count, in: Session.blockName(block, step: step))
        if instancesCursor[step: index, block: block.item ?? ""] != position { resetNestedCursors(step: index, outer: block) }
        instancesCursor.move(step: index, block: block.item ?? "", to: position)
        emit("instanceEntered", ["step": .string(step.identifier), "block": .string(Session.blockName(block, step: step)), "index": .int(Int64(position))])
        _checkInvariants()
    }

    private func isRepeatingQuestion(_ index: Int, _ block: RepeatingBlock) -> Bool {
        guard let format = task.step(at: index)?.format(item: block.item), let r = format.rules as? RepeatingFormat else { return false }
        if case .question = r.content { return true }
        return false
    }

    /// Writes a block's instances into the step's answer (an empty list: no answer), with an
    /// audit entry of the change.
    mutating func setInstances(_ instances: [JSON], step index: Int, block: RepeatingBlock, stepIdentifier: String) {
        let previous = answers[index]
        var value: JSON?
        if let item = block.item {
            var object = previous?.objectValue ?? JSONObject()
            object[item] = instances.isEmpty ? nil : .array(instances)
            value = object.count == 0 ? nil : .object(object)
        } else {
            value = instances.isEmpty ? nil : .array(instances)
        }
        answers[index] = value
        if audit.isOn && previous != value {
            audit.record(value == nil ? .answerCleared : .answerSet, at: now, step: index, old: previous, new: value)
        }
    }

    /// `set_answer`'s check of a step's repeating blocks, before anything changes: the answer
    /// gives a group no instance past its count (a group's instances are added by
    /// `addInstance`; a repeating question's answer is its list of answers, up to `maxCount`,
    /// which its format checks), and no `count` expression of the task is out of its block's
    /// bounds with the answer in place.
    func repeatProblems(_ answer: JSON, kept: JSON?, step index: Int) -> [Problem] {
        var problems: [Problem] = []
        if let blocks = task.rules.repeats[index], let step = task.step(at: index) {
            for block in blocks where !isRepeatingQuestion(index, block) {
                let given = block.item.map { answer.objectValue?[$0] } ?? answer
                guard let list = given?.arrayValue else { continue }
                let count = instanceCount(step: index, block: block)
                if list.count > count {
                    let path: JSONPath = block.item.map { JSONPath.root.key($0) } ?? .root
                    problems.append(Problem(code: "instanceOutOfRange",
                                            message: "\"\(Session.blockName(block, step: step))\" has \(count) instances; add one (stepkit_session_add_instance) before answering instance \(list.count).",
                                            path: path.index(list.count - 1), item: block.item))
                }
                problems += nestedRepeatProblems(list, step: index, block: block, stepIdentifier: step.identifier)
            }
        }
        guard problems.isEmpty, task.rules.repeatCounts else { return problems }
        var trial = self
        trial.answers[index] = kept
        let lookup = StoredAnswers(trial)
        for (n, block) in task.rules.stepBlocks.enumerated() where block.count != nil {
            guard let d = trial.expectedCount(block: n, on: lookup) else { continue }
            if !d.isFinite || d < 0 || d.rounded(.down) > Double(block.bounds.maxCount) {
                problems.append(Problem(code: "countOutOfRange",
                                        message: "With this answer, \"\(block.identifier)\" would have \(NumberText.format(d)) instances: the count must be a number from 0 to \(block.bounds.maxCount) (its maxCount).",
                                        path: .root))
            }
        }
        for (stepIndex, blocks) in task.rules.repeats {
            for block in blocks {
                guard block.count != nil, let step = task.step(at: stepIndex) else { continue }
                guard let d = expectedCount(step: stepIndex, block: block, on: lookup) else { continue }
                if !d.isFinite || d < 0 || d.rounded(.down) > Double(block.bounds.maxCount) {
                    problems.append(Problem(code: "countOutOfRange",
                                            message: "With this answer, \"\(Session.blockName(block, step: step))\" would have \(NumberText.format(d)) instances: the count must be a number from 0 to \(block.bounds.maxCount) (its maxCount).",
                                            path: .root))
                }
            }
        }
        return problems
    }

    /// The state's `instances`: per repeating block of the current step, how many instances it
    /// has, which one the participant is in, whether one may be added or removed, what its
    /// `count` says and each instance's title.
    func instancesJSON(step index: Int) -> JSON {
        if let n = task.rules.blockOfStep[index] { return stepInstancesJSON(block: n) }
        guard let blocks = task.rules.repeats[index], let step = task.step(at: index) else { return .null }
        var out = JSONObject()
        let lookup = StoredAnswers(self)
        for block in blocks {
            let stored = storedInstances(step: index, block: block)
            let expectedValue = expectedCount(step: index, block: block, on: lookup)
            let expected = expectedValue.map { Session.clampedCount($0, block) }
            let count = max(stored.count, block.bounds.minCount, expected ?? 0)
            let floor = max(block.bounds.minCount, expected ?? 0)
            var titles: [JSON] = []
            for k in 0..<count { titles.append(instanceTitle(block, step: step, number: k + 1, instance: stored[ifPresent: k]).map { .string($0) } ?? .null) }
            var fields = Session.instancesEntry(count: count, current: instancesCursor[step: index, block: block.item ?? ""],
                                                bounds: block.bounds, expected: expected, floor: floor, titles: titles)
            // Per instance, the items its `visibleWhen` hides (`Session+InstanceReads`).
            if let hidden = instancesHiddenJSON(step: index, block: block, count: count) { fields["hidden"] = hidden }
            out[Session.blockName(block, step: step)] = .object(fields)
            // Its inner repeating groups, in the instance the participant is in.
            nestedInstancesJSON(step: index, step: step, outer: block, outerCount: count, into: &out)
        }
        return .object(out)
    }

    /// One block's entry in the state's `instances`, for a repeating group and a repeating
    /// section alike (the section adds its `steps`): how many instances there are, the one the
    /// participant is in (`current`, within them), the bounds, what the `count` expression says
    /// (`expectedCount`) and how many instances are past it (`overCount`, for the host to ask to
    /// remove), whether one may be added or removed (`floor`: the fewest it may keep) and each
    /// instance's title.
    static func instancesEntry(count: Int, current: Int, bounds: RepeatBounds, expected: Int?, floor: Int, titles: [JSON]) -> JSONObject {
        let expectedCount: JSON = expected.map { .int(Int64($0)) } ?? .null
        let overCount = expected.map { max(count - $0, 0) } ?? 0
        return JSONObject([
            "count": .int(Int64(count)),
            "current": .int(Int64(min(current, max(count - 1, 0)))),
            "minCount": .int(Int64(bounds.minCount)),
            "maxCount": .int(Int64(bounds.maxCount)),
            "expectedCount": expectedCount,
            "overCount": .int(Int64(overCount)),
            "canAdd": .bool(count < bounds.maxCount),
            "canRemove": .bool(count > floor),
            "titles": .array(titles),
        ])
    }

    /// An instance's title: the block's `title` with `{{index}}` its number and `{{item}}` that
    /// item's answer in the instance (then the task's calculations), nil when it has none.
    func instanceTitle(_ block: RepeatingBlock, step: Step, number: Int, instance: JSON?) -> String? {
        guard let title = block.bounds.title else { return nil }
        return Piping.render(title) { name in
            if name == "index" { return String(number) }
            if let value = instance?.objectValue?[name] { return Session.pipedText(value) }
            if block.item == nil, name == step.identifier, let value = instance { return Session.pipedText(value) }
            let reference = task.stepIndex[step.identifier].map { BlockReference.answer(step: $0, item: block.item) }
            return piped("{{" + name + "}}", instance: reference.map { ($0, number - 1) }).nilIfPlaceholder(name)
        }
    }

    /// An answer as text in a title: a string as it is, a number in its shortest form, a
    /// choice's values joined.
    static func pipedText(_ value: JSON) -> String? {
        switch value {
        case .null: return nil
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return NumberText.format(d)
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return items.compactMap { pipedText($0.objectValue?["value"] ?? $0) }.joined(separator: ", ")
        case .object(let o): return o["value"].flatMap(pipedText)
        }
    }
}

private extension String {
    /// nil when piping left the placeholder as it was (the name is no calculation).
    func nilIfPlaceholder(_ name: String) -> String? { self == "{{" + name + "}}" ? nil : self }
}

extension Session {
    /// The required answers a repeating block lacks: each of its instances (at least
    /// `minCount`, every one added) answers its group's required items; a repeating question
    /// has at least `minCount` answers (at least one). Paths and messages as a form item's,
    /// with the instance's index in the path and its number in the label.
    static func missingInstances(_ repeating: RepeatingFormat, _ list: [JSON], label: String, step: String, item: String?,
                                 completing: Bool, hidden: [String] = [], _ piped: (String) -> String) -> [Problem] {
        let base: JSONPath = completing ? .root.key(step) : .root
        let blockPath = item.map { base.key($0) } ?? base
        return missingInstances(repeating, list, label: label, at: blockPath, numbers: [], step: step, item: item,
                                completing: completing, hidden: hidden, piped)
    }

    /// `missingInstances` of a block at `blockPath`, inside the instances `numbers` (from 1) of
    /// the blocks around it (a repeating group nested in another: "Amount (2, 1)" is the first
    /// dose of the second medication). Recursion bounded: groups nest one level.
    private static func missingInstances(_ repeating: RepeatingFormat, _ list: [JSON], label: String, at blockPath: JSONPath, numbers: [Int],
                                         step: String, item: String?, completing: Bool, hidden: [String], _ piped: (String) -> String) -> [Problem] {
        switch repeating.content {
        case .question:
            let needed = max(repeating.bounds.minCount, 1)
            let answered = list.filter { !$0.isNull }.count
            guard answered < needed else { return [] }
            let key = completing ? "repeat.tooFewToFinish" : "repeat.tooFewToContinue"
            return [Problem(code: "answerRequired", text: Message(key, ["count": .count(needed), "label": .text(label)]),
                            path: blockPath, item: item, step: completing ? step : nil)]
        case .group(let form):
            var problems: [Problem] = []
            for k in 0..<max(list.count, repeating.bounds.minCount) {
                let given = list[ifPresent: k]?.objectValue ?? JSONObject()
                let here = numbers + [k + 1]
                for inner in form.items where !inner.optional {
                    // An item its instance's `visibleWhen` hides is not required there.
                    if numbers.isEmpty, let item, !hidden.isEmpty, hidden.contains(Session.instanceKey(item, k, inner.identifier)) { continue }
                    let text = piped(inner.label) + " (" + here.map(String.init).joined(separator: ", ") + ")"
                    // A repeating group in the instance: each of its instances, as this one's.
                    if let nested = inner.format.repeating, case .group = nested.content {
                        problems += missingInstances(nested, given[inner.identifier]?.arrayValue ?? [], label: text,
                                                     at: blockPath.index(k).key(inner.identifier), numbers: here, step: step, item: item,
                                                     completing: completing, hidden: [], piped)
                        continue
                    }
                    // A repeating question in the instance: at least its minCount answers (one).
                    if let nested = inner.format.repeating, case .question = nested.content {
                        let needed = max(nested.bounds.minCount, 1)
                        guard (given[inner.identifier]?.arrayValue ?? []).filter({ !$0.isNull }).count < needed else { continue }
                        let key = completing ? "repeat.tooFewToFinish" : "repeat.tooFewToContinue"
                        problems.append(Problem(code: "answerRequired", text: Message(key, ["count": .count(needed), "label": .text(text)]),
                                                path: blockPath.index(k).key(inner.identifier), item: item, step: completing ? step : nil))
                        continue
                    }
                    guard given[inner.identifier] == nil else { continue }
                    let key = completing ? "answer.requiredToFinish" : "answer.requiredToContinue"
                    problems.append(Problem(code: "answerRequired", text: Message(key, ["label": .text(text)]),
                                            path: blockPath.index(k).key(inner.identifier), item: item, step: completing ? step : nil))
                }
            }
            return problems
        }
    }
}

extension Restoration {
    /// The saved `instances` (which instance each repeating block is in): each names a
    /// repeating block of the task and one of the instances it has in the restored answers.
    /// Saved data from before repeating blocks has none: every block is in its first instance.
    static func decodeInstances(_ value: JSON?, in session: Session) throws(StepKitError) -> InstanceCursors {
        var cursors = InstanceCursors()
        guard let value, !value.isNull else { return cursors }
        let path = JSONPath.root.key("instances")
        guard let steps = value.objectValue else { throw refuse("damaged", "\"instances\" is an object of steps' repeating blocks.", path) }
        for (id, blocks) in steps.entries {
            guard let index = session.task.stepIndex[id], let step = session.task.step(at: index),
                  let repeats = session.task.rules.repeats[index], let names = blocks.objectValue else {
                throw refuse("damaged", "The saved instances name a step \"\(id)\" that has no repeating block.", path.key(id))
            }
            // An inner block's cursor (`outer.inner`) is within its outer instance: read after it.
            for (name, position) in names.entries.filter({ !$0.key.contains(".") }) + names.entries.filter({ $0.key.contains(".") }) {
                if name.contains(".") {
                    try decodeNestedCursor(name, position, step: index, stepID: id, into: &cursors, in: session, at: path.key(id).key(name))
                    continue
                }
                guard let block = repeats.first(where: { Session.blockName($0, step: step) == name }) else {
                    throw refuse("damaged", "The saved instances name a block \"\(name)\" the step does not have.", path.key(id).key(name))
                }
                let count = session.instanceCount(step: index, block: block)
                guard case .int(let k) = position, k > 0, k < Int64(count) else {
                    throw refuse("damaged", "The saved instance of \"\(name)\" is not one of its \(count) instances.", path.key(id).key(name))
                }
                cursors.move(step: index, block: block.item ?? "", to: Int(k))
            }
        }
        return cursors
    }
}

extension Restoration {
    /// A saved inner block's cursor (`outer.inner`): a repeating group inside a repeating group
    /// of the step, and one of the instances it has in the outer instance the saved data is in
    /// (already read into `cursors`).
    static func decodeNestedCursor(_ name: String, _ position: JSON, step index: Int, stepID: String, into cursors: inout InstanceCursors,
                                   in session: Session, at path: JSONPath) throws(StepKitError) {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let step = session.task.step(at: index),
              let outer = session.task.rules.repeats[index]?.first(where: { $0.item == String(parts[0]) }),
              let nested = Session.nestedGroups(of: step.format(item: outer.item)).first(where: { $0.identifier == String(parts[1]) }) else {
            throw refuse("damaged", "The saved instances name a block \"\(name)\" the step does not have.", path)
        }
        let outerIndex = cursors[step: index, block: outer.item ?? ""]
        let stored = session.storedInstances(step: index, block: outer)[ifPresent: outerIndex]?.objectValue?[nested.identifier]?.arrayValue ?? []
        let count = max(stored.count, nested.format.bounds.minCount)
        guard case .int(let k) = position, k > 0, k < Int64(count) else {
            throw refuse("damaged", "The saved instance of \"\(name)\" is not one of its \(count) instances in instance \(outerIndex) of \"\(parts[0])\".", path)
        }
        cursors.move(step: index, block: name, to: Int(k))
    }
}
