import StepKitBase

/// The session's state as the host should present it (`stepkit_session_state`), as a value tree:
/// the calls write it straight to text (`SessionState+Text.swift`, byte for byte this tree's
/// text: a field is added to both, `ResultWriterTests` compares them).
extension Session {
    package func stateJSON() -> JSON {
        let step = isFinished ? nil : currentStep
        let index = currentIndex ?? 0
        let problems = forwardProblems()
        var answer: JSON = .null
        var visibleItems: JSON = .null
        var presentation: JSON = .null
        let route = step == nil ? nil : routeForward()
        if let step {
            presentation = presentationJSON(step, index: index)
            switch step.content {
            case .message:
                answer = .null
            case .question:
                answer = answers[index] ?? .null
            case .form(let form):
                answer = answers[index] ?? .object(JSONObject())
                visibleItems = .array(form.items.filter { isVisible($0.identifier, step: index) }.map { .string($0.identifier) })
            }
        }
        let inProgress = step != nil
        let catalogue = messageCatalogue
        var state = JSONObject([
            "status": .string(isFinished ? "finished" : "inProgress"),
            "finishReason": .string(finishReason?.rawValue),
            "taskIdentifier": .string(task.identifier),
            "taskRunUUID": .string(taskRunUUID),
            "step": presentation,
            "answer": answer,
            "visibleItems": visibleItems,
            "problems": .array(problems.map { $0.localized(catalogue).json }),
            "missingAnswers": .array((isFinished ? [] : missingAnswers()).map { $0.localized(catalogue).json }),
            "navigation": .object([
                "canGoBack": .bool(inProgress && path.count > 1),
                "canGoForward": .bool(inProgress && problems.isEmpty),
                "canSkip": .bool(inProgress && (step?.optional ?? false) && (step?.takesAnswers ?? false)),
                "hasNextStep": .bool(inProgress && route?.step != nil),
                "arrival": inProgress ? (current?.arrival.json(in: task) ?? .null) : .null,
            ]),
            "progress": progressJSON(inProgress: inProgress),
            "active": activeJSON(),
            "taskSuspended": .bool(actions.taskSuspended),
            "nextDeadline": nextDeadline.map { .string(CivilTime.iso8601(milliseconds: $0)) } ?? .null,
            "restoreReport": restoreReport,
            "order": step.flatMap { s in seed.flatMap { Randomization.orderJSON(of: s, seed: $0) } } ?? .null,
            "seed": seed.map { .int(Int64($0)) } ?? .null,
            "timeLimits": timeLimitsJSON(),
        ])
        if showsLanguage { state["language"] = languageJSON }
        // The current step's repeating blocks (`Session+Instances`), when it has any.
        if let step, task.rules.repeats[index] != nil || task.rules.blockOfStep[index] != nil, !step.identifier.isEmpty { state["instances"] = instancesJSON(step: index) }
        // Only while they apply, so every other state reads as before (`Session+Review.swift`).
        if step?.isReview == true { state["review"] = reviewJSON() }
        if let plan = reviewReturn, step != nil { state["returnsToReview"] = .string(task.step(at: plan.review)?.identifier) }
        return .object(state)
    }

    /// The state's `step`: the step's presentation as this session shows it.
    func presentationJSON(_ step: Step, index: Int) -> JSON {
        var fields = step.presentation
        if current?.modified == true, let modifier = task.rules.modifiers[index] {
            for (key, value) in modifier.fields.entries { fields[key] = value }
        }
        presentingExpressions(&fields, step: index)
        if task.rules.pipedSteps.contains(index) { Piping.apply(to: &fields, piped) }
        // The seeded order and the choices offered now (`Session+Choices.swift`).
        presentChoices(&fields, step: index, step)
        // The presenter's vocabulary, decided here so no host decides it (Step.displayTitle).
        fields["displayTitle"] = .string(Step.displayTitle(fields, identifier: step.identifier))
        fields["isActive"] = .bool(step.isActive)
        return .object(fields)
    }

    /// The state's `language`: the tag asked for, the languages of the texts and the messages,
    /// the languages used so far and the task's languages.
    var languageJSON: JSON {
        guard case .object(var fields) = language.json else { return .null }
        fields["available"] = .array(home.languages.declared.map { .string($0) })
        return .object(fields)
    }

    /// Progress: steps presented so far, the fewest and most that can still come (from the
    /// rule graph; the most is null when a loop makes it unbounded), and `current`/`total` along
    /// the path the current answers lead to.
    private func progressJSON(inProgress: Bool) -> JSON {
        let presented = path.count
        guard inProgress, let index = currentIndex else {
            return .object([
                "current": .int(Int64(presented)), "total": .int(Int64(presented)), "presented": .int(Int64(presented)),
                "fewestRemaining": .int(0), "mostRemaining": .int(0),
            ])
        }
        let fewest = task.graph.fewestAfter[ifPresent: index] ?? nil
        let most = task.graph.mostAfter[ifPresent: index] ?? nil
        return .object([
            "current": .int(Int64(presented)),
            "total": .int(Int64(presented + projectedRemaining(from: index))),
            "presented": .int(Int64(presented)),
            "fewestRemaining": fewest.map { .int(Int64($0)) } ?? .null,
            "mostRemaining": most.map { .int(Int64($0)) } ?? .null,
        ])
    }

    /// How many steps follow the current one if navigation goes where the answers given so far
    /// lead (unanswered questions ahead read as unanswered). Ordered tasks need no walk; with
    /// rules, the walk is exact for `projectionHorizon` steps and the rule graph's fewest covers
    /// the rest, so reading the state costs the same on a 100-step and a 100,000-step task.
    func projectedRemaining(from index: Int) -> Int {
        if task.rules.isEmpty && task.rules.stepBlocks.isEmpty { return max(task.steps.count - 1 - index, 0) }
        let navigator = Navigator(task, explains: false)
        var count = 0
        var step = index
        // Steps of repeating sections count once per instance (`instanceStepsAhead`).
        let blocks = !task.rules.stepBlocks.isEmpty
        var walked: [Int] = []
        while let next = navigator.route(leaving: step, in: self).step {
            count += 1
            step = next
            if blocks { walked.append(next) }
            if count >= Session.projectionHorizon {
                let rest = task.graph.fewestAfter[ifPresent: step] ?? nil
                return count + (rest ?? 0) + (blocks ? instanceStepsAhead(from: index, walked: walked) : 0)
            }
        }
        return count + (blocks ? instanceStepsAhead(from: index, walked: walked) : 0)
    }

    static let projectionHorizon = 16
}
