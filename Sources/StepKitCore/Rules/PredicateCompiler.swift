import StepKitBase

/// Reads predicates from a definition and checks them against the task: selectors must name a
/// question step or form item, operators must apply to its answer type, and operands must have
/// the right type (and, for choices, be among the choices).
struct PredicateCompiler {
    /// What the compiler knows of the task's steps and sections.
    let steps: [Step]
    let stepIndex: [String: Int]
    let sectionIdentifiers: Set<String>
    let diagnostics: Diagnostics
    /// Which form has an item of a given identifier, for the message of a selector that names a
    /// form item as if it were a step; built the first time such a message is written.
    private let itemOwners = FormItemOwners()
    /// The task's calculations, as far as they are known (names first, types as they compile).
    var calculations = CalculationTable()
    /// The repeating blocks whose instance is in scope while an expression compiles
    /// (`Expressions/InstanceCompiler.swift`).
    let scope = CompileScope()
    /// The task's repeating sections, which a read of their steps is scoped to
    /// (`Expressions/InstanceCompiler.swift`).
    var repeatingSections = RepeatingSections()

    private static let operators = ["answered", "dontKnow", "equals", "notEquals", "contains", "containsAny", "matches",
                                    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]

    func compile(_ value: JSON, at path: JSONPath) -> Predicate? {
        guard case .object(let object) = value else {
            diagnostics.error("wrongType", "A predicate is an object, found \(value.typeName).", at: path)
            return nil
        }
        if object.count == 1, let key = object.keys.first, let operand = object[key], ["all", "any", "not", "always"].contains(key),
           !ExpressionCompiler.isAggregate(object) {
            switch key {
            case "all", "any":
                guard case .array(let items) = operand else {
                    diagnostics.error("wrongType", "\"\(key)\" takes an array of predicates.", at: path.key(key))
                    return nil
                }
                let parts = items.enumerated().map { compile($1, at: path.key(key).index($0)) }
                guard parts.allSatisfy({ $0 != nil }) else { return nil }
                let ps = parts.compactMap { $0 }
                return key == "all" ? .all(ps) : .any(ps)
            case "not":
                return compile(operand, at: path.key("not")).map { .not($0) }
            default:
                guard case .bool(let b) = operand else {
                    diagnostics.error("wrongType", "\"always\" takes true or false.", at: path.key("always"))
                    return nil
                }
                return .always(b)
            }
        }
        if object.count == 1, let operand = object["consented"] {
            return compileConsented(operand, at: path.key("consented"))
        }
        if ExpressionCompiler.isExpression(object) {
            return ExpressionCompiler(predicates: self).compile(value, at: path, expecting: .boolean).map { .expression($0.0) }
        }
        return compileComparison(object, at: path)
    }

    /// `{"consented": "<consent review step>"}`: the participant agreed on that step, i.e. its
    /// `consented` item is true (ResearchKit's `ORKConsentSignatureResult.consented`).
    private func compileConsented(_ operand: JSON, at path: JSONPath) -> Predicate? {
        guard let id = operand.stringValue else {
            diagnostics.error("wrongType", "\"consented\" names a consent review step.", at: path)
            return nil
        }
        guard let index = stepIndex[id], case .consentReview? = steps[ifPresent: index]?.hosted else {
            diagnostics.error("notConsentReview", "\"consented\" names a consent review step; \"\(id)\" is not one.", at: path)
            return nil
        }
        return .compare(Comparison(selector: .item(step: index, item: "consented"), tests: [.equals(.bool(true))], type: .boolean))
    }

    func compileComparison(_ object: JSONObject, at path: JSONPath) -> Predicate? {
        let before = diagnostics.problems.count
        guard let selectorValue = object["result"] else {
            diagnostics.error("missingKey", "A predicate is {\"all\"|\"any\": [...]}, {\"not\": ...}, {\"always\": true} or a comparison {\"result\": ..., operator: value}.", at: path)
            return nil
        }
        let resolved = selector(selectorValue, at: path.key("result"))
        var tests: [Comparison.Test] = []
        object.forEachEntry { key, operand in
            guard key != "result" else { return }
            guard PredicateCompiler.operators.contains(key) else {
                diagnostics.error("unknownOperator", "Unknown operator \"\(key)\"; expected one of: " + PredicateCompiler.operators.joined(separator: ", ") + ".", at: path.key(key))
                return
            }
            if let resolved, let test = test(key, operand, resolved.type, choices: resolved.choices, at: path.key(key)) {
                tests.append(test)
            }
        }
        if object.count == 1 {
            diagnostics.error("missingOperator", "A comparison needs at least one operator.", at: path)
        }
        guard let resolved, diagnostics.problems.count == before else { return nil }
        return .compare(Comparison(selector: resolved.selector, tests: tests, type: resolved.type))
    }

    /// The selector, and what is known of its answers (nil type and format for other tasks'
    /// results).
    func selector(_ value: JSON, at path: JSONPath) -> (selector: Selector, type: ResultType?, choices: [ChoiceOption]?, format: AnswerFormat?)? {
        var stepID: String?, itemID: String?, taskID: String?
        switch value {
        case .string(let s):
            stepID = s
        case .object(let o) where o["block"] != nil && o["task"] == nil:
            return instanceSelector(o, at: path)
        case .object(let o) where o["section"] != nil && o["task"] == nil:
            return sectionSelector(o, at: path)
        case .object(let o):
            for key in o.keys where !["step", "item", "task"].contains(key) {
                diagnostics.error("unknownKey", "A selector has \"step\", \"item\" and \"task\"; not \"\(key)\".", at: path.key(key))
            }
            for key in ["step", "item", "task"] {
                if let v = o[key], v.stringValue == nil {
                    diagnostics.error("wrongType", "\"\(key)\" must be a string.", at: path.key(key))
                }
            }
            stepID = o["step"]?.stringValue
            itemID = o["item"]?.stringValue
            taskID = o["task"]?.stringValue
            if stepID == nil {
                diagnostics.error("missingKey", "A selector needs \"step\".", at: path.key("step"))
                return nil
            }
        default:
            diagnostics.error("wrongType", "\"result\" is a step identifier or {\"step\", \"item\", \"task\"}.", at: path)
            return nil
        }
        guard let stepID else { return nil }
        if let taskID {
            return (.external(task: taskID, step: stepID, item: itemID), nil, nil, nil)
        }
        guard let index = stepIndex[stepID], let step = steps[ifPresent: index] else {
            let what: String
            if sectionIdentifiers.contains(stepID) {
                what = "\"\(stepID)\" is a section, which has no answer."
            } else if itemID == nil, let form = itemOwners.form(of: stepID, in: steps) {
                what = "No step is called \"\(stepID)\"; it is an item of the form \"\(form)\": write {\"step\": \"\(form)\", \"item\": \"\(stepID)\"}."
            } else {
                what = "No step is called \"\(stepID)\"."
            }
            diagnostics.error("unknownStep", what, at: path)
            return nil
        }
        switch step.content {
        case .question(let format):
            if itemID != nil {
                diagnostics.error("unknownItem", "\"\(stepID)\" is a question step, not a form; drop \"item\".", at: path.key("item"))
                return nil
            }
            return sectionScoped((.step(index), format.resultType, choiceOptions(format), format), step: index, item: nil, at: path)
        case .form(let form):
            guard let itemID else {
                diagnostics.error("missingKey", "\"\(stepID)\" is a form: name one of its items with {\"step\": \"\(stepID)\", \"item\": ...}.", at: path)
                return nil
            }
            guard let item = form.item(itemID) else {
                diagnostics.error("unknownItem", "The form \"\(stepID)\" has no item \"\(itemID)\".", at: path.key("item"))
                return nil
            }
            return sectionScoped((.item(step: index, item: itemID), item.format.resultType, choiceOptions(item.format), item.format), step: index, item: itemID, at: path)
        case .message:
            diagnostics.error("noAnswer", "The step \"\(stepID)\" takes no answer.", at: path)
            return nil
        }
    }

    private func choiceOptions(_ format: AnswerFormat) -> [ChoiceOption]? {
        format.rules.choiceOptions
    }

    /// Which result types each operator applies to.
    private static func applies(_ op: String, to type: ResultType) -> Bool {
        switch op {
        case "answered", "dontKnow": return true
        case "equals", "notEquals": return ![.location, .file, .report].contains(type)
        case "contains", "containsAny": return type == .choice
        case "matches": return type == .text || type == .choice
        default: return [.scale, .numeric, .timeInterval, .ses, .timeOfDay, .date].contains(type)
        }
    }

    private func test(_ op: String, _ operand: JSON, _ type: ResultType?, choices: [ChoiceOption]?, at path: JSONPath) -> Comparison.Test? {
        if let type, !PredicateCompiler.applies(op, to: type) {
            diagnostics.error("operatorNotApplicable", "\"\(op)\" does not apply to a \(type.rawValue) answer.", at: path)
            return nil
        }
        switch op {
        case "answered", "dontKnow":
            guard case .bool(let b) = operand else {
                diagnostics.error("wrongType", "\"\(op)\" takes true or false.", at: path)
                return nil
            }
            return op == "answered" ? .answered(b) : .dontKnow(b)
        case "matches":
            guard let source = operand.stringValue else {
                diagnostics.error("wrongType", "\"matches\" takes a regular expression as a string.", at: path)
                return nil
            }
            do throws(RegularExpression.CompileError) {
                return .matches(try Pattern(source))
            } catch {
                diagnostics.error("invalidRegularExpression", "\"matches\" is not a valid regular expression: it \(error.message).", at: path)
                return nil
            }
        case "contains", "containsAny":
            let values = operand.arrayValue ?? [operand]
            guard checkChoices(values, choices, at: path) else { return nil }
            return op == "contains" ? .contains(values) : .containsAny(values)
        case "equals", "notEquals":
            guard checkOperand(operand, type, choices: choices, at: path) else { return nil }
            return op == "equals" ? .equals(operand) : .notEquals(operand)
        default:
            guard checkOperand(operand, type, choices: nil, at: path) else { return nil }
            switch op {
            case "minimum": return .minimum(operand)
            case "maximum": return .maximum(operand)
            case "exclusiveMinimum": return .exclusiveMinimum(operand)
            default: return .exclusiveMaximum(operand)
            }
        }
    }

    /// The operand must be a value an answer of `type` can have.
    private func checkOperand(_ operand: JSON, _ type: ResultType?, choices: [ChoiceOption]?, at path: JSONPath) -> Bool {
        guard let type else { return true }
        let fits: Bool
        var expected = ""
        switch type {
        case .boolean:
            fits = operand.boolValue != nil; expected = "true or false"
        case .choice:
            return checkChoices(operand.arrayValue ?? [operand], choices, at: path)
        case .scale, .numeric, .timeInterval, .ses:
            fits = operand.numericValue != nil; expected = "a number"
        case .text:
            fits = operand.stringValue != nil; expected = "a string"
        case .timeOfDay:
            fits = operand.stringValue.flatMap(TimeOfDay.seconds) != nil; expected = "a time as \"HH:mm\" or \"HH:mm:ss\""
        case .date:
            fits = operand.stringValue.flatMap(CalendarValue.parse) != nil; expected = "a date (YYYY-MM-DD) or date-time"
        case .multipleComponent:
            fits = operand.arrayValue != nil; expected = "an array of values, one per picker"
        case .location, .file, .report:
            fits = false; expected = "nothing: a \(type.rawValue) answer can only be tested with \"answered\""
        }
        if !fits {
            diagnostics.error("wrongOperandType", "Compared with a \(type.rawValue) answer, the value must be \(expected); found \(JSONWriter.string(operand)).", at: path)
        }
        return fits
    }

    private func checkChoices(_ values: [JSON], _ choices: [ChoiceOption]?, at path: JSONPath) -> Bool {
        guard let choices else { return true }
        var ok = true
        for value in values where choices.index(of: value) == nil {
            diagnostics.error("notAChoice", choices.notAChoiceMessage(value).english, at: path)
            ok = false
        }
        return ok
    }
}

/// Form item identifier → the first form (in step order) that has such an item, worked out once
/// per compilation and only when a message needs it.
final class FormItemOwners {
    private var owners: [String: String]?

    func form(of item: String, in steps: [Step]) -> String? {
        if owners == nil {
            var map: [String: String] = [:]
            for step in steps {
                guard case .form(let form) = step.content else { continue }
                for entry in form.items where map[entry.identifier] == nil { map[entry.identifier] = step.identifier }
            }
            owners = map
        }
        return owners?[item]
    }
}
