import StepKitBase

/// A condition on answers, used by navigation rules, skip rules, step modifiers and form item
/// visibility. Compiled once; evaluated against the answers the session's path shows.
///
/// Only `not` is boxed (`all` and `any` hold arrays, a comparison is a class): read on every
/// move by every session of the task, a boxed case was a shared box retained and released at
/// each evaluation.
enum Predicate: Sendable {
    case all([Predicate])
    case any([Predicate])
    indirect case not(Predicate)
    case always(Bool)
    case compare(Comparison)
    /// A boolean expression in the expression language (true only when it gives `true`).
    case expression(Expression)

    /// `scope`: the instances of repeating blocks it is evaluated in (a per-instance
    /// `visibleWhen`'s instance; none elsewhere).
    func evaluate(_ answers: some AnswerLookup, in scope: InstanceScope = .none) -> Bool {
        switch self {
        case .all(let ps): return ps.allSatisfy { $0.evaluate(answers, in: scope) }
        case .any(let ps): return ps.contains { $0.evaluate(answers, in: scope) }
        case .not(let p): return !p.evaluate(answers, in: scope)
        case .always(let b): return b
        case .compare(let c): return c.evaluate(answers, in: scope)
        case .expression(let e): return Predicate.holds(e, answers, scope)
        }
    }

    /// Kept out of line: inlined, the evaluator (which holds a copy of the lookup, a whole
    /// session) would widen every frame of this recursion, and a predicate nested to the
    /// definition's depth limit must still fit a 256 KiB stack.
    @inline(never)
    private static func holds(_ e: Expression, _ answers: some AnswerLookup, _ scope: InstanceScope) -> Bool {
        e.evaluate(answers, in: scope).isTrue
    }
}

/// Which answer a comparison reads.
enum Selector: Sendable, Equatable {
    /// A question step's answer (by step index).
    case step(Int)
    /// A form item's answer.
    case item(step: Int, item: String)
    /// A question result of another task run, given in the session option `additionalTaskResults`.
    case external(task: String, step: String, item: String?)
    /// An item of a repeating block's instance: the one in scope, or at an index
    /// (`Expressions/Instances.swift`).
    case instance(InstanceRead)
}

/// Where a predicate reads answers: the session's path (and, for external selectors, the
/// results the host supplied). Nil when unanswered; the type is the result type.
protocol AnswerLookup {
    func answer(_ selector: Selector) -> (value: JSON, type: ResultType)?
    /// The answer alone, where the type is already known (a cheaper read for a session).
    func answerValue(_ selector: Selector) -> JSON?
    /// The task's calculations on these answers, in `Calculations.list` order.
    func calculationValues() -> [ExpressionValue]
    /// The time `now` and `today` read, in milliseconds since the epoch.
    var evaluationTime: Int64 { get }
    /// How many instances a repeating block has, and one instance's entry (an object of its
    /// items' answers, or a repeating question's answer), as this lookup shows them
    /// (`Expressions/Instances.swift` has the defaults: the block's answer's array).
    func instanceCount(_ block: BlockReference) -> Int
    func instanceEntry(_ block: BlockReference, _ index: Int) -> JSON?
    /// How many instances repeating section `n` (`TaskRules.stepBlocks`) has: navigation
    /// passes over one with none.
    func sectionInstanceCount(_ n: Int) -> Int
}

extension AnswerLookup {
    func answerValue(_ selector: Selector) -> JSON? { answer(selector)?.value }
    func calculationValues() -> [ExpressionValue] { [] }
    var evaluationTime: Int64 { 0 }
    func sectionInstanceCount(_ n: Int) -> Int { 1 }
}

/// `{"result": SELECTOR, OPERATOR: OPERAND, ...}`: every test must hold (they are ANDed).
///
/// A class, immutable, for the reason `AnswerFormat` is one: a predicate is read on every move,
/// and as a struct each evaluation copied the comparison out of its `indirect` case through its
/// value witnesses (the selector, the tests, the type) and destroyed the copy after, about 0.6k
/// instructions a form with one `visibleWhen` (`benchmarks/README.md`, seventh round).
final class Comparison: Sendable {
    enum Test: Sendable {
        case answered(Bool)
        case dontKnow(Bool)
        case equals(JSON)
        case notEquals(JSON)
        /// Every listed value is selected.
        case contains([JSON])
        /// At least one listed value is selected.
        case containsAny([JSON])
        case matches(Pattern)
        case minimum(JSON)
        case maximum(JSON)
        case exclusiveMinimum(JSON)
        case exclusiveMaximum(JSON)
    }

    let selector: Selector
    let tests: [Test]
    /// The answer's result type when the task fixes it (a question's, a form item's), so that a
    /// move reads the value alone and never looks the step's format up; nil for another task's
    /// result, whose type comes with it.
    let type: ResultType?

    init(selector: Selector, tests: [Test], type: ResultType? = nil) {
        self.selector = selector
        self.tests = tests
        self.type = type
    }

    func evaluate(_ answers: some AnswerLookup, in scope: InstanceScope = .none) -> Bool {
        let found: (value: JSON, type: ResultType)?
        if let type {
            found = answers.scopedValue(selector, scope).map { ($0, type) }
        } else {
            found = answers.answer(selector)
        }
        return holds(for: found)
    }

    /// Whether every test holds for the answer `found` (nil: unanswered), read however the
    /// caller found it (`Session.holdsOnStoredAnswers` reads it from the session in place).
    func holds(for found: (value: JSON, type: ResultType)?) -> Bool {
        for i in tests.indices {
            guard Comparison.holds(tests[i], found) else { return false }
        }
        return true
    }

    private static func holds(_ test: Test, _ found: (value: JSON, type: ResultType)?) -> Bool {
        switch test {
        case .answered(let expected):
            return (found != nil) == expected
        case .dontKnow(let expected):
            guard let found else { return false }
            return AnswerFormat.isDontKnow(found.value) == expected
        default:
            break
        }
        // A comparison on an unanswered (or "don't know") question is false.
        guard let (value, type) = found, !AnswerFormat.isDontKnow(value) else { return false }
        switch test {
        case .answered, .dontKnow:
            return false
        case .equals(let operand):
            return AnswerValue.equal(value, operand, type)
        case .notEquals(let operand):
            return !AnswerValue.equal(value, operand, type)
        case .contains(let operands):
            return operands.allSatisfy { op in AnswerValue.anyChoice(of: value) { $0.sameValue(as: op) } }
        case .containsAny(let operands):
            return operands.contains { op in AnswerValue.anyChoice(of: value) { $0.sameValue(as: op) } }
        case .matches(let pattern):
            if type == .choice {
                return AnswerValue.anyChoice(of: value) { $0.stringValue.map(pattern.matches) ?? false }
            }
            return value.stringValue.map(pattern.matches) ?? false
        case .minimum(let operand):
            return AnswerValue.order(value, operand, type).map { $0 >= 0 } ?? false
        case .maximum(let operand):
            return AnswerValue.order(value, operand, type).map { $0 <= 0 } ?? false
        case .exclusiveMinimum(let operand):
            return AnswerValue.order(value, operand, type).map { $0 > 0 } ?? false
        case .exclusiveMaximum(let operand):
            return AnswerValue.order(value, operand, type).map { $0 < 0 } ?? false
        }
    }
}

/// How answers of each result type compare.
enum AnswerValue {
    /// The values of a choice answer (an "other" choice with text counts as its value).
    static func choiceValues(_ answer: JSON) -> [JSON] {
        guard case .array(let items) = answer else { return [answer] }
        return items.map(choiceValue)
    }

    /// Whether one of `choiceValues(answer)` satisfies `test`, read in place: a predicate
    /// evaluated on every move built the list only to search it.
    static func anyChoice(of answer: JSON, _ test: (JSON) -> Bool) -> Bool {
        guard case .array(let items) = answer else { return test(answer) }
        for item in items where test(choiceValue(item)) { return true }
        return false
    }

    /// A choice answer's element as its value ("other" text set aside).
    private static func choiceValue(_ item: JSON) -> JSON {
        if case .object(let object) = item, let value = object["value"] { return value }
        return item
    }

    /// The answer as a number on its type's scale: numbers as they are, `HH:mm` and `HH:mm:ss`
    /// as seconds since midnight, dates as milliseconds since the epoch.
    static func magnitude(_ value: JSON, _ type: ResultType) -> Double? {
        switch type {
        case .timeOfDay:
            return value.stringValue.flatMap(TimeOfDay.seconds).map { Double($0.seconds) }
        case .date:
            return value.stringValue.flatMap(CalendarValue.parse).map { Double($0.instant) }
        default:
            return value.numericValue
        }
    }

    /// Whether an answer equals an operand of its type (`ExpressionValue.equal`, the one
    /// comparison expressions use too).
    static func equal(_ value: JSON, _ operand: JSON, _ type: ResultType) -> Bool {
        ExpressionValue.equal(.answer(value, type), .answer(operand, type))
    }

    /// -1, 0 or 1 as the answer is below, at or above the operand; nil when they do not compare.
    /// Predicates' `minimum`/`maximum` order numbers, dates and times, not text.
    static func order(_ value: JSON, _ operand: JSON, _ type: ResultType) -> Int? {
        ExpressionValue.order(.answer(value, type), .answer(operand, type), strings: false)
    }
}
