import StepKitBase

/// Repeating sections in restoration data: the member `stepInstances`, `{section: {"made",
/// "current", "parked": [{"index", "answers": {step: answer}}]}}` (the current instance's
/// answers are the steps' answers in `answers`), and each visit's `instance`. Data saved
/// before repeating sections has neither: every block then has made none and is in its first.
extension Restoration {
    static func stepInstancesJSON(_ s: Session) -> JSON {
        guard !s.stepInstances.isEmpty else { return .null }
        var out = JSONObject()
        for (n, entry) in s.stepInstances.blocks.sorted(by: { $0.key < $1.key }) {
            guard let block = s.stepBlock(n) else { continue }
            var parked: [JSON] = []
            for (k, answers) in entry.parked.sorted(by: { $0.key < $1.key }) {
                var object = JSONObject()
                for (step, answer) in answers.sorted(by: { $0.key < $1.key }) { object[s.task.step(at: step)?.identifier ?? ""] = answer }
                parked.append(.object(["index": .int(Int64(k)), "answers": .object(object)]))
            }
            out[block.identifier] = .object(["made": .int(Int64(entry.made)), "current": .int(Int64(entry.current)), "parked": .array(parked)])
        }
        return .object(out)
    }

    /// The saved `stepInstances`, each field checked against the task: a block of the task,
    /// instances within its `maxCount` (data past the bounds is refused), parked instances that
    /// were made and are not the current one, answers of the block's own steps that fit them.
    static func decodeStepInstances(_ value: JSON?, task: Task) throws(StepKitError) -> StepInstances {
        var instances = StepInstances()
        guard let value, !value.isNull else { return instances }
        let path = JSONPath.root.key("stepInstances")
        guard let blocks = value.objectValue else { throw refuse("damaged", "\"stepInstances\" is an object of repeating sections.", path) }
        for (id, saved) in blocks.entries {
            let here = path.key(id)
            guard let n = task.rules.stepBlocks.firstIndex(where: { $0.identifier == id }), let block = task.rules.stepBlocks[ifPresent: n],
                  let fields = saved.objectValue, fields.count == 3,
                  case .int(let made)? = fields["made"], case .int(let current)? = fields["current"], let parked = fields["parked"]?.arrayValue else {
                throw refuse("damaged", "The saved instances of \"\(id)\" are not {made, current, parked} of one of the task's repeating sections.", here)
            }
            let max = Int64(block.bounds.maxCount)
            guard made >= 0, made <= max, current >= 0, current < max else {
                throw refuse("damaged", "The saved instances of \"\(id)\" are past its bounds (maxCount \(max)).", here)
            }
            var entry = StepInstances.Block()
            entry.made = Int(made)
            entry.current = Int(current)
            for (i, item) in parked.enumerated() {
                guard let object = item.objectValue, object.count == 2, case .int(let k)? = object["index"], k >= 0, k < made, k != current,
                      let answers = object["answers"]?.objectValue, answers.count > 0, entry.parked[Int(k)] == nil else {
                    throw refuse("damaged", "A parked instance of \"\(id)\" is not {index, answers} of an instance made, other than the current one.", here.key("parked").index(i))
                }
                var kept: [Int: JSON] = [:]
                for (stepID, answer) in answers.entries {
                    let at = here.key("parked").index(i).key("answers").key(stepID)
                    guard let index = task.stepIndex[stepID], block.contains(index), let step = task.step(at: index) else {
                        throw refuse("damaged", "A parked instance of \"\(id)\" answers a step \"\(stepID)\" that is not one of its steps.", at)
                    }
                    kept[index] = try validated(answer, to: step, at: index, of: task, path: at)
                }
                entry.parked[Int(k)] = kept
            }
            instances[block: n] = entry
        }
        return instances
    }

    /// Checks a restored session's visits against its blocks: each visit of a block's step is in
    /// an instance the block has, and the current visit in the block's current instance.
    static func checkInstances(_ s: Session) throws(StepKitError) {
        for (i, visit) in s.path.enumerated() {
            guard let n = s.task.rules.blockOfStep[visit.stepIndex] else { continue }
            let count = s.stepInstanceCount(n)
            guard visit.instance < count else {
                throw refuse("damaged", "A visit is in instance \(visit.instance) of a block that has \(count).", .root.key("path").index(i).key("instance"))
            }
        }
        if !s.isFinished, let index = s.currentIndex, let n = s.task.rules.blockOfStep[index], let last = s.path.last,
           last.instance != s.stepInstances[block: n].current {
            throw refuse("damaged", "The current visit is not in its block's current instance.", .root.key("stepInstances"))
        }
    }

    /// A visit's saved `instance` (absent: 0): only a repeating section's step has another, within
    /// its block's `maxCount`.
    static func decodeVisitInstance(_ value: JSON?, step index: Int, task: Task, at path: JSONPath) throws(StepKitError) -> Int {
        guard let value else { return 0 }
        guard case .int(let k) = value, let n = task.rules.blockOfStep[index], let block = task.rules.stepBlocks[ifPresent: n],
              k >= 0, k < Int64(block.bounds.maxCount) else {
            throw refuse("damaged", "A visit's \"instance\" is a whole number within its repeating section's maxCount, and only a repeating section's step has one.", path)
        }
        return Int(k)
    }

    /// Migration: the saved instances of each repeating section that still exists, carried over
    /// instance by instance and step by step (an answer that no longer fits, a step gone or an
    /// instance past the new `maxCount` is listed in `dropped`); the run then starts in the first
    /// instance, whose answers are the steps' answers.
    static func migrateStepInstances(_ d: JSONObject, into session: inout Session, drop: (String, String?, String) -> Void) {
        guard let saved = d["stepInstances"]?.objectValue else { return }
        let task = session.task
        for (id, value) in saved.entries {
            guard let n = task.rules.stepBlocks.firstIndex(where: { $0.identifier == id }), let block = task.rules.stepBlocks[ifPresent: n],
                  let fields = value.objectValue, case .int(let current)? = fields["current"] else {
                drop(id, nil, "The repeating section no longer exists.")
                continue
            }
            // Every instance's answers, the current one's from the steps' answers.
            var all: [Int: [Int: JSON]] = [:]
            var live: [Int: JSON] = [:]
            for step in block.first...block.last { if let answer = session.answers[step] { live[step] = answer } }
            if !live.isEmpty { all[Int(current)] = live }
            for item in fields["parked"]?.arrayValue ?? [] {
                guard let object = item.objectValue, case .int(let k)? = object["index"] else { continue }
                var answers: [Int: JSON] = [:]
                for (stepID, answer) in (object["answers"]?.objectValue ?? JSONObject()).entries {
                    guard let index = task.stepIndex[stepID], block.contains(index), let step = task.step(at: index) else {
                        drop(stepID, "[\(k)]", "The step is no longer in the repeating section.")
                        continue
                    }
                    let checked = step.validate(answer, previous: nil, confirming: .never)
                    if checked.problems.isEmpty, let v = checked.value { answers[index] = v } else {
                        drop(stepID, "[\(k)]", "The answer no longer fits the step's answer format.")
                    }
                }
                if !answers.isEmpty { all[Int(k)] = answers }
            }
            var entry = StepInstances.Block()
            for (k, answers) in all {
                guard k < block.bounds.maxCount else {
                    drop(id, "[\(k)]", "The block now has at most \(block.bounds.maxCount) instances.")
                    continue
                }
                if k == 0 { continue }
                entry.parked[k] = answers
                entry.made = max(entry.made, k + 1)
            }
            if case .int(let made)? = fields["made"] { entry.made = max(entry.made, min(Int(made), block.bounds.maxCount)) }
            for step in block.first...block.last { session.answers[step] = all[0]?[step] }
            session.stepInstances[block: n] = entry
        }
    }
}
