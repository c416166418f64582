import StepKitBase

/// Reads an expression from a definition, typing every node against the answer formats it reads
/// and reporting every problem at once with its JSON path: wrong types, unknown steps, items and
/// calculations, wrong arity, a literal that is not one of the choices, and the limits (at most
/// `ExpressionLimits.maxNodes` nodes, `ExpressionLimits.maxDepth` deep; the walk never goes
/// deeper than that, so a small thread stack is enough).
struct ExpressionCompiler {
    let predicates: PredicateCompiler
    var diagnostics: Diagnostics { predicates.diagnostics }

    /// The nodes compiled so far in this expression, for the node budget.
    private final class Budget {
        var nodes = 0
        var reported = false
    }

    private let budget = Budget()

    init(predicates: PredicateCompiler) { self.predicates = predicates }

    /// Compiles the expression at `path`; when `expecting` is given its type must fit.
    func compile(_ value: JSON, at path: JSONPath, expecting: ExpressionType? = nil) -> (Expression, ExpressionType)? {
        guard let (expression, type) = node(value, at: path, depth: 1) else { return nil }
        let cost = expression.cost
        guard cost <= ExpressionLimits.maxCost else {
            diagnostics.error("expressionTooCostly", "Evaluating this expression may visit \(NumberText.format(cost)) nodes (an aggregate visits its \"where\" and \"of\" once per instance its block may have, up to its maxCount); at most \(NumberText.format(ExpressionLimits.maxCost)): give the blocks a smaller maxCount, or do not nest aggregates.", at: path)
            return nil
        }
        if let expecting, !type.fits(expecting) {
            diagnostics.error("wrongType", "Expected \(expecting.described) here, found \(type.described).", at: path)
            return nil
        }
        return (expression, type)
    }

    static let valueForms = ["answer", "score", "answered", "calc", "today", "now", "date", "round"]
    static let predicateForms = ["all", "any", "not", "always"]

    /// Whether an object in predicate position is written in the expression language (rather
    /// than as one of the predicate forms of before).
    static func isExpression(_ object: JSONObject) -> Bool {
        guard object.count == 1, let key = object.keys.first else { return false }
        if key == "not" { return object["not"]?.arrayValue != nil }
        if isAggregate(object) { return true }
        return valueForms.contains(key) || ExpressionOperator(rawValue: key) != nil
    }

    // MARK: Nodes
    //
    // The recursion runs node → keyed → apply (or round) → node. Those four keep few locals and
    // leave every message and every non-recursive case to functions that return before the walk
    // goes deeper, so that even an unoptimised (debug) build compiles the deepest expression on a
    // 256 KiB thread stack.

    private func node(_ value: JSON, at path: JSONPath, depth: Int) -> (Expression, ExpressionType)? {
        guard admit(at: path, depth: depth) else { return nil }
        if case .object(let object) = value, object.count == 1, let key = object.keys.first, key != "result",
           let operand = object[key] {
            return keyed(key, operand, at: path, depth: depth)
        }
        return unkeyed(value, at: path)
    }

    /// Counts a node against the budget; false (reported) past the depth or the node budget.
    private func admit(at path: JSONPath, depth: Int) -> Bool {
        guard depth <= ExpressionLimits.maxDepth else {
            diagnostics.error("expressionTooDeep", "An expression nests at most \(ExpressionLimits.maxDepth) levels deep.", at: path)
            return false
        }
        budget.nodes += 1
        guard budget.nodes <= ExpressionLimits.maxNodes else {
            if !budget.reported {
                budget.reported = true
                diagnostics.error("expressionTooLarge", "An expression has at most \(ExpressionLimits.maxNodes) nodes.", at: path)
            }
            return false
        }
        return true
    }

    /// A literal, a comparison with "result", or an object that is not an expression.
    private func unkeyed(_ value: JSON, at path: JSONPath) -> (Expression, ExpressionType)? {
        switch value {
        case .null: return (.literal(.null), .any)
        case .bool(let b): return (.literal(.bool(b)), .boolean)
        case .int, .double: return (.literal(ExpressionValue.dynamic(value)), .number)
        case .string(let s): return (.literal(.string(s)), .string)
        case .array:
            diagnostics.error("wrongType", "An array is not an expression; an operator is written {\"OP\": [arguments]}.", at: path)
            return nil
        case .object(let object):
            if object["result"] != nil {
                return predicates.compileComparison(object, at: path).flatMap { predicate in
                    guard case .compare(let c) = predicate else { return nil }
                    return (.comparison(c), .boolean)
                }
            }
            diagnostics.error("invalidExpression", "An expression object has one key: an operator or one of " + ExpressionCompiler.valueForms.joined(separator: ", ") + " (or is a comparison with \"result\").", at: path)
            return nil
        }
    }

    /// `{KEY: operand}`: the forms with sub-expressions go on down the walk, the rest to `leaf`.
    private func keyed(_ key: String, _ operand: JSON, at path: JSONPath, depth: Int) -> (Expression, ExpressionType)? {
        let here = path.key(key)
        if let items = operand.arrayValue {
            if key == "all" || key == "any" { return apply(key == "all" ? .and : .or, items, at: here, depth: depth) }
            if key == "round" { return round(items, at: here, depth: depth) }
            if let op = ExpressionOperator(rawValue: key) { return apply(op, items, at: here, depth: depth) }
        } else if key == "not", operand.objectValue != nil {
            return apply(.not, [operand], at: here, depth: depth, argumentPath: { _ in here })
        } else if let kind = Aggregate.Kind(rawValue: key), let object = operand.objectValue, object["over"] != nil {
            return aggregate(kind, object, at: here, depth: depth) { node($0, at: $1, depth: $2) }
        }
        return leaf(key, operand, at: here, depth: depth)
    }

    /// The keyed forms without sub-expressions, and the messages for a keyed form written wrong.
    private func leaf(_ key: String, _ operand: JSON, at here: JSONPath, depth: Int) -> (Expression, ExpressionType)? {
        switch key {
        case "answer", "score", "answered":
            return read(key, operand, at: here)
        case "calc":
            guard let name = operand.stringValue else {
                diagnostics.error("wrongType", "\"calc\" takes a calculation's name.", at: here)
                return nil
            }
            guard let index = predicates.calculations.index[name] else {
                diagnostics.error("unknownCalculation", "No calculation is called \"\(name)\".", at: here)
                return nil
            }
            let type = predicates.calculations.types[ifPresent: index] ?? nil
            if let perInstance = predicates.calculations.perInstance[index] {
                return instanceCalculation(perInstance, name: name, type: type ?? .any, at: here, depth: depth)
            }
            return (.calculation(index), type ?? .any)
        case "today", "now":
            guard operand.arrayValue?.isEmpty == true else {
                diagnostics.error("wrongArity", "\"\(key)\" takes no arguments: {\"\(key)\": []}.", at: here)
                return nil
            }
            return key == "today" ? (.today, .date) : (.now, .dateTime)
        case "date":
            guard let text = operand.stringValue, let parsed = CalendarValue.parse(text) else {
                diagnostics.error("invalidDate", "\"date\" takes a date as YYYY-MM-DD or a date-time with its UTC offset.", at: here)
                return nil
            }
            let value = ExpressionValue(parsed)
            return (.literal(value), parsed.isDateTime ? .dateTime : .date)
        case "all", "any":
            diagnostics.error("wrongType", "\"\(key)\" takes an array of conditions.", at: here)
            return nil
        case "round":
            diagnostics.error("wrongType", "\"round\" takes an array of arguments.", at: here)
            return nil
        case "always":
            guard case .bool(let b) = operand else {
                diagnostics.error("wrongType", "\"always\" takes true or false.", at: here)
                return nil
            }
            return (.literal(.bool(b)), .boolean)
        default:
            guard ExpressionOperator(rawValue: key) != nil else {
                diagnostics.error("unknownOperator", "Unknown operator \"\(key)\"; expected one of: " + ExpressionOperator.allCases.map(\.rawValue).joined(separator: ", ") + ".", at: here)
                return nil
            }
            diagnostics.error("wrongType", "\"\(key)\" takes an array of arguments.", at: here)
            return nil
        }
    }

    /// `{"round": [x]}` or `{"round": [x, digits]}`, digits a literal 0…6.
    private func round(_ items: [JSON], at path: JSONPath, depth: Int) -> (Expression, ExpressionType)? {
        guard let digits = roundDigits(items, at: path),
              let (x, type) = node(items[0], at: path.index(0), depth: depth + 1) else { return nil }
        return roundTyped(x, type, digits: digits, at: path)
    }

    /// The digits of a `round` with one or two arguments (0 with one); nil, reported, otherwise.
    private func roundDigits(_ items: [JSON], at path: JSONPath) -> Int? {
        guard items.count == 1 || items.count == 2 else {
            diagnostics.error("wrongArity", "\"round\" takes 1 or 2 arguments, found \(items.count).", at: path)
            return nil
        }
        guard items.count == 2 else { return 0 }
        guard let d = items[1].numericValue, d == d.rounded(), d >= 0, d <= 6 else {
            diagnostics.error("outOfRange", "\"round\" takes its digits as a whole number from 0 to 6, written as it is.", at: path.index(1))
            return nil
        }
        return Int(d)
    }

    private func roundTyped(_ x: Expression, _ type: ExpressionType, digits: Int, at path: JSONPath) -> (Expression, ExpressionType)? {
        guard type.fits(.number) else {
            diagnostics.error("wrongType", "\"round\" takes a number here, found \(type.described).", at: path.index(0))
            return nil
        }
        return (.round(x, digits: digits), .number)
    }

    /// `answer`, `score` and `answered`: what the selector names, typed.
    private func read(_ key: String, _ operand: JSON, at path: JSONPath) -> (Expression, ExpressionType)? {
        guard let resolved = predicates.selector(operand, at: path) else { return nil }
        let format = resolved.format
        switch key {
        case "answered":
            return (.answered(resolved.selector), .boolean)
        case "score":
            guard let format else {
                diagnostics.error("wrongType", "\"score\" reads a choice or yes/no question of this task, not another task's result.", at: path)
                return nil
            }
            let table = format.rules.scores
            guard !table.isEmpty else {
                diagnostics.error("noScores", "The answer read has no scores: give its choices a \"score\" (\"yesScore\"/\"noScore\" on a yes/no question).", at: path)
                return nil
            }
            return (.score(resolved.selector, table), .number)
        default:
            guard let format else { return (.answer(resolved.selector, nil, order: nil), .any) }
            guard let type = format.rules.expressionType else {
                diagnostics.error("wrongType", "A \(format.resultType.rawValue) answer can only be read with \"answered\".", at: path)
                return nil
            }
            let order = format.rules.choiceOptions
            return (.answer(resolved.selector, format.resultType, order: order), type)
        }
    }

    // MARK: Operators

    /// Compiles an operator's arguments (one level down the walk), then types the whole.
    private func apply(_ op: ExpressionOperator, _ items: [JSON], at path: JSONPath, depth: Int,
                       argumentPath: ((Int) -> JSONPath)? = nil) -> (Expression, ExpressionType)? {
        let before = diagnostics.problems.count
        var args: [(Expression, ExpressionType)] = []
        var complete = true
        for (i, item) in items.enumerated() {
            // Past the node budget, stop walking: the expression is refused anyway.
            if budget.reported { complete = false; break }
            if let arg = node(item, at: argumentPath?(i) ?? path.index(i), depth: depth + 1) { args.append(arg) } else { complete = false }
        }
        guard complete, diagnostics.problems.count == before else {
            _ = checkArity(op, items.count, at: path)
            return nil
        }
        return typed(op, args, count: items.count, at: path, argumentPath: argumentPath)
    }

    /// The type of `op` applied to compiled arguments; nil, reported, when they do not fit.
    private func typed(_ op: ExpressionOperator, _ args: [(Expression, ExpressionType)], count: Int, at path: JSONPath,
                       argumentPath: ((Int) -> JSONPath)?) -> (Expression, ExpressionType)? {
        guard checkArity(op, count, at: path) else { return nil }
        let argPath = { (i: Int) in argumentPath?(i) ?? path.index(i) }
        func need(_ i: Int, _ types: [ExpressionType]) -> Bool {
            let t = args[i].1
            if t == .any || types.contains(t) { return true }
            let expected = types.map(\.described).joined(separator: " or ")
            diagnostics.error("wrongType", "\"\(op.rawValue)\" takes \(expected) here, found \(t.described).", at: argPath(i))
            return false
        }
        func needAll(_ types: [ExpressionType]) -> Bool {
            args.indices.map { need($0, types) }.allSatisfy { $0 }
        }
        let exprs = args.map(\.0)
        switch op {
        case .add, .subtract, .multiply, .divide, .min, .max, .sum, .avg:
            return needAll([.number]) ? (.apply(op, exprs), .number) : nil
        case .count:
            return (.apply(op, exprs), .number)
        case .if:
            guard need(0, [.boolean]) else { return nil }
            guard let type = ExpressionType.common(args[1].1, args[2].1) else {
                diagnostics.error("wrongType", "\"if\" gives one type: its \"then\" is \(args[1].1.described), its \"else\" \(args[2].1.described).", at: argPath(2))
                return nil
            }
            return (.apply(op, exprs), type)
        case .coalesce:
            var type = ExpressionType.any
            for (i, arg) in args.enumerated() {
                guard let common = ExpressionType.common(type, arg.1) else {
                    diagnostics.error("wrongType", "\"coalesce\" takes values of one type: \(type.described), then \(arg.1.described).", at: argPath(i))
                    return nil
                }
                type = common
            }
            return (.apply(op, exprs), type)
        case .concat:
            return needAll([.string, .number]) ? (.apply(op, exprs), .string) : nil
        case .length:
            return need(0, [.string, .choice]) ? (.apply(op, exprs), .number) : nil
        case .upper, .lower:
            return need(0, [.string]) ? (.apply(op, exprs), .string) : nil
        case .substring:
            guard need(0, [.string]), args.indices.dropFirst().map({ need($0, [.number]) }).allSatisfy({ $0 }) else { return nil }
            return (.apply(op, exprs), .string)
        case .startsWith, .contains:
            return needAll([.string]) ? (.apply(op, exprs), .boolean) : nil
        case .replace:
            return needAll([.string]) ? (.apply(op, exprs), .string) : nil
        case .ln, .exp, .power, .sqrt, .abs, .truncate:
            return needAll([.number]) ? (.apply(op, exprs), .number) : nil
        case .and, .or, .not:
            return needAll([.boolean]) ? (.apply(op, exprs), .boolean) : nil
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            return comparison(op, args, at: argPath)
        case .in:
            guard need(0, [.string, .number, .choice]), need(1, [.choice]) else { return nil }
            if case .literal(let v) = exprs[0], case .answer(_, _, let order?) = exprs[1] {
                guard checkChoice(v, order, at: argPath(0)) else { return nil }
            }
            return (.apply(op, exprs), .boolean)
        case .daysBetween, .monthsBetween, .yearsBetween:
            guard needAll([.date, .dateTime]) else { return nil }
            return (.apply(op, exprs), .number)
        case .addDays, .addMonths, .addYears:
            guard need(0, [.date, .dateTime]), need(1, [.number]) else { return nil }
            return (.apply(op, exprs), args[0].1)
        }
    }

    private func checkArity(_ op: ExpressionOperator, _ count: Int, at path: JSONPath) -> Bool {
        let range: ClosedRange<Int>
        switch op {
        case .add, .multiply, .divide: range = 2...Int.max
        case .subtract, .min, .max, .sum, .avg, .count, .coalesce, .concat, .and, .or: range = 1...Int.max
        case .if: range = 3...3
        case .length, .not, .upper, .lower, .ln, .exp, .sqrt, .abs, .truncate: range = 1...1
        case .substring: range = 2...3
        case .startsWith, .contains, .power: range = 2...2
        case .replace: range = 3...3
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .in, .daysBetween, .monthsBetween,
             .yearsBetween, .addDays, .addMonths, .addYears: range = 2...2
        }
        guard range.contains(count) else {
            // The noun agrees with the number it follows: "at least 1 argument", "1 to 3 arguments".
            let last = range.upperBound == Int.max || range.lowerBound == range.upperBound ? range.lowerBound : range.upperBound
            let noun = last == 1 ? "argument" : "arguments"
            let wanted = range.upperBound == Int.max ? "at least \(range.lowerBound)" : (range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)")
            diagnostics.error("wrongArity", "\"\(op.rawValue)\" takes \(wanted) \(noun), found \(count).", at: path)
            return false
        }
        return true
    }

    /// `== != < <= > >=`: two values of one comparable type. A string literal compared with a
    /// date, date-time or time is read as one; a literal compared with a choice answer must be
    /// one of its choices.
    private func comparison(_ op: ExpressionOperator, _ args: [(Expression, ExpressionType)], at argPath: (Int) -> JSONPath) -> (Expression, ExpressionType)? {
        var exprs = args.map(\.0)
        var types = args.map(\.1)
        for (i, j) in [(0, 1), (1, 0)] where [.date, .dateTime, .time].contains(types[j]) {
            guard case .literal(.string(let text)) = exprs[i] else { continue }
            let parsed: ExpressionValue?
            if types[j] == .time {
                parsed = TimeOfDay.seconds(text).map { .time(seconds: $0.seconds, withSeconds: $0.withSeconds) }
            } else {
                parsed = CalendarValue.parse(text).map(ExpressionValue.init) ?? PartialDate.parse(text).map { .partialDate($0) }
            }
            guard let parsed else {
                diagnostics.error("wrongOperandType", "Compared with \(types[j].described), the string must be " + (types[j] == .time ? "a time as \"HH:mm\" or \"HH:mm:ss\"" : "a date (YYYY-MM-DD) or date-time") + "; found \"\(text)\".", at: argPath(i))
                return nil
            }
            exprs[i] = .literal(parsed)
            types[i] = types[j]
        }
        let (a, b) = (types[0], types[1])
        let ordering = op != .equal && op != .notEqual
        let compatible: Bool
        if a == .any || b == .any {
            compatible = true
        } else if a == .choice || b == .choice {
            let other = a == .choice ? b : a
            compatible = other == .choice || other == .number || other == .string
            for (i, j) in [(0, 1), (1, 0)] {
                if case .literal(let v) = exprs[i], case .answer(_, _, let order?) = exprs[j], v.json.arrayValue == nil {
                    guard checkChoice(v, order, at: argPath(i)) else { return nil }
                }
            }
        } else if a.isDate && b.isDate {
            compatible = true
        } else {
            compatible = a == b && !(ordering && a == .boolean)
        }
        guard compatible else {
            let what = ordering ? "ordered" : "compared"
            diagnostics.error("wrongType", "\(a.described.capitalizedFirst) and \(b.described) cannot be \(what) with \"\(op.rawValue)\".", at: argPath(1))
            return nil
        }
        return (.apply(op, exprs), .boolean)
    }

    private func checkChoice(_ value: ExpressionValue, _ order: [ChoiceOption], at path: JSONPath) -> Bool {
        let json = value.json
        guard order.index(of: json) != nil else {
            let list = order.map { JSONWriter.string($0.value) }.joined(separator: ", ")
            diagnostics.error("notAChoice", "\(JSONWriter.string(json)) is not one of the choices' values (\(list)).", at: path)
            return false
        }
        return true
    }
}

extension String {
    /// "A number" from "a number".
    var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}

extension ExpressionCompiler {
    /// `{"calc": NAME}` of a per-instance calculation: read in its block's instance (inside a
    /// per-instance rule of the block or an aggregate over it), evaluated there.
    fileprivate func instanceCalculation(_ c: InstanceCalculation, name: String, type: ExpressionType, at path: JSONPath, depth: Int) -> (Expression, ExpressionType)? {
        guard predicates.scope.contains(c.block) else {
            diagnostics.error(predicates.scope.blocks.isEmpty ? "outsideInstance" : "otherInstance",
                              "\"\(name)\" is computed for each instance of its block: read it in an aggregate over that block ({\"sum\": {\"over\": ..., \"of\": {\"calc\": \"\(name)\"}}}) or in a rule of the block's items.", at: path)
            return nil
        }
        guard depth + c.depth <= ExpressionLimits.maxDepth else {
            diagnostics.error("expressionTooDeep", "An expression nests at most \(ExpressionLimits.maxDepth) levels deep, counting the per-instance calculations it reads (\"\(name)\" nests \(c.depth)).", at: path)
            return nil
        }
        return (.instanceCalculation(c), type)
    }
}
