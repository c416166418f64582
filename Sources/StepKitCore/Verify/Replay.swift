import StepKitBase

/// The session a verification replays a submission on, and its clock: a value the replay sets
/// to each submitted date, so the recomputed result keeps the submission's dates where they
/// are in order (the session's time never goes back, `Session.now`).
struct Replay {
    private(set) var session: Session
    private let time: UnsafeMutablePointer<Int64>
    let task: Task
    let options: VerifyOptions
    /// The submitted run's seed: its games are replayed from it (`SubmittedGame`).
    let seed: UInt64?
    /// A missing required answer is no divergence: the run is not claimed complete (a
    /// response "in-progress", or `allowIncomplete`).
    var excuseMissingAnswers = false
    /// The submitted part of each step the replay has applied (its latest): where a missing
    /// answer that completing the task reports (`requiredAnswersChecked: "atCompletion"`) is.
    private var applied: [Int: SubmittedStep] = [:]
    /// Per step, the instance answers the engine refused (`$.block[k].item`): not also missing.
    private var refusedInInstances: [Int: Set<String>] = [:]

    init(task: Task, options verify: VerifyOptions, start: Int64?, taskRunUUID: String?, seed: UInt64? = nil) {
        self.task = task
        self.options = verify
        self.seed = seed
        time = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        time.initialize(to: start ?? 0)
        var options = SessionOptions()
        options.taskRunUUID = taskRunUUID
        // The submitted run's seed: the replay shows what it showed (choices, items, steps).
        options.seed = seed
        // Recorders write nothing here, and one that cannot start must not end the run.
        options.continueOnRecorderFailure = true
        let clock = Clock.host({ context in context?.assumingMemoryBound(to: Int64.self).pointee ?? 0 }, context: UnsafeMutableRawPointer(time))
        session = Session(task: task, options: options, clock: clock)
        // No host hears the replay's events: none is built (`EventQueue.isRecording`).
        session.events.isRecording = false
    }

    /// Frees the clock's value; the session is not used after.
    func release() { time.deallocate() }

    private func identifier(_ index: Int) -> String { task.step(at: index)?.identifier ?? "?" }

    // MARK: A result's path

    /// Replays a StepKit result: navigation decides each step; the submitted step that matches
    /// it gives its answers. Submitted steps navigation does not reach are reported where they
    /// are; a step navigation shows that the submission lacks is reported and left unanswered.
    mutating func run(path steps: [SubmittedStep], report: inout Divergences) {
        var next = 0
        var visited = Set<Int>()
        // Submitted steps passed over as unexpected, by step: taken back (as reordered) if
        // navigation reaches their step later.
        var passed: [Int: Int] = [:]
        var missing = 0
        // Where each step is submitted, so finding the next submission of a step costs a
        // binary search, not a scan (a hostile submission may list a great many steps).
        let positions = Positions(steps)
        // Each submitted step costs at most two moves (passed over to, then applied); each missing
        // one, one (at most one more than the task has steps).
        let bound = 2 * steps.count + 2 * task.steps.count + 4
        var moves = 0
        while !session.isFinished, let current = session.currentIndex, moves < bound {
            moves += 1
            if steps.indices.contains(next), steps[next].step == current {
                // A repeating section's instance the submission walks past what the section
                // has: added as the participant added it (`Session+StepBlocks`).
                if let n = task.rules.blockOfStep[current], let after = steps[ifPresent: next + 1]?.instance,
                   let block = task.rules.stepBlocks[ifPresent: n], steps[next + 1].step == block.first,
                   after == session.currentInstance(n) + 1, after >= session.stepInstanceCount(n), after < block.bounds.maxCount {
                    try? session.addInstance(block.identifier)
                }
                apply(steps[next], report: &report)
                next += 1
                visited.insert(current)
                continue
            }
            if let later = positions.first(of: current, from: next) {
                for k in next..<later { passOver(steps[k], visited: visited, expected: current, report: &report); passed[steps[k].step] = k }
                next = later
                continue
            }
            if let k = passed.removeValue(forKey: current), let submitted = steps[ifPresent: k] {
                report.reclassify(at: submitted.path, from: .unexpectedStep, to: .reorderedStep,
                                  message: "The step \"\(identifier(current))\" is submitted out of order: navigation shows it later.")
                apply(submitted, report: &report)
                visited.insert(current)
                continue
            }
            if next >= steps.count && options.allowIncomplete { break }
            let at = steps[ifPresent: next]?.path ?? .root.key("results")
            report.add(.missingStep, "Navigation shows the step \"\(identifier(current))\" here, but the submission does not have it.",
                       at: at, step: identifier(current))
            apply(SubmittedStep(step: current, path: at), report: &report, missing: true)
            visited.insert(current)
            missing += 1
            if missing > task.steps.count { break }
        }
        for k in next..<max(next, steps.count) {
            let s = steps[k]
            let name = identifier(s.step)
            if visited.contains(s.step) {
                report.add(.repeatedStep, "The step \"\(name)\" is submitted again, but navigation does not show it again.", at: s.path, step: name)
            } else {
                report.add(.unexpectedStep, "Navigation ends the task before the step \"\(name)\".", at: s.path, step: name)
            }
        }
    }

    private func passOver(_ s: SubmittedStep, visited: Set<Int>, expected: Int, report: inout Divergences) {
        let name = identifier(s.step)
        if visited.contains(s.step) {
            report.add(.repeatedStep, "The step \"\(name)\" is submitted again, but navigation leads to \"\(identifier(expected))\".", at: s.path, step: name)
        } else {
            report.add(.unexpectedStep, "Navigation would not show the step \"\(name)\" here: it leads to \"\(identifier(expected))\".", at: s.path, step: name)
        }
    }

    // MARK: A response's answers by step

    /// Replays answers given by step (a QuestionnaireResponse has no path): navigation decides
    /// each step, and the step takes its answers if the submission has any.
    mutating func run(byStep steps: [Int: SubmittedStep], report: inout Divergences) {
        var reached = Set<Int>()
        var moves = 0
        while !session.isFinished, let current = session.currentIndex, moves < 2 * task.steps.count + 2 {
            moves += 1
            reached.insert(current)
            apply(steps[current] ?? SubmittedStep(step: current, path: .root.key("item")), report: &report)
        }
        for (index, s) in steps.sorted(by: { $0.key < $1.key }) where !reached.contains(index) {
            for (name, place) in s.places.sorted(by: { $0.key < $1.key }) {
                report.add(.disabledItem, "\"\(name)\" is answered, but navigation never reaches its step \"\(identifier(index))\": the item is not enabled.",
                           at: place, step: identifier(index), item: name)
            }
        }
    }

    // MARK: One step

    /// Gives the current step the submitted answer (what the engine refuses is reported and
    /// left out), reports what leaving it would need and lacks, and leaves it as navigation does.
    private mutating func apply(_ s: SubmittedStep, report: inout Divergences, missing: Bool = false) {
        guard let index = session.currentIndex, let step = session.currentStep else { return }
        // The visit starts when the one before it ended; the answer is given, and the step
        // left, at the submitted end.
        if let end = s.endDate { time.pointee = end }
        session.answers[index] = nil
        refusedInInstances[index] = nil
        var refused = Set<String>()
        if let answer = s.answer {
            if case .message = step.content {
                report.add(.unknownIdentifier, "The step \"\(step.identifier)\" takes no answer.", at: s.path, step: step.identifier)
            } else {
                // Repeating blocks' instances go after the rest (a `count` may read it), instance
                // by instance where one is refused.
                let (rest, blocks) = splitBlocks(answer, step: step, index: index, submitted: s)
                if let rest { _ = setAnswer(rest, step: step, submitted: s, refused: &refused, report: &report) }
                for (block, list) in blocks { replayBlock(block, list, step: step, index: index, submitted: s, refused: &refused, report: &report) }
            }
        }
        // Items a form's rules hide are not asked: an answer on one is not the participant's.
        let hidden = session.hiddenItems(step: index)
        for item in hidden {
            if let place = s.places[item], s.answer?.objectValue?[item] != nil, !refused.contains(item) {
                report.add(.disabledItem, "\"\(item)\" is answered, but the form's rules hide it.", at: place, step: step.identifier, item: item)
            }
        }
        applied[index] = s
        if !missing {
            let problems = session.forwardProblems(hidden: hidden)
            let inInstances = instancePlaces(problems, current: s, index: index)
            for problem in problems {
                note(problem, s, step: step, refused: refused, inInstances: inInstances, report: &report)
            }
        }
        if let submitted = s.game, let settings = step.active?.game,
           let game = recomputeGame(submitted, settings: settings, step: step, report: &report) {
            session.replaceCurrentGame(game)
        }
        let skipped = s.answer == nil && step.takesAnswers && step.optional
        session.leaveCurrent(skipped: skipped, hidden: hidden)
        session._checkInvariants()
    }

    /// Sets `answer` through the acceptance entry; a form's refused items are reported and the
    /// rest set again without them (at most once per item).
    private mutating func setAnswer(_ answer: JSON, step: Step, submitted s: SubmittedStep, refused: inout Set<String>,
                                    report: inout Divergences) -> JSON {
        var answer = answer
        for _ in 0...(s.places.count + 1) {
            do throws(StepKitError) {
                // A step the host reports is replayed from its kept record (the captured file
                // itself is not the verifier's to read).
                if step.hosted?.reportKind != nil { try session.keepReportRecord(answer) } else { try session.setAnswer(answer) }
                return answer
            } catch {
                var removed = false
                for problem in error.problems {
                    let item = problem.item
                    let place = item.flatMap { s.places[$0] } ?? s.places[step.identifier] ?? s.path
                    let code: Divergence.Code = problem.code == "wrongType" ? .wrongType : .answerRefused
                    report.add(code, problem.message, at: place, step: step.identifier, item: item, reason: problem.code)
                    if let item, case .object(var o) = answer, o[item] != nil {
                        o[item] = nil
                        answer = .object(o)
                        refused.insert(item)
                        removed = true
                    }
                }
                guard removed, let o = answer.objectValue, o.count > 0 else {
                    refused.formUnion(s.places.keys.filter { s.blocks[$0] == nil })
                    return .null
                }
            }
        }
        return .null
    }

    /// A reason the step could not be left going forward, as a divergence.
    private func note(_ problem: Problem, _ s: SubmittedStep, step: Step, refused: Set<String>, inInstances: [String: (place: JSONPath, key: String, step: Int)],
                      report: inout Divergences) {
        let stepName = problem.step ?? step.identifier
        let item = problem.item
        switch problem.code {
        case "activeStepNotFinished":
            // An active step's timing is the device's; the replay has no timer to run.
            return
        case "answerRequired":
            if excuseMissingAnswers { return }
            if let item, refused.contains(item) { return }
            if item == nil, problem.step == nil, !refused.isEmpty { return }
            // An instance's answer: where it is in the instance, unless the engine refused it.
            if let found = inInstances[problem.path.description] {
                if refusedInInstances[found.step]?.contains(found.key) == true { return }
                report.add(.requiredAnswerMissing, problem.message, at: found.place, step: stepName, item: item)
                return
            }
            // A missing answer listed at completion is in the submitted part of its own step.
            let own = problem.step.flatMap { task.stepIndex[$0] }.flatMap { applied[$0] } ?? s
            let place = item.flatMap { own.places[$0] } ?? own.places[stepName] ?? own.path
            report.add(.requiredAnswerMissing, problem.message, at: place, step: stepName, item: item)
        default:
            let place = item.flatMap { s.places[$0] } ?? s.path
            report.add(.answerRefused, problem.message, at: place, step: stepName, item: item, reason: problem.code)
        }
    }
}

// MARK: Repeating blocks

extension Replay {
    /// The submitted answer without its repeating blocks' instances (nil: nothing else), and
    /// each block's instances.
    fileprivate func splitBlocks(_ answer: JSON, step: Step, index: Int, submitted s: SubmittedStep) -> (rest: JSON?, blocks: [(RepeatingBlock, [JSON])]) {
        guard !s.blocks.isEmpty, let repeats = task.rules.repeats[index] else { return (answer, []) }
        var rest: JSON? = answer
        var blocks: [(RepeatingBlock, [JSON])] = []
        for block in repeats where s.blocks[Session.blockName(block, step: step)] != nil {
            if let item = block.item {
                guard case .object(var o)? = rest, case .array(let list)? = o[item] else { continue }
                o[item] = nil
                rest = o.count == 0 ? nil : .object(o)
                blocks.append((block, list))
            } else {
                guard case .array(let list)? = rest else { continue }
                rest = nil
                blocks.append((block, list))
            }
        }
        return (rest, blocks)
    }

    /// Gives a block its submitted instances as a host does: a group's instances added
    /// (`addInstance`, up to `maxCount`; each past it is reported) and answered, a repeating
    /// question's list of answers set. Where the engine refuses it, it is given again instance
    /// by instance (a group's item by item), so each refusal is reported where it is and the
    /// rest is kept.
    fileprivate mutating func replayBlock(_ block: RepeatingBlock, _ given: [JSON], step: Step, index: Int, submitted s: SubmittedStep,
                                          refused: inout Set<String>, report: inout Divergences) {
        let name = Session.blockName(block, step: step)
        guard let places = s.blocks[name], let repeating = step.format(item: block.item)?.rules as? RepeatingFormat else { return }
        let whole = s.places[name] ?? s.path
        var list = given
        let maxCount = block.bounds.maxCount
        if list.count > maxCount {
            for k in maxCount..<list.count {
                report.add(.answerRefused, "\"\(name)\" has at most \(maxCount) instances (its maxCount): instance \(k + 1) is past it.",
                           at: places.instances[ifPresent: k] ?? whole, step: step.identifier, item: name, reason: "tooManyInstances")
            }
            list.removeLast(list.count - maxCount)
        }
        func wrapped(_ l: [JSON]) -> JSON { block.item.map { .object(JSONObject([$0: .array(l)])) } ?? .array(l) }
        if repeating.form != nil {
            while session.instanceCount(step: index, block: block) < list.count {
                do throws(StepKitError) { try session.addInstance(name) } catch { break }
            }
            addNestedInstances(name, list, step: step)
        }
        do throws(StepKitError) {
            try session.setAnswer(wrapped(list))
            return
        } catch {}
        var refusedHere = Set<String>()
        switch repeating.content {
        case .group:
            for (k, instance) in list.enumerated() {
                guard case .object(let o) = instance else { continue }
                var padded = [JSON](repeating: .object(JSONObject()), count: k)
                for (inner, value) in o.entries {
                    padded.append(.object(JSONObject([inner: value])))
                    do throws(StepKitError) { try session.setAnswer(wrapped(padded)) } catch {
                        refusedHere.insert(JSONPath.root.key(name).index(k).key(inner).description)
                        for problem in error.problems {
                            report.add(problem.code == "wrongType" ? .wrongType : .answerRefused, problem.message, at: places.place(instance: k, item: inner) ?? whole,
                                       step: step.identifier, item: name, reason: problem.code)
                        }
                    }
                    padded.removeLast()
                }
            }
        case .question:
            var accepted: [JSON] = []
            for (k, value) in list.enumerated() {
                accepted.append(value)
                do throws(StepKitError) { try session.setAnswer(wrapped(accepted)) } catch {
                    // A list short of answers because one was refused is not also missing one.
                    refused.insert(name)
                    for problem in error.problems {
                        report.add(problem.code == "wrongType" ? .wrongType : .answerRefused, problem.message, at: places.place(instance: k, item: nil) ?? whole,
                                   step: step.identifier, item: name, reason: problem.code)
                    }
                    accepted[k] = .null
                }
            }
        }
        if !refusedHere.isEmpty { refusedInInstances[index, default: []].formUnion(refusedHere) }
    }

    /// A repeating group nested in the block's group: in each outer instance, its submitted
    /// instances added as a host adds them (entering that instance, `addInstance("outer.inner")`,
    /// up to its `maxCount`: the answer then refuses the ones past it, reported where they are).
    fileprivate mutating func addNestedInstances(_ name: String, _ list: [JSON], step: Step) {
        let nested = Session.nestedGroups(of: step.format(item: name))
        guard !nested.isEmpty else { return }
        for (k, instance) in list.enumerated() {
            for group in nested {
                guard let wanted = instance.objectValue?[group.identifier]?.arrayValue?.count, wanted > 0 else { continue }
                let path = name + "." + group.identifier
                do throws(StepKitError) { try session.enterInstance(name, at: k) } catch { break }
                while let n = try? session.currentNestedBlock(path), session.instanceCount(n) < min(wanted, group.format.bounds.maxCount) {
                    do throws(StepKitError) { try session.addInstance(path) } catch { break }
                }
            }
        }
    }

    /// Where each answer of a group's instance is in the submission, by the path a missing one
    /// is reported at (`$.block[k].item`, or `$.step.block[k].item` at completion), for the
    /// steps `problems` are about; built only when one is about a repeating block.
    fileprivate func instancePlaces(_ problems: [Problem], current s: SubmittedStep, index: Int) -> [String: (place: JSONPath, key: String, step: Int)] {
        var map: [String: (place: JSONPath, key: String, step: Int)] = [:]
        var done = Set<Int>()
        for problem in problems where problem.code == "answerRequired" && problem.item != nil {
            let stepIndex = problem.step.flatMap { task.stepIndex[$0] } ?? index
            guard done.insert(stepIndex).inserted, let submitted = stepIndex == index ? s : applied[stepIndex],
                  !submitted.blocks.isEmpty, let step = task.step(at: stepIndex) else { continue }
            for (name, block) in submitted.blocks {
                guard let repeating = step.format(item: name)?.rules as? RepeatingFormat, let form = repeating.form else { continue }
                // The instances past maxCount were never given (`replayBlock`).
                for k in block.instances.indices.prefix(repeating.bounds.maxCount) {
                    // An item the instance does not list is missing in the instance.
                    for inner in form.items {
                        guard let place = block.place(instance: k, item: inner.identifier) else { continue }
                        let key = JSONPath.root.key(name).index(k).key(inner.identifier).description
                        map[key] = (place, key, stepIndex)
                        map[JSONPath.root.key(step.identifier).key(name).index(k).key(inner.identifier).description] = (place, key, stepIndex)
                    }
                }
            }
        }
        return map
    }
}

/// The positions of each step's submissions in a submitted path, in order.
private struct Positions {
    private var byStep: [Int: [Int]] = [:]

    init(_ steps: [SubmittedStep]) {
        for (i, s) in steps.enumerated() { byStep[s.step, default: []].append(i) }
    }

    /// The first position at or after `start` where `step` is submitted.
    func first(of step: Int, from start: Int) -> Int? {
        guard let list = byStep[step] else { return nil }
        var low = 0, high = list.count
        while low < high {
            let mid = low + (high - low) / 2
            if list[mid] < start { low = mid + 1 } else { high = mid }
        }
        return list[ifPresent: low]
    }
}
