import StepKitBase

/// One step's part of a submission, as the replay applies it: the step, where it is in the
/// submission, the answer it carries and where each of its answers is.
struct SubmittedStep: Sendable {
    var step: Int
    /// The step result (a StepKit result), or the response's `item` (a QuestionnaireResponse).
    var path: JSONPath
    /// A question's answer, or a form's `{"item": answer}` with the items that have one.
    var answer: JSON?
    /// Where each answer is: the step's identifier for a question, the item's for a form.
    var places: [String: JSONPath] = [:]
    var startDate: Int64?
    var endDate: Int64?
    /// Where each repeating block's instances are (`SubmittedBlock`), by the block's name (its
    /// form item's identifier, a question step's own); their answers are in `answer`.
    var blocks: [String: SubmittedBlock] = [:]
    /// In a repeating section's result: the instance the step result is under (its `index`).
    var instance: Int?
    /// A game step's game result, recomputed from its recorded inputs (`SubmittedGame`).
    var game: SubmittedGame?
    /// Every answer is null: the step was skipped or left unanswered.
    var isEmpty: Bool { answer == nil }
}

/// A StepKit task result (`stepkit_session_result`) read into the steps of its path, in order;
/// what does not fit the result's shape or the task is reported as it is read.
struct SubmittedResult {
    var steps: [SubmittedStep] = []
    var startDate: Int64?
    var endDate: Int64?
    var taskRunUUID: String?
    var calculations: JSON?
    /// The run's seed (`randomization.seed`): the replay walks the order it gives, and the
    /// submitted orders must be the ones it gives (docs/randomization.md).
    var seed: UInt64?
    var orders: JSONObject?

    /// `language`/`languages`: what a run of a task in several languages was shown in; they
    /// describe the presentation, not an answer, so they are the result's own fields.
    private static let topFields: Set<String> = ["identifier", "taskRunUUID", "startDate", "endDate", "results", "calculations", "asyncResults",
                                                 "taskFingerprint", "timeSpent", "randomization", "language", "languages"]
    /// `timeSpent`: the time counted on a visit (issue 32, time limits); `consent`: a consent
    /// review's record (derived from the answers the replay checks).
    private static let stepFields: Set<String> = ["identifier", "startDate", "endDate", "results", "timeSpent", "consent"]
    private static let questionFields: Set<String> = ["identifier", "type", "answer", "startDate", "endDate", "unit", "codings"]
    /// Sections nest no deeper than this in a result the engine writes; deeper is refused
    /// before it is read (the read recurses once per level).
    static let maxNesting = 64

    /// `nil` with `otherTask`/`otherVersion` reported when the submission is of another task.
    static func read(_ object: JSONObject, task: Task, options: VerifyOptions, into report: inout Divergences) -> SubmittedResult? {
        guard object["identifier"]?.stringValue == task.identifier else {
            let named = object["identifier"]?.stringValue.map { "\"\($0)\"" } ?? "no task"
            report.add(.otherTask, "The submission is a result of \(named), not of the task \"\(task.identifier)\".", at: .root.key("identifier"))
            return nil
        }
        if let claimed = object["taskFingerprint"] {
            guard let text = claimed.stringValue, text == (try? task.fingerprint.value()) else {
                report.add(.otherVersion, "The submission names another version of the task \"\(task.identifier)\" (its fingerprint differs).",
                           at: .root.key("taskFingerprint"))
                return nil
            }
        }
        var result = SubmittedResult()
        if options.unknownFieldsAreErrors { unknownFields(object, allowed: topFields, at: .root, into: &report) }
        if let uuid = object["taskRunUUID"] {
            result.taskRunUUID = uuid.stringValue.flatMap(UUIDText.normalized)
            if result.taskRunUUID == nil { report.add(.wrongType, "\"taskRunUUID\" must be a UUID.", at: .root.key("taskRunUUID")) }
        }
        result.startDate = date(object["startDate"], at: .root.key("startDate"), options, &report)
        result.endDate = date(object["endDate"], at: .root.key("endDate"), options, &report)
        result.calculations = object["calculations"]
        if let randomization = object["randomization"], !randomization.isNull {
            if let o = randomization.objectValue, case .int(let seed)? = o["seed"], seed >= 0, UInt64(seed) <= Randomization.maximumSeed,
               let orders = o["orders"]?.objectValue {
                result.seed = UInt64(seed)
                result.orders = orders
            } else {
                report.add(.wrongType, "\"randomization\" is {\"seed\": a whole number from 0 to \(Randomization.maximumSeed), \"orders\": {...}}.",
                           at: .root.key("randomization"))
            }
        }
        guard case .array(let list)? = object["results"] else {
            report.add(.wrongType, "A result's \"results\" is an array of step results.", at: .root.key("results"))
            return result
        }
        result.readList(list, at: .root.key("results"), depth: 0, task: task, options: options, into: &report)
        return result
    }

    private mutating func readList(_ list: [JSON], at path: JSONPath, depth: Int, task: Task, options: VerifyOptions, into report: inout Divergences) {
        for (i, entry) in list.enumerated() {
            let here = path.index(i)
            guard case .object(let o) = entry, let identifier = o["identifier"]?.stringValue else {
                report.add(.wrongType, "A step result is an object with an \"identifier\".", at: here)
                continue
            }
            if let index = task.stepIndex[identifier], let step = task.step(at: index) {
                readStep(o, step: step, index: index, at: here, options: options, into: &report)
            } else if let s = task.sectionIndex[identifier], task.rules.blockOfSection[s] != nil, case .array(let instances)? = o["instances"] {
                // A repeating section's result: its instances' step results, in order, each
                // step read with its instance (the replay adds the instances the path walks).
                guard depth < SubmittedResult.maxNesting else {
                    report.add(.wrongType, "Section results nest deeper than \(SubmittedResult.maxNesting).", at: here)
                    continue
                }
                for (k, entry) in instances.enumerated() {
                    let at = here.key("instances").index(k)
                    guard case .object(let io) = entry, case .array(let inner)? = io["results"], case .int(let number)? = io["index"],
                          number >= 0, number < 1000 else {
                        report.add(.wrongType, "An instance of a repeating section's result is {\"identifier\", \"index\", \"results\"}.", at: at)
                        continue
                    }
                    let first = steps.count
                    readList(inner, at: at.key("results"), depth: depth + 1, task: task, options: options, into: &report)
                    for i in first..<steps.count { steps[i].instance = Int(number) }
                }
            } else if task.sectionIndex[identifier] != nil, case .array(let inner)? = o["results"] {
                guard depth < SubmittedResult.maxNesting else {
                    report.add(.wrongType, "Section results nest deeper than \(SubmittedResult.maxNesting).", at: here)
                    continue
                }
                if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(o, allowed: SubmittedResult.stepFields, at: here, into: &report) }
                readList(inner, at: here.key("results"), depth: depth + 1, task: task, options: options, into: &report)
            } else {
                report.add(.unknownIdentifier, "The task has no step or section \"\(identifier)\".", at: here.key("identifier"), step: identifier)
            }
        }
    }

    private mutating func readStep(_ o: JSONObject, step: Step, index: Int, at path: JSONPath, options: VerifyOptions, into report: inout Divergences) {
        var submitted = SubmittedStep(step: index, path: path)
        if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(o, allowed: SubmittedResult.stepFields, at: path, into: &report) }
        submitted.startDate = SubmittedResult.date(o["startDate"], at: path.key("startDate"), options, &report)
        submitted.endDate = SubmittedResult.date(o["endDate"], at: path.key("endDate"), options, &report)
        guard case .array(let questions)? = o["results"] else {
            report.add(.wrongType, "A step result's \"results\" is an array.", at: path.key("results"), step: step.identifier)
            steps.append(submitted)
            return
        }
        var form = JSONObject()
        for (j, q) in questions.enumerated() {
            let here = path.key("results").index(j)
            // An active step's results are its recorders' files, which nothing can replay; a
            // game's result is recomputed from its recorded inputs (`SubmittedGame`).
            if case .message = step.content {
                if step.active?.game != nil, case .object(let qo) = q, qo["identifier"] == .string(step.identifier), qo["type"] != .string("file") {
                    if submitted.game != nil {
                        report.add(.duplicateItem, "The step \"\(step.identifier)\" lists its game's result twice.", at: here, step: step.identifier)
                    } else {
                        submitted.game = SubmittedGame(object: qo, path: here)
                    }
                }
                continue
            }
            guard case .object(let qo) = q, var name = qo["identifier"]?.stringValue else {
                report.add(.wrongType, "A question result is an object with an \"identifier\".", at: here, step: step.identifier)
                continue
            }
            // A page's results are named `page.substep` (`StepResult`); its answer is keyed by sub-step.
            if step.isPage {
                let prefix = step.identifier + "."
                guard name.hasPrefix(prefix) else {
                    report.add(.unknownIdentifier, "The page \"\(step.identifier)\" names its results \"\(prefix)substep\", not \"\(name)\".", at: here.key("identifier"),
                               step: step.identifier, item: name)
                    continue
                }
                name = String(name.dropFirst(prefix.count))
            }
            let format: AnswerFormat?
            switch step.content {
            case .question(let f): format = name == step.identifier ? f : nil
            case .form(let f): format = f.items.first(where: { $0.identifier == name })?.format
            case .message: format = nil
            }
            guard let format else {
                report.add(.unknownIdentifier, "The step \"\(step.identifier)\" has no question \"\(name)\".", at: here.key("identifier"),
                           step: step.identifier, item: name)
                continue
            }
            guard submitted.places[name] == nil else {
                report.add(.duplicateItem, "The step \"\(step.identifier)\" lists \"\(name)\" twice.", at: here, step: step.identifier, item: name)
                continue
            }
            let answer: JSON?
            if let repeating = format.rules as? RepeatingFormat {
                // A repeating block's result holds its instances, not an answer (`SubmittedInstances.swift`).
                submitted.places[name] = here
                let (instances, block) = SubmittedResult.readBlock(qo, name: name, repeating, step: step, at: here, options: options, into: &report)
                submitted.blocks[name] = block
                answer = instances
            } else {
                submitted.places[name] = here.key("answer")
                answer = SubmittedResult.readQuestion(qo, name: name, format: format, step: step, at: here, options: options, into: &report)
            }
            guard let answer else { continue }
            if case .form = step.content { form[name] = answer } else { submitted.answer = answer }
        }
        if case .form = step.content, form.count > 0 { submitted.answer = .object(form) }
        steps.append(submitted)
    }

    /// A question result's answer (nil: null, or past an answer's limits), its members and
    /// `type` checked.
    static func readQuestion(_ qo: JSONObject, name: String, format: AnswerFormat, step: Step, at here: JSONPath, extraFields: Set<String> = [],
                             options: VerifyOptions, into report: inout Divergences) -> JSON? {
        if options.unknownFieldsAreErrors { unknownFields(qo, allowed: questionFields.union(extraFields), at: here, into: &report) }
        if let type = qo["type"], type.stringValue != format.resultType.rawValue {
            report.add(.wrongType, "\"\(name)\" is a \(format.resultType.rawValue) question, not \(type.stringValue ?? type.typeName).",
                       at: here.key("type"), step: step.identifier, item: name)
        }
        guard let answer = qo["answer"], !answer.isNull else { return nil }
        // An answer is held to what `set_answer` takes (a submission may nest deeper).
        guard InputLimits.answer.fits(answer) else {
            report.add(.answerRefused, "The answer is past the limits of an answer (1 MiB, 32 levels).", at: here.key("answer"),
                       step: step.identifier, item: name, reason: "tooDeep")
            return nil
        }
        return answer
    }

    static func unknownFields(_ o: JSONObject, allowed: Set<String>, at path: JSONPath, into report: inout Divergences) {
        for key in o.keys where !allowed.contains(key) {
            report.add(.unknownField, "\"\(key)\" is not a member of this part of a result.", at: path.key(key))
        }
    }

    /// A date as results write it; nil (and `invalidDate`) when it is not one, nil when dates are ignored.
    static func date(_ value: JSON?, at path: JSONPath, _ options: VerifyOptions, _ report: inout Divergences) -> Int64? {
        guard !options.ignoreDates, let value else { return nil }
        guard let text = value.stringValue, case .dateTime(let ms)? = CalendarValue.parse(text) else {
            report.add(.invalidDate, "A date is an ISO 8601 date-time such as 2026-01-02T10:30:00.000Z.", at: path)
            return nil
        }
        return ms
    }
}
