/// The task result (`stepkit_session_result`): ResearchKit's `ORKTaskResult` as JSON.
extension Session {
    func resultJSON() -> JSON {
        let time = endDate ?? now
        var stepResults: [JSON] = []
        stepResults.reserveCapacity(path.count)
        for (i, visit) in path.enumerated() {
            guard let step = task.step(at: visit.stepIndex) else { continue }
            let isCurrent = i == path.count - 1 && !isFinished
            let answer = visit.skipped ? nil : (isCurrent ? answers[visit.stepIndex] : visit.answer)
            stepResults.append(StepResult.json(step: step, visit: visit, answer: answer, now: time))
        }
        return .object([
            "identifier": .string(task.identifier),
            "taskRunUUID": .string(taskRunUUID),
            "startDate": .string(CivilTime.iso8601(milliseconds: startDate)),
            "endDate": .string(CivilTime.iso8601(milliseconds: time)),
            "results": .array(stepResults),
        ])
    }
}

/// One visit's step result and its question results.
enum StepResult {
    static func json(step: Step, visit: Visit, answer: JSON?, now: Int64) -> JSON {
        let start = JSON.string(CivilTime.iso8601(milliseconds: visit.startDate))
        let end = JSON.string(CivilTime.iso8601(milliseconds: visit.endDate ?? now))
        var questions: [JSON] = []
        switch step.content {
        case .message:
            break
        case .question(let format):
            questions.append(question(step.identifier, format, answer, start, end))
        case .form(let form):
            let given = answer?.objectValue
            for item in form.items {
                questions.append(question(item.identifier, item.format, given?[item.identifier], start, end))
            }
        }
        return .object([
            "identifier": .string(step.identifier),
            "startDate": start,
            "endDate": end,
            "results": .array(questions),
        ])
    }

    private static func question(_ identifier: String, _ format: AnswerFormat, _ answer: JSON?, _ start: JSON, _ end: JSON) -> JSON {
        var result = JSONObject([
            "identifier": .string(identifier),
            "type": .string(format.rules.resultType.rawValue),
            "answer": answer ?? .null,
            "startDate": start,
            "endDate": end,
        ])
        if let unit = format.rules.unit { result["unit"] = .string(unit) }
        return .object(result)
    }
}
