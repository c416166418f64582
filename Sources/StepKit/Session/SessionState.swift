/// The session's state as the host should present it (`stepkit_session_state`).
extension Session {
    func stateJSON() -> JSON {
        let step = isFinished ? nil : currentStep
        let problems = forwardProblems()
        var answer: JSON = .null
        if let step {
            switch step.content {
            case .message: answer = .null
            case .question: answer = answers[current.stepIndex] ?? .null
            case .form: answer = answers[current.stepIndex] ?? .object(JSONObject())
            }
        }
        let inProgress = step != nil
        return .object([
            "status": .string(isFinished ? "finished" : "inProgress"),
            "finishReason": .string(finishReason?.rawValue),
            "taskIdentifier": .string(task.identifier),
            "taskRunUUID": .string(taskRunUUID),
            "step": step.map { .object($0.presentation) } ?? .null,
            "answer": answer,
            "problems": .array(problems.map(\.json)),
            "navigation": .object([
                "canGoBack": .bool(inProgress && path.count > 1),
                "canGoForward": .bool(inProgress && problems.isEmpty),
                "canSkip": .bool(inProgress && (step?.optional ?? false) && (step?.takesAnswers ?? false)),
                "hasNextStep": .bool(inProgress && nextStepIndex(after: current.stepIndex) != nil),
            ]),
            "progress": .object([
                "current": .int(Int64(current.stepIndex + 1)),
                "total": .int(Int64(task.steps.count)),
            ]),
        ])
    }
}
