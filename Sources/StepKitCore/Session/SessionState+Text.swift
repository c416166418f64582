import StepKitBase

/// The session's state written straight into the output buffer (every call that asks for it,
/// and `stepkit_session_state`): the same text, byte for byte, as `JSONWriter` makes of
/// `stateJSON()` with the call's `events` added (the tree stays as this writer's oracle in
/// `ResultWriterTests`). The step's presentation, the task's own object shared by every session,
/// is written member by member in place unless something rewrites it for this session (a step
/// modifier, expression bounds or calculations, piping, the choices shown): copying it to add
/// `displayTitle` and `isActive` retained every member, on memory all threads write to.
///
/// One function per object of the state, in the tree's key order; a field added to the tree is
/// added to the writer in the same place.
extension Session {
    package func writeState(events: [JSON], to out: inout JSONOutput) {
        let step = isFinished ? nil : currentStep
        let index = currentIndex ?? 0
        let problems = forwardProblems()
        let route = step == nil ? nil : routeForward()
        let inProgress = step != nil
        // nil: the messages are in the shipped English they were made in.
        let catalogue = messagesInShippedEnglish ? nil : messageCatalogue
        out.raw("{\"status\":")
        out.raw(isFinished ? "\"finished\"" : "\"inProgress\"")
        out.raw(",\"finishReason\":")
        out.string(finishReason?.rawValue)
        out.raw(",\"taskIdentifier\":")
        out.string(task.identifier)
        out.raw(",\"taskRunUUID\":")
        out.string(taskRunUUID)
        out.raw(",\"step\":")
        if let step {
            writePresentation(step, index: index, to: &out)
            out.raw(",\"answer\":")
            switch step.content {
            case .message:
                out.null()
                out.raw(",\"visibleItems\":null")
            case .question:
                out.value(answers[index])
                out.raw(",\"visibleItems\":null")
            case .form(let form):
                if let answer = answers[index] { out.value(answer) } else { out.raw("{}") }
                out.raw(",\"visibleItems\":[")
                var first = true
                for item in form.items where isVisible(item.identifier, step: index) {
                    if !first { out.byte(UInt8(ascii: ",")) }
                    first = false
                    out.string(item.identifier)
                }
                out.byte(UInt8(ascii: "]"))
            }
        } else {
            out.raw("null,\"answer\":null,\"visibleItems\":null")
        }
        out.raw(",\"problems\":[")
        for (i, problem) in problems.enumerated() {
            if i > 0 { out.byte(UInt8(ascii: ",")) }
            Session.writeProblem(problem, catalogue, to: &out)
        }
        out.raw("],\"missingAnswers\":[")
        if !isFinished {
            for (i, problem) in missingAnswers().enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                Session.writeProblem(problem, catalogue, to: &out)
            }
        }
        out.raw("],\"navigation\":{\"canGoBack\":")
        out.bool(inProgress && path.count > 1)
        out.raw(",\"canGoForward\":")
        out.bool(inProgress && problems.isEmpty)
        out.raw(",\"canSkip\":")
        out.bool(inProgress && (step?.optional ?? false) && (step?.takesAnswers ?? false))
        out.raw(",\"hasNextStep\":")
        out.bool(inProgress && route?.step != nil)
        out.raw(",\"arrival\":")
        if inProgress, let current { out.value(current.arrival.json(in: task)) } else { out.null() }
        out.raw("},\"progress\":")
        writeProgress(inProgress: inProgress, to: &out)
        out.raw(",\"active\":")
        out.value(activeJSON())
        out.raw(",\"taskSuspended\":")
        out.bool(actions.taskSuspended)
        out.raw(",\"nextDeadline\":")
        if let deadline = nextDeadline { out.date(milliseconds: deadline) } else { out.null() }
        out.raw(",\"restoreReport\":")
        out.value(restoreReport)
        out.raw(",\"order\":")
        out.value(step.flatMap { s in seed.flatMap { Randomization.orderJSON(of: s, seed: $0) } })
        out.raw(",\"seed\":")
        if let seed { out.int(Int64(seed)) } else { out.null() }
        out.raw(",\"timeLimits\":")
        out.value(timeLimitsJSON())
        if showsLanguage {
            out.raw(",\"language\":")
            out.value(languageJSON)
        }
        // The current step's repeating blocks (`Session+Instances`), when it has any.
        if let step, task.rules.repeats[index] != nil || task.rules.blockOfStep[index] != nil, !step.identifier.isEmpty {
            out.raw(",\"instances\":")
            out.value(instancesJSON(step: index))
        }
        // As the tree writes them (`stateJSON`): only while they apply.
        if let step, step.isReview {
            out.raw(",\"review\":")
            out.value(reviewJSON())
        }
        if let plan = reviewReturn, step != nil {
            out.raw(",\"returnsToReview\":")
            out.string(task.step(at: plan.review)?.identifier ?? "")
        }
        out.raw(",\"events\":[")
        for (i, event) in events.enumerated() {
            if i > 0 { out.byte(UInt8(ascii: ",")) }
            out.value(event)
        }
        out.raw("]}")
    }

    /// The state's `step`: the step's presentation as this session shows it, then
    /// `displayTitle` and `isActive`.
    private func writePresentation(_ step: Step, index: Int, to out: inout JSONOutput) {
        let presentation = step.presentation
        let rewritten = (current?.modified == true && task.rules.modifiers[index] != nil)
            || task.rules.stepCalculations[index] != nil || task.rules.answerBounds[index] != nil
            || task.rules.pipedSteps.contains(index) || seed != nil || task.rules.choiceFilters[index] != nil
            || presentation["displayTitle"] != nil || presentation["isActive"] != nil
        guard !rewritten else {
            out.value(presentationJSON(step, index: index))
            return
        }
        out.byte(UInt8(ascii: "{"))
        presentation.forEachEntry { key, value in
            out.string(key)
            out.byte(UInt8(ascii: ":"))
            out.value(value)
            out.byte(UInt8(ascii: ","))
        }
        out.raw("\"displayTitle\":")
        out.string(Step.displayTitle(presentation, identifier: step.identifier))
        out.raw(",\"isActive\":")
        out.bool(step.isActive)
        out.byte(UInt8(ascii: "}"))
    }

    /// A problem in the session's language (`Problem.localized(_:)` then `Problem.json`); with no
    /// catalogue, its message as made (in English).
    private static func writeProblem(_ problem: Problem, _ catalogue: MessageCatalogue?, to out: inout JSONOutput) {
        out.raw("{\"code\":")
        out.string(problem.code)
        out.raw(",\"message\":")
        if let catalogue, let text = problem.text { out.string(text.render(in: catalogue)) } else { out.string(problem.message) }
        out.raw(",\"path\":")
        out.string(problem.path.description)
        if let step = problem.step {
            out.raw(",\"step\":")
            out.string(step)
        }
        if let item = problem.item {
            out.raw(",\"item\":")
            out.string(item)
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// The state's `progress` (`progressJSON`).
    private func writeProgress(inProgress: Bool, to out: inout JSONOutput) {
        let presented = Int64(path.count)
        guard inProgress, let index = currentIndex else {
            out.raw("{\"current\":")
            out.int(presented)
            out.raw(",\"total\":")
            out.int(presented)
            out.raw(",\"presented\":")
            out.int(presented)
            out.raw(",\"fewestRemaining\":0,\"mostRemaining\":0}")
            return
        }
        let fewest = task.graph.fewestAfter[ifPresent: index] ?? nil
        let most = task.graph.mostAfter[ifPresent: index] ?? nil
        out.raw("{\"current\":")
        out.int(presented)
        out.raw(",\"total\":")
        out.int(presented + Int64(projectedRemaining(from: index)))
        out.raw(",\"presented\":")
        out.int(presented)
        out.raw(",\"fewestRemaining\":")
        if let fewest { out.int(Int64(fewest)) } else { out.null() }
        out.raw(",\"mostRemaining\":")
        if let most { out.int(Int64(most)) } else { out.null() }
        out.byte(UInt8(ascii: "}"))
    }
}
