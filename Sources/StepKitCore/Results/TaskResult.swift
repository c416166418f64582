import StepKitBase

/// The task result (`stepkit_session_result`): ResearchKit's `ORKTaskResult` as JSON.
extension Session {
    package func resultJSON() -> JSON {
        let time = endDate ?? now
        var builder = SectionNesting(task: task)
        // A repeating section's visits are written together, nested per instance.
        var next = 0
        for (i, visit) in path.enumerated() where i >= next {
            guard let step = task.step(at: visit.stepIndex) else { continue }
            if let n = task.rules.blockOfStep[visit.stepIndex] {
                let block = stepBlockResult(block: n, from: i, now: time)
                builder.add(block.json, sections: Array(step.sections.dropLast()))
                next = block.end
                continue
            }
            builder.add(visitResult(at: i, step: step, now: time), sections: step.sections)
        }
        var result = JSONObject([
            "identifier": .string(task.identifier),
            "taskRunUUID": .string(taskRunUUID),
            "startDate": .string(CivilTime.iso8601(milliseconds: startDate)),
            "endDate": .string(CivilTime.iso8601(milliseconds: time)),
            "results": .array(builder.finish()),
            "timeSpent": .number(Double(task.rules.timeLimits.isEmpty ? max(time.subtractingSaturated(startDate), 0) : taskTimeSpent(at: time)) / 1000),
        ])
        // The languages the run was shown in (first the one it started in), when it names any.
        if showsLanguage {
            result["language"] = .string(language.text)
            result["languages"] = .array(language.used.map { .string($0) })
        }
        // The seed and the order each shuffled step and section was shown in (docs/randomization.md).
        if let seed {
            result["randomization"] = .object(["seed": .int(Int64(seed)), "orders": .object(resultOrders(seed: seed))])
        }
        // The calculations on the path's answers, when the task defines any.
        if !task.calculations.isEmpty {
            result["calculations"] = calculationsJSON()
        }
        // SageResearch's async results: the files of recorders that ran across steps.
        if !task.asyncActions.isEmpty {
            result["asyncResults"] = .array(actions.runs.flatMap { Session.fileResults($0.value, now: time) })
        }
        return .object(result)
    }
}

extension Session {
    /// Visit `i`'s step result (its `step`), as both result writers write it.
    func visitResult(at i: Int, step: Step, now time: Int64) -> JSON {
        let visit = path[i]
        let isCurrent = i == path.count - 1 && !isFinished
        let answer = visit.skipped ? nil : (isCurrent ? answers[visit.stepIndex].map { visibleAnswer($0, step: visit.stepIndex) } : visit.answer)
        let hidden: (String) -> Bool = { item in
            isCurrent ? !isVisible(item, step: visit.stepIndex) : visit.hiddenItems.contains(item)
        }
        // The time counted toward time limits; a task without any counts by the dates.
        let spent = task.rules.timeLimits.isEmpty ? max((visit.endDate ?? time).subtractingSaturated(visit.startDate), 0)
            : timing.visit(visit.spent, at: time, isCurrent: isCurrent)
        return StepResult.json(step: step, visit: visit, answer: answer, now: time, hidden: hidden, timeSpent: spent)
    }
}

/// Groups consecutive step results of one section under a section result, as deep as sections
/// nest: `{identifier, startDate, endDate, results: [...]}`.
struct SectionNesting {
    let task: Task
    private var top: [JSON] = []
    private var open: [(section: Int, results: [JSON])] = []

    init(task: Task) { self.task = task }

    mutating func add(_ result: JSON, sections: [Int]) {
        // Close the open sections the step is not in.
        var keep = 0
        while keep < open.count && keep < sections.count && open[keep].section == sections[keep] { keep += 1 }
        while open.count > keep { close() }
        for s in sections.dropFirst(open.count) { open.append((s, [])) }
        if open.isEmpty { top.append(result) } else { open[open.count - 1].results.append(result) }
    }

    mutating func finish() -> [JSON] {
        while !open.isEmpty { close() }
        return top
    }

    private mutating func close() {
        guard let (section, results) = open.popLast() else { return }
        let first = results.first?.objectValue?["startDate"] ?? .null
        let last = results.last?.objectValue?["endDate"] ?? .null
        let json = JSON.object([
            "identifier": .string(task.section(at: section)?.identifier ?? ""),
            "startDate": first,
            "endDate": last,
            "results": .array(results),
        ])
        if open.isEmpty { top.append(json) } else { open[open.count - 1].results.append(json) }
    }
}

/// One visit's step result and its question results.
enum StepResult {
    static func json(step: Step, visit: Visit, answer: JSON?, now: Int64, hidden: (String) -> Bool, timeSpent: Int64) -> JSON {
        let start = JSON.string(CivilTime.iso8601(milliseconds: visit.startDate))
        let end = JSON.string(CivilTime.iso8601(milliseconds: visit.endDate ?? now))
        var questions: [JSON] = []
        switch step.content {
        case .message:
            // An active step's results are its recorders' files.
            for run in visit.active?.recorders ?? [] { questions += Session.fileResults(run, now: now) }
            // A game step's result: the game's fields, ResearchKit's names (`Games/`).
            if let game = visit.active?.game { questions.append(Session.gameResult(game, step: step, start: start, end: end)) }
        case .question(let format):
            questions.append(question(step.identifier, format, answer, start, end))
        case .form(let form):
            let given = answer?.objectValue
            // A page's results are named `page.substep`, as ResearchKit's page results are.
            let prefix = step.isPage ? step.identifier + "." : ""
            for item in form.items where !hidden(item.identifier) {
                questions.append(question(prefix + item.identifier, item.format, given?[item.identifier], start, end))
            }
        }
        let result = JSON.object([
            "identifier": .string(step.identifier),
            "startDate": start,
            "endDate": end,
            "results": .array(questions),
            // The time counted on the visit (seconds): not the time between its dates when the
            // run was saved away and restored in between (`TimeCount`).
            "timeSpent": .number(Double(timeSpent) / 1000),
        ])
        // A consent review's record: agreed or not, the document's version and digest.
        guard case .consentReview(let document)? = step.hosted else { return result }
        return ConsentRecord.adding(to: result, document: document, answer: answer, date: end)
    }

    private static func question(_ identifier: String, _ format: AnswerFormat, _ answer: JSON?, _ start: JSON, _ end: JSON) -> JSON {
        if let repeating = format.rules as? RepeatingFormat { return instances(identifier, repeating, answer, start, end) }
        var result = JSONObject([
            "identifier": .string(identifier),
            "type": .string(format.resultType.rawValue),
            "answer": answer ?? .null,
            "startDate": start,
            "endDate": end,
        ])
        if let unit = format.rules.unit { result["unit"] = .string(unit) }
        if let codings = codings(format, answer) { result["codings"] = .array(codings) }
        return .object(result)
    }

    /// A repeating block's result: a group's instances, each its own result object in order
    /// (`index` from 0, its items' question results); a repeating question's one question result
    /// per answer, in order.
    static func instances(_ identifier: String, _ repeating: RepeatingFormat, _ answer: JSON?, visit: Visit, now: Int64) -> JSON {
        instances(identifier, repeating, answer, .string(CivilTime.iso8601(milliseconds: visit.startDate)),
                  .string(CivilTime.iso8601(milliseconds: visit.endDate ?? now)))
    }

    private static func instances(_ identifier: String, _ repeating: RepeatingFormat, _ answer: JSON?, _ start: JSON, _ end: JSON) -> JSON {
        let list = answer?.arrayValue ?? []
        var results: [JSON] = []
        switch repeating.content {
        case .group(let form):
            for (k, instance) in list.enumerated() {
                let given = instance.objectValue
                let items = form.items.map { question($0.identifier, $0.format, given?[$0.identifier], start, end) }
                results.append(.object(["identifier": .string(identifier), "index": .int(Int64(k)), "results": .array(items)]))
            }
            return .object(["identifier": .string(identifier), "type": .string("group"), "instances": .array(results), "startDate": start, "endDate": end])
        case .question(let format):
            for (k, value) in list.enumerated() {
                guard case .object(var one) = question(identifier, format, value.isNull ? nil : value, start, end) else { continue }
                one["index"] = .int(Int64(k))
                results.append(.object(one))
            }
            return .object(["identifier": .string(identifier), "type": .string("repeating"), "instances": .array(results), "startDate": start, "endDate": end])
        }
    }

    /// The codings of the selected choices that carry one (choices imported from FHIR), in the
    /// answer's order; nil when none does.
    static func codings(_ format: AnswerFormat, _ answer: JSON?) -> [JSON]? {
        guard let choices = format.rules.choiceOptions, choices.contains(where: { $0.coding != nil }),
              case .array(let selected)? = answer else { return nil }
        let codings = selected.compactMap { element -> JSON? in
            let value = element.objectValue?["value"] ?? element
            return choices.index(of: value).flatMap { choices[$0].coding }
        }
        return codings.isEmpty ? nil : codings
    }
}

extension Session {
    /// The result's `randomization.orders`: the order of each shuffled step on the path and of
    /// each shuffled section the path entered (its steps as shown), in the order first visited.
    /// One list for both result writers (`resultJSON`, the text writer).
    func resultOrders(seed: UInt64) -> JSONObject {
        var orders = JSONObject()
        for visit in path {
            guard let step = task.step(at: visit.stepIndex) else { continue }
            if orders[step.identifier] == nil, let order = Randomization.orderJSON(of: step, seed: seed) { orders[step.identifier] = order }
            for s in step.sections {
                if let section = task.section(at: s), orders[section.identifier] == nil,
                   let order = Randomization.orderJSON(of: section, task.steps, seed: seed) { orders[section.identifier] = order }
            }
        }
        return orders
    }
}
