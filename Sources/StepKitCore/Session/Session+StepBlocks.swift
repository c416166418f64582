import StepKitBase

/// Repeating blocks of steps in a session (`repeat` on a section; docs/task-format.md,
/// "Repeating sections"): how many instances a block has, where navigation goes at an
/// instance's end, and adding, removing and entering an instance.
///
/// Each visit of a block's step is in one instance (`Visit.instance`); the path walks the
/// instances in order. The current instance's answers are the block's steps' answers in
/// `AnswerStore` and the others' wait in `StepInstances` (`switchInstance` swaps them), so a
/// step's answer, a condition and the state read the instance the participant is in. Conditions
/// read a block's step only through a visit in the current instance (`latestAnswer`): a step not
/// yet visited in this instance is unanswered, whatever another instance said.
extension Session {
    /// The block `n`'s definition.
    func stepBlock(_ n: Int) -> StepBlock? { task.rules.stepBlocks[ifPresent: n] }

    /// What block `n`'s `count` says now (nil: it has none, or it is null), not clamped.
    func expectedCount(block n: Int, on lookup: some AnswerLookup) -> Double? {
        guard let count = stepBlock(n)?.count, case .number(let d) = count.evaluate(lookup) else { return nil }
        return d
    }

    /// `AnswerLookup`'s: navigation passes over a repeating section with no instance.
    func sectionInstanceCount(_ n: Int) -> Int { stepInstanceCount(n) }

    /// How many instances block `n` has: the instances made, `minCount` and its `count`.
    func stepInstanceCount(_ n: Int) -> Int {
        guard let block = stepBlock(n) else { return 0 }
        let expected = expectedCount(block: n, on: self).map { Session.clampedCount($0, block.bounds) } ?? 0
        return max(stepInstances.made(n), block.bounds.minCount, expected)
    }

    /// A count within a block's bounds (`clampedCount` of a repeating group's).
    static func clampedCount(_ d: Double, _ bounds: RepeatBounds) -> Int {
        guard d.isFinite, d > 0 else { return 0 }
        return Int(min(d.rounded(.down), Double(bounds.maxCount)))
    }

    /// The instance of block `n` the participant is in (or was in last).
    func currentInstance(_ n: Int) -> Int { stepInstances.current(n) }

    /// Moves block `n` into instance `k`: the current instance's answers are parked, `k`'s become
    /// the block's steps' answers. Instance `k` counts as made.
    mutating func switchInstance(_ n: Int, to k: Int) {
        // Most arrivals stay in the instance: nothing to write.
        if stepInstances.current(n) == k && stepInstances.made(n) > k { return }
        guard task.rules.stepBlocks.indices.contains(n) else { return }
        let first = task.rules.stepBlocks[n].first, last = task.rules.stepBlocks[n].last
        var live: [Int: JSON] = [:]
        var parked: [Int: JSON]?
        stepInstances.modify(n) { entry in
            entry.made = max(entry.made, k + 1)
            guard entry.current != k else { return }
            parked = entry.parked.removeValue(forKey: k) ?? [:]
        }
        guard let parked else { return }
        for step in first...last {
            if let answer = answers[step] { live[step] = answer }
            answers[step] = nil
        }
        for (step, answer) in parked { answers[step] = answer }
        stepInstances.modify(n) { entry in
            if !live.isEmpty { entry.parked[entry.current] = live }
            entry.current = k
        }
    }

    /// Follows a visit of a block's step without moving answers (the replay of a restore sets
    /// each visit's answer itself): the block is in the visit's instance.
    mutating func followInstance(of visit: Visit) {
        guard let n = task.rules.blockOfStep[visit.stepIndex] else { return }
        stepInstances.modify(n) { entry in
            entry.current = visit.instance
            entry.made = max(entry.made, visit.instance + 1)
        }
    }

    /// The answers of instance `k` of block `n`, by step index: the live ones for the current
    /// instance.
    func instanceAnswers(block n: Int, instance k: Int) -> [Int: JSON] {
        guard let block = stepBlock(n) else { return [:] }
        let entry = stepInstances[block: n]
        guard k == entry.current else { return entry.parked[k] ?? [:] }
        var live: [Int: JSON] = [:]
        for step in block.first...block.last { if let answer = answers[step] { live[step] = answer } }
        return live
    }

    /// How many instances block `n` has as expressions count them (`Expressions/Instances.swift`):
    /// the state's count once the section is on the path, none before it is reached (or after
    /// going back out of it, or when navigation passed over it), as a repeating group whose step
    /// is off the path has none.
    func sectionExpressionCount(_ n: Int) -> Int {
        guard let block = stepBlock(n), (block.first...block.last).contains(where: { path.latestPosition(of: $0) != nil }) else { return 0 }
        return stepInstanceCount(n)
    }

    /// Instance `k` of block `n` as expressions read it: one answer per step of the block, in
    /// step order, each its latest visit's in that instance (null when the path has none, or it
    /// was skipped), as a condition inside the instance reads it (`latestAnswer`): an answer
    /// kept for a step navigation no longer passes through is not read. The current visit's
    /// answer is the live one, with its hidden items left out when `hiding` (as `itemAnswer`).
    /// Nil for a negative `k`.
    func sectionEntry(_ n: Int, _ k: Int, hiding: Bool) -> JSON? {
        guard k >= 0, let block = stepBlock(n) else { return nil }
        let width = block.last - block.first + 1
        var answers = [JSON](repeating: .null, count: width)
        var seen = [Bool](repeating: false, count: width)
        var left = width
        var p = path.count - 1
        // Backwards: the first visit of a step found in the instance is its latest.
        while p >= 0, left > 0 {
            let step = path[p].stepIndex
            if block.contains(step), path[p].instance == k, !seen[step - block.first] {
                seen[step - block.first] = true
                left -= 1
                if !path[p].skipped {
                    if p == path.count - 1 && !isFinished {
                        answers[step - block.first] = liveAnswer(step: step, hiding: hiding) ?? .null
                    } else {
                        answers[step - block.first] = path[p].answer ?? .null
                    }
                }
            }
            p -= 1
        }
        return .array(answers)
    }

    /// The current step's live answer; with `hiding`, a form's items its `visibleWhen` hides
    /// now left out.
    private func liveAnswer(step: Int, hiding: Bool) -> JSON? {
        guard let answer = self.answers[step] else { return nil }
        guard hiding, hasVisibilityRules(step: step), case .object(var object) = answer else { return answer }
        for key in object.keys where !isVisible(key, step: step) { object[key] = nil }
        return .object(object)
    }

    /// `route` (where navigation leads leaving step `index`, as the steps' rules say) with the
    /// instances in it: leaving an instance of a block goes to the next instance's first step
    /// when there is one; entering a block from outside enters its first instance.
    func instanceRoute(_ route: Navigator.Route, leaving index: Int) -> Navigator.Route {
        var route = route
        let from = task.rules.blockOfStep[index]
        // Within an instance (most moves): the block's range read in place, no copy of it.
        if let n = from, let s = route.step, task.rules.stepBlocks.indices.contains(n),
           s >= task.rules.stepBlocks[n].first && s <= task.rules.stepBlocks[n].last {
            route.instance = currentInstance(n)
            return route
        }
        if let n = from, let block = stepBlock(n) {
            let count = stepInstanceCount(n)
            var k = currentInstance(n) + 1
            while k < count {
                // The next instance's skip rules and modifiers read it: none of its steps is
                // visited in it yet, so they read it as unanswered.
                var next: Navigator.Route
                if block.arrivalReadsAnswers {
                    var trial = self
                    trial.stepInstances.modify(n) { $0.current = k }
                    next = Navigator(task).arrive(at: block.first, from: index, notes: [], in: trial)
                } else {
                    next = Navigator(task).arrive(at: block.first, from: index, notes: [], in: self)
                }
                if let s = next.step, block.contains(s) {
                    next.instance = k
                    return next
                }
                k += 1
            }
        }
        if let s = route.step, let m = task.rules.blockOfStep[s], m != from {
            route.instance = 0
            if currentInstance(m) != 0, stepBlock(m)?.arrivalReadsAnswers == true {
                var trial = self
                trial.stepInstances.modify(m) { $0.current = 0 }
                route = Navigator(task).route(leaving: index, in: trial)
                route.instance = 0
            }
        }
        return route
    }

    /// The steps of the instances still to come after the current one, and of the blocks ahead
    /// beyond their first instance: what progress adds to the steps the route walks once.
    func instanceStepsAhead(from index: Int, walked: [Int]) -> Int {
        var extra = 0
        if let n = task.rules.blockOfStep[index], let block = stepBlock(n) {
            extra += max(stepInstanceCount(n) - currentInstance(n) - 1, 0) * (block.last - block.first + 1)
        }
        for (n, block) in task.rules.stepBlocks.enumerated() where walked.contains(block.first) && !block.contains(index) {
            extra += max(stepInstanceCount(n) - 1, 0) * (block.last - block.first + 1)
        }
        return extra
    }

    /// The step block the current step is in, named `name` (nil: the step's block).
    func currentStepBlock(_ name: String?) throws(StepKitError) -> Int? {
        guard let index = currentIndex, let n = task.rules.blockOfStep[index], let block = stepBlock(n) else { return nil }
        if let name, name != block.identifier {
            throw StepKitError(.invalidArgument, code: "unknownBlock",
                               message: "The step \"\(task.step(at: index)?.identifier ?? "")\" is in the repeating section \"\(block.identifier)\" and has no block \"\(name)\".")
        }
        return n
    }

    /// Adds an instance after the last of block `n`; navigation reaches it going forward from
    /// the instance before it.
    mutating func addStepInstance(_ n: Int) throws(StepKitError) {
        guard let block = stepBlock(n) else { return }
        let count = stepInstanceCount(n)
        guard count < block.bounds.maxCount else {
            throw stateError("tooManyInstances", "\"\(block.identifier)\" has \(count) instances, its maxCount: no more may be added.")
        }
        stepInstances.modify(n) { $0.made = count + 1 }
        let stepName = currentStep?.identifier
        emit("instanceAdded", ["step": .string(stepName), "block": .string(block.identifier), "index": .int(Int64(count))])
        clock.touched = true
        _checkInvariants()
    }

    /// Block `n` and how many instances it has, when `k` is one of them (nil: the task has no
    /// block `n`); an index out of range is refused with `instanceOutOfRange`, naming the range.
    func stepInstance(_ n: Int, at k: Int) throws(StepKitError) -> (block: StepBlock, count: Int)? {
        guard let block = stepBlock(n) else { return nil }
        let count = stepInstanceCount(n)
        try Session.requireInstance(k, of: count, in: block.identifier)
        return (block, count)
    }

    /// Removes instance `k` of block `n` with its answers and its visits; the instances after it
    /// move up. Removing the instance the participant is in takes them back to the visit before
    /// its visits, as going back does.
    mutating func removeStepInstance(_ n: Int, at k: Int) throws(StepKitError) {
        guard let (block, count) = try stepInstance(n, at: k) else { return }
        let expected = expectedCount(block: n, on: self).map { Session.clampedCount($0, block.bounds) } ?? 0
        guard count - 1 >= block.bounds.minCount, count - 1 >= 1 || currentInstance(n) != k else {
            throw stateError("tooFewInstances", "\"\(block.identifier)\" needs at least \(max(block.bounds.minCount, 1)) instances (its minCount, or the one the participant is in): none may be removed.")
        }
        guard count - 1 >= expected else {
            throw stateError("belowCount", "\"\(block.identifier)\" has \(expected) instances because of its count; change the answer it counts before removing one.")
        }
        let time = now
        let leavingStep = currentStep?.identifier
        let inRemoved = currentInstance(n) == k
        if inRemoved {
            stopActiveRecorders(at: time)
            foldTime(at: time)
        }
        // Its answers go, each with an audit entry.
        let removed = instanceAnswers(block: n, instance: k)
        if audit.isOn {
            for (step, answer) in removed.sorted(by: { $0.key < $1.key }) {
                audit.record(.answerCleared, at: time, step: step, old: answer, new: nil)
            }
        }
        var entry = stepInstances[block: n]
        if inRemoved {
            for step in block.first...block.last { answers[step] = nil }
        }
        var parked: [Int: [Int: JSON]] = [:]
        for (i, answers) in entry.parked where i != k { parked[i > k ? i - 1 : i] = answers }
        entry.parked = parked
        entry.made = count - 1
        // Its visits leave the path; later instances' visits are renumbered.
        var visits: [Visit] = []
        var firstAfter: Int?
        for visit in path {
            if block.contains(visit.stepIndex) {
                if visit.instance == k {
                    if firstAfter == nil { firstAfter = visits.count }
                    continue
                }
                var moved = visit
                if moved.instance > k { moved.instance -= 1 }
                visits.append(moved)
            } else {
                visits.append(visit)
            }
        }
        if inRemoved {
            // Back on the visit before the instance's visits: reopened, as going back reopens it.
            if let last = visits.indices.last {
                visits[last].endDate = nil
                visits[last].answer = nil
                visits[last].skipped = false
            }
            let back = visits.last.flatMap { block.contains($0.stepIndex) ? $0.instance : nil }
            entry.current = back ?? max(k - 1, 0)
            // The instance it lands in is live again.
            if let answers = entry.parked.removeValue(forKey: entry.current) {
                for (step, answer) in answers { self.answers[step] = answer }
            }
        } else if entry.current > k {
            entry.current -= 1
        }
        stepInstances[block: n] = entry
        replacePath(visits)
        // The visit that now follows the visit before the removed instance was reached from
        // another step: its arrival is told again as navigation tells it from there.
        if let p = firstAfter, p > 0, p < path.count, block.contains(path[p].stepIndex), !block.contains(path[p - 1].stepIndex) {
            var trial = self
            let instance = path[p].instance
            trial.stepInstances.modify(n) { $0.current = instance }
            let route = Navigator(task).route(leaving: path[p - 1].stepIndex, in: trial)
            if route.step == path[p].stepIndex { redateArrival(at: p, route: route) }
        }
        emit("instanceRemoved", ["step": .string(leavingStep), "block": .string(block.identifier), "index": .int(Int64(k))])
        if inRemoved { stepAppeared(previous: leavingStep, at: time) }
        clock.touched = true
        _checkInvariants()
    }

    /// Goes back to the first step of instance `k` of block `n` (the instance the participant is
    /// in, or one before it), as going back step by step would; its answers and the later
    /// instances' stay, and going forward walks them again.
    mutating func enterStepInstance(_ n: Int, at k: Int) throws(StepKitError) {
        guard let (block, _) = try stepInstance(n, at: k) else { return }
        // The first visit of instance k in the block's run that ends with the current visit.
        var target: Int?
        var p = path.count - 1
        while p >= 0, block.contains(path[p].stepIndex), path[p].instance >= k {
            if path[p].instance == k { target = p }
            p -= 1
        }
        guard let target else {
            throw stateError("instanceNotReached", "Instance \(k) of \"\(block.identifier)\" comes after the one the participant is in: go forward to reach it.")
        }
        let time = now
        let previous = currentStep?.identifier
        let leaving = currentIndex
        stopActiveRecorders(at: time)
        foldTime(at: time)
        while path.count - 1 > target { popVisit() }
        updateCurrent { visit in
            visit.endDate = nil
            visit.answer = nil
            visit.skipped = false
        }
        switchInstance(n, to: k)
        clock.touched = true
        emit("instanceEntered", ["step": .string(previous), "block": .string(block.identifier), "index": .int(Int64(k))])
        stepAppeared(previous: previous, at: time)
        if audit.isOn { audit.record(.backward, at: time, step: leaving, to: currentIndex) }
        _checkInvariants()
    }

    /// The state's `instances` entry of block `n`: as a repeating group's, with the block's
    /// `steps`.
    func stepInstancesJSON(block n: Int) -> JSON {
        guard let block = stepBlock(n) else { return .null }
        let count = stepInstanceCount(n)
        let expected = expectedCount(block: n, on: self).map { Session.clampedCount($0, block.bounds) }
        let floor = max(block.bounds.minCount, expected ?? 0, 1)
        var titles: [JSON] = []
        for k in 0..<count { titles.append(stepInstanceTitle(block: n, instance: k).map { .string($0) } ?? .null) }
        var fields = Session.instancesEntry(count: count, current: currentInstance(n), bounds: block.bounds, expected: expected,
                                            floor: floor, titles: titles)
        fields["steps"] = .array((block.first...block.last).map { .string(task.step(at: $0)?.identifier) })
        return .object([block.identifier: .object(fields)])
    }

    /// Instance `k`'s title: `{{index}}` its number from 1, `{{step}}` a question step's answer
    /// in it, `{{item}}` a form item's, any other name a calculation; nil without a `title`.
    func stepInstanceTitle(block n: Int, instance k: Int) -> String? {
        guard let block = stepBlock(n), let title = block.bounds.title else { return nil }
        let given = instanceAnswers(block: n, instance: k)
        return Piping.render(title) { name in
            if name == "index" { return String(k + 1) }
            if let step = task.stepIndex[name], block.contains(step) { return given[step].flatMap(Session.pipedText) }
            for step in block.first...block.last {
                if let value = given[step]?.objectValue?[name] { return Session.pipedText(value) }
            }
            let text = piped("{{" + name + "}}", instance: (.section(block: n, first: block.first), k))
            return text == "{{" + name + "}}" ? nil : text
        }
    }
}

extension Session {
    /// The result of a repeating section's visits from visit `start` on (the consecutive visits
    /// of its steps): `{identifier, startDate, endDate, instances: [...]}`, one object per
    /// instance walked, in instance order, `{identifier, index, startDate, endDate, results}`
    /// with its visits' step results in path order. `end`: the first visit after them.
    func stepBlockResult(block n: Int, from start: Int, now time: Int64) -> (json: JSON, end: Int) {
        guard let block = stepBlock(n) else { return (.null, start + 1) }
        var end = start
        while end < path.count, block.contains(path[end].stepIndex) { end += 1 }
        var byInstance: [Int: [Int]] = [:]
        for p in start..<end { byInstance[path[p].instance, default: []].append(p) }
        var instances: [JSON] = []
        for k in byInstance.keys.sorted() {
            var results: [JSON] = []
            for p in byInstance[k] ?? [] {
                if let step = task.step(at: path[p].stepIndex) { results.append(visitResult(at: p, step: step, now: time)) }
            }
            instances.append(.object([
                "identifier": .string(block.identifier),
                "index": .int(Int64(k)),
                "startDate": results.first?.objectValue?["startDate"] ?? .null,
                "endDate": results.last?.objectValue?["endDate"] ?? .null,
                "results": .array(results),
            ]))
        }
        let first = path[start]
        let last = path[max(end - 1, start)]
        return (.object([
            "identifier": .string(block.identifier),
            "startDate": .string(CivilTime.iso8601(milliseconds: first.startDate)),
            "endDate": .string(CivilTime.iso8601(milliseconds: last.endDate ?? time)),
            "instances": .array(instances),
        ]), end)
    }
}

extension Session {
    /// The positions from `from` on that are the latest visit of their step in their instance,
    /// for the steps of repeating sections (`missingAnswers`).
    func latestVisitsPerInstance(from: Int) -> Set<Int> {
        var seen: Set<[Int]> = []
        var latest: Set<Int> = []
        var p = path.count - 1
        while p >= from && p >= 0 {
            let visit = path[p]
            if task.rules.blockOfStep[visit.stepIndex] != nil, seen.insert([visit.stepIndex, visit.instance]).inserted { latest.insert(p) }
            p -= 1
        }
        return latest
    }
}
