import StepKitBase

/// Verifying a submission against its task (`stepkit_task_verify_result`, docs/verify.md).
///
/// A client's result cannot be trusted: it may have been edited, or written by another
/// program. So the engine replays it as restore replays a saved run
/// (`Session/Restoration+Replay.swift`): a new session of the task, started where the
/// submission starts, takes each submitted step's answers through the one acceptance entry
/// (`Session.setAnswer`, `Rules/Acceptance.swift`) and leaves the step the way navigation
/// leaves it (`Session.leaveCurrent`, `Navigator`). Where restore stops at the first problem,
/// the replay goes on and reports every divergence: it follows navigation, not the submission,
/// so a step the submission adds is reported and passed over, a step it lacks is reported and
/// left unanswered, and an answer the engine refuses is reported and left out. What the replay
/// ends with is the engine's own result (and, for a task imported from FHIR, its
/// QuestionnaireResponse): what a server stores in place of what the client sent.
package enum Verification {
    package static func verify(_ submission: JSON, task: Task, options: VerifyOptions) throws(StepKitError) -> JSON {
        guard case .object(let object) = submission else {
            throw StepKitError(.invalidArgument, code: "notASubmission",
                               message: "A submission is a task result object or a QuestionnaireResponse, not \(submission.typeName).")
        }
        var report = Divergences()
        if object["resourceType"] != nil {
            guard object["resourceType"]?.stringValue == "QuestionnaireResponse" else {
                throw StepKitError(.invalidArgument, code: "notASubmission",
                                   message: "A FHIR submission is a QuestionnaireResponse.", path: .root.key("resourceType"))
            }
            guard let layout = task.fhir else {
                throw StepKitError(.invalidArgument, code: "notFHIR",
                                   message: "A QuestionnaireResponse verifies only against a task imported from a FHIR Questionnaire.")
            }
            guard let response = SubmittedResponse.read(object, task: task, layout: layout, options: options, into: &report) else {
                return reportJSON(report, result: nil, response: nil)
            }
            var replay = Replay(task: task, options: options, start: nil, taskRunUUID: nil)
            defer { replay.release() }
            replay.excuseMissingAnswers = options.allowIncomplete || response.inProgress
            replay.run(byStep: response.steps, report: &report)
            response.compare(with: replay.session.fhirResponse(layout), session: replay.session, options: options, into: &report)
            return reportJSON(report, result: replay.session.resultJSON(), response: replay.session.fhirResponse(layout))
        }
        guard let result = SubmittedResult.read(object, task: task, options: options, into: &report) else {
            return reportJSON(report, result: nil, response: nil)
        }
        if !options.ignoreDates { checkDates(result, into: &report) }
        var replay = Replay(task: task, options: options, start: result.startDate, taskRunUUID: result.taskRunUUID, seed: result.seed)
        defer { replay.release() }
        replay.run(path: result.steps, report: &report)
        if !options.ignoreCalculations { compareCalculations(result.calculations, replay.session, into: &report) }
        let engineResult = replay.session.resultJSON()
        if task.rules.shuffles { compareOrders(result, engineResult, into: &report) }
        return reportJSON(report, result: engineResult, response: task.fhir.map { replay.session.fhirResponse($0) })
    }

    /// The orders a result records (`randomization.orders`) against those its seed gives on the
    /// path the replay walked: the order a participant saw is part of what a study analyses,
    /// so an edited one, a missing one, or one for a list the run did not show is reported.
    private static func compareOrders(_ result: SubmittedResult, _ engine: JSON, into report: inout Divergences) {
        let path = JSONPath.root.key("randomization")
        guard let seed = result.seed, let submitted = result.orders else {
            if !report.has(.wrongType, at: path) {
                report.add(.orderMismatch, "The task shuffles, but the submission records no \"randomization\": the order shown cannot be checked.", at: path)
            }
            return
        }
        let expected = engine.objectValue?["randomization"]?.objectValue?["orders"]?.objectValue ?? JSONObject()
        expected.forEachEntry { identifier, order in
            guard let given = submitted[identifier] else {
                report.add(.orderMismatch, "The submission records no order for \"\(identifier)\", which the run showed shuffled.",
                           at: path.key("orders").key(identifier), step: identifier)
                return
            }
            if given != order {
                report.add(.orderMismatch, "The recorded order of \"\(identifier)\" is not the one the seed \(seed) gives.",
                           at: path.key("orders").key(identifier), step: identifier)
            }
        }
        submitted.forEachEntry { identifier, _ in
            if expected[identifier] == nil {
                report.add(.orderMismatch, "The submission records an order for \"\(identifier)\", which the run did not show shuffled.",
                           at: path.key("orders").key(identifier), step: identifier)
            }
        }
    }

    private static func reportJSON(_ report: Divergences, result: JSON?, response: JSON?) -> JSON {
        var o = JSONObject([
            "verified": .bool(report.list.isEmpty),
            "divergences": .array(report.list.map(\.json)),
        ])
        if report.truncated { o["truncated"] = .bool(true) }
        o["result"] = result ?? .null
        if let response { o["questionnaireResponse"] = response }
        return .object(o)
    }

    /// The run's dates follow each other: its start, each step's start and end, its end.
    private static func checkDates(_ result: SubmittedResult, into report: inout Divergences) {
        var previous = result.startDate
        var previousName = "the run's start"
        func check(_ date: Int64?, _ path: JSONPath, _ name: String, step: String?) {
            guard let date else { return }
            if let p = previous, date < p {
                report.add(.datesOutOfOrder, "\(name) (\(CivilTime.iso8601(milliseconds: date))) is before \(previousName) (\(CivilTime.iso8601(milliseconds: p))).",
                           at: path, step: step)
                return
            }
            previous = date
            previousName = name
        }
        for s in result.steps {
            let id = s.path.description
            check(s.startDate, s.path.key("startDate"), "the start of \(id)", step: nil)
            check(s.endDate, s.path.key("endDate"), "the end of \(id)", step: nil)
        }
        check(result.endDate, .root.key("endDate"), "the run's end", step: nil)
    }

    private static func compareCalculations(_ submitted: JSON?, _ session: Session, into report: inout Divergences) {
        let computed = session.calculationsJSON().objectValue ?? JSONObject()
        let base = JSONPath.root.key("calculations")
        guard let submitted, !submitted.isNull else {
            if computed.count > 0 { report.add(.calculationMismatch, "The submission has no \"calculations\"; the task computes \(computed.count).", at: base) }
            return
        }
        guard case .object(let given) = submitted else {
            report.add(.wrongType, "\"calculations\" is an object: name → value.", at: base)
            return
        }
        for (name, value) in computed.entries {
            guard let claimed = given[name] else {
                report.add(.calculationMismatch, "The calculation \"\(name)\" is missing; the engine computes \(JSONWriter.string(value)).", at: base.key(name))
                continue
            }
            if !claimed.sameValue(as: value) {
                report.add(.calculationMismatch, "The calculation \"\(name)\" is submitted as \(JSONWriter.string(claimed)); the engine computes \(JSONWriter.string(value)).",
                           at: base.key(name))
            }
        }
        for key in given.keys where computed[key] == nil {
            report.add(.unknownIdentifier, "The task has no calculation \"\(key)\".", at: base.key(key))
        }
    }
}
