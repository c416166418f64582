import StepKitBase

/// The one decision whether an answer is accepted for a step: `Task.accept`.
///
/// It has five parts, run in this order, each only once the ones before it passed, and an
/// answer is refused with every problem of the first part that finds any:
///
/// 1. the format, always: the step's answer format, or a form's items each by its own
///    (`Step.validate`, `Model/AnswerValidation.swift`, `Model/AnswerFormats/`);
/// 2. `confirmText`: each confirmation the answer sets equals its original as it stands after
///    the change, when the original has an answer (`Form.confirmationProblems`, which
///    `Step.validate` runs once the items pass);
/// 3. `matchBounds`: every `matches` condition that reads the answer can match it within its
///    bound (`ConditionPatterns`), so none later reads it as "no match" for being too long;
/// 4. `availableChoices`: every choice it selects is offered now (a choice's `visibleWhen`, a
///    list's `choicesFrom`; `Rules/ChoiceAvailability.swift`), on the answers as they will be;
/// 5. `expressionBounds`: the bounds written as expressions hold, evaluated on the answers as
///    they will be with it (`AnswerBounds`; the format words the refusal).
///
/// `set_answer` runs all four. Restore runs the format and `matchBounds` on every saved answer:
/// both depend only on the task and the answer, so an answer `set_answer` accepted passes them
/// again. It does not run the other two on a saved answer, because they depended on the moment
/// it was set: a confirmation is checked against its original only as they stood then (a draft
/// may hold one its original has since moved away from; leaving the form checks it, and the
/// replay checks every visit left going forward, `Restoration+Replay.swift`), and an expression
/// bound was evaluated on the answers and the clock of that moment (a later change of the answer
/// it reads, or "today" moving on, would refuse an answer that was rightly accepted). Migration
/// keeps, item by item, what passes the same two parts on the new version of the task.
struct AcceptanceParts: OptionSet, Sendable {
    let rawValue: UInt8

    static let confirmText = AcceptanceParts(rawValue: 1 << 0)
    static let matchBounds = AcceptanceParts(rawValue: 1 << 1)
    static let expressionBounds = AcceptanceParts(rawValue: 1 << 2)
    /// The choices offered now (`ChoiceAvailability.swift`): a choice hidden by its
    /// `visibleWhen` or not given by its list's `choicesFrom` is refused. It depends on the
    /// answers of the moment, as expression bounds do, so restore does not run it again (a
    /// selection that stopped being offered was removed then, with an event).
    static let availableChoices = AcceptanceParts(rawValue: 1 << 3)

    /// What `set_answer` decides.
    static let setAnswer: AcceptanceParts = [.confirmText, .matchBounds, .expressionBounds, .availableChoices]
    /// What restore replays on every saved answer (with the format), and why only that: see
    /// the type's comment.
    static let restore: AcceptanceParts = [.matchBounds]
}

extension Task {
    /// Whether `answer` is accepted for `step`, the task's step at `index` (`parts`: which of the decision's parts run),
    /// and the answer as it is kept (nil: no answer). `previous`: the answer it replaces, which
    /// some formats and a form's untouched items keep. `answers`: the session's answers with the
    /// kept value in place, asked for only when a bound written as an expression must be
    /// evaluated (nearly every step has none). `problems`: every problem of the first part that
    /// refused it (the caller's error: `STEPKIT_EANSWER` for `set_answer`, "damaged" for restore);
    /// empty when it is accepted.
    func accept<Lookup: AnswerLookup>(_ answer: JSON, to step: Step, at index: Int, previous: JSON?, parts: AcceptanceParts,
                                      answers: (JSON?) -> Lookup) -> (value: JSON?, problems: [Problem]) {
        let checked = step.validate(answer, previous: previous, confirming: parts.contains(.confirmText) ? .changed : .never)
        guard checked.problems.isEmpty else { return (nil, checked.problems) }
        let value = checked.value
        if parts.contains(.matchBounds) {
            let problems = rules.conditionPatterns.problems(step: index, value: value)
            guard problems.isEmpty else { return (nil, problems) }
        }
        if parts.contains(.availableChoices), rules.choiceFilters[index] != nil {
            let problems = unavailableChoiceProblems(value, step: index, on: answers(value))
            guard problems.isEmpty else { return (nil, problems) }
        }
        if parts.contains(.expressionBounds), let bounds = rules.answerBounds[index] {
            let lookup = answers(value)
            var problems: [Problem] = []
            for bound in bounds {
                if let item = bound.item {
                    // A form's bounds are checked on the items this answer sets.
                    guard answer.objectValue?[item] != nil else { continue }
                    if let p = bound.problem(value?.objectValue?[item], on: lookup) { problems.append(p) }
                } else if let p = bound.problem(value, on: lookup) {
                    problems.append(p)
                }
            }
            guard problems.isEmpty else { return (nil, problems) }
        }
        return (value, [])
    }
}
