import StepKitBase

// Compiling reads of repeating blocks: `{"step", "block", "item", "index"}` selectors, the
// aggregates, and the scope that decides which reads have an instance to read
// (docs/expressions.md, "Repeating blocks: scope").

/// The blocks whose instance is in scope while an expression compiles: a per-instance rule's
/// block, then each aggregate's, innermost last. A read of a block item with no `index` is
/// accepted only here.
final class CompileScope {
    private(set) var blocks: [BlockReference] = []

    func contains(_ block: BlockReference) -> Bool { blocks.contains(block) }

    /// Runs `body` with `block` entered.
    func within<T>(_ block: BlockReference, _ body: () -> T) -> T {
        blocks.append(block)
        defer { blocks.removeLast() }
        return body()
    }
}

/// A repeating block found by name: where it is, what it repeats and its name for messages.
struct ResolvedBlock {
    let reference: BlockReference
    let format: RepeatingFormat
    let name: String
}

extension PredicateCompiler {
    static let instanceSelectorKeys: Set<String> = ["step", "block", "item", "index"]

    /// `{"step": S, "block": B}`: the repeating block `B` of step `S` (a form's group or
    /// repeating item; for a repeating question step, its own identifier); nil, reported, when
    /// it names none.
    func block(_ value: JSON, at path: JSONPath) -> ResolvedBlock? {
        guard let o = value.objectValue, let stepID = o["step"]?.stringValue, let blockID = o["block"]?.stringValue else {
            diagnostics.error("wrongType", "A repeating block is named {\"step\": STEP, \"block\": BLOCK}.", at: path)
            return nil
        }
        guard let index = stepIndex[stepID], let step = steps[ifPresent: index] else {
            diagnostics.error("unknownStep", "No step is called \"\(stepID)\".", at: path.key("step"))
            return nil
        }
        let format: AnswerFormat?
        let reference: BlockReference
        switch step.content {
        case .question(let f) where blockID == stepID:
            format = f
            reference = .answer(step: index, item: nil)
        case .form(let form):
            format = form.item(blockID)?.format
            reference = .answer(step: index, item: blockID)
        default:
            format = nil
            reference = .answer(step: index, item: blockID)
        }
        guard let format else {
            diagnostics.error("unknownBlock", "The step \"\(stepID)\" has no item \"\(blockID)\".", at: path.key("block"))
            return nil
        }
        guard let repeating = format.rules as? RepeatingFormat else {
            diagnostics.error("notABlock", "\"\(blockID)\" of \"\(stepID)\" does not repeat: it has one answer, read it with {\"answer\": ...}; aggregates read a block with \"repeat\".", at: path.key("block"))
            return nil
        }
        return ResolvedBlock(reference: reference, format: repeating, name: blockID)
    }

    /// `{"step", "block", "item", "index"}`: an item of a repeating group's instance (a repeating
    /// question's answer, without `item`), in the instance in scope or at `index`.
    func instanceSelector(_ o: JSONObject, at path: JSONPath) -> (selector: Selector, type: ResultType?, choices: [ChoiceOption]?, format: AnswerFormat?)? {
        for key in o.keys where !PredicateCompiler.instanceSelectorKeys.contains(key) {
            diagnostics.error("unknownKey", "A read of a repeating block has \"step\", \"block\", \"item\" and \"index\"; not \"\(key)\".", at: path.key(key))
        }
        guard let resolved = block(.object(o), at: path) else { return nil }
        var index: Int?
        if let value = o["index"] {
            guard let d = value.numericValue, d == d.rounded(), d >= -Double(RepeatBounds.limit), d < Double(RepeatBounds.limit) else {
                diagnostics.error("outOfRange", "\"index\" is an instance's position: from 0 for the first, or from -1 for the last; a whole number from -\(RepeatBounds.limit) to \(RepeatBounds.limit - 1).", at: path.key("index"))
                return nil
            }
            index = Int(d)
        }
        let format: AnswerFormat
        var itemID: String?
        switch resolved.format.content {
        case .group(let form):
            guard let id = o["item"]?.stringValue else {
                diagnostics.error("missingKey", "\"\(resolved.name)\" is a repeating group: name one of its items with \"item\".", at: path)
                return nil
            }
            guard let inner = form.item(id) else {
                diagnostics.error("unknownItem", "The repeating group \"\(resolved.name)\" has no item \"\(id)\".", at: path.key("item"))
                return nil
            }
            format = inner.format
            itemID = id
        case .question(let f):
            if o["item"] != nil {
                diagnostics.error("unknownItem", "\"\(resolved.name)\" is a repeating question: each instance is one answer; drop \"item\".", at: path.key("item"))
                return nil
            }
            format = f
        }
        if index == nil, !scope.contains(resolved.reference) {
            let what = itemID.map { "\"\($0)\" of the repeating block \"\(resolved.name)\"" } ?? "the repeating question \"\(resolved.name)\""
            let code = scope.blocks.isEmpty ? "outsideInstance" : "otherInstance"
            let whereRead = scope.blocks.isEmpty ? "outside its instances" : "inside an instance of another block"
            diagnostics.error(code, "This reads \(what) \(whereRead), where no instance of it is meant: read it in an aggregate ({\"sum\": {\"over\": {\"step\": ..., \"block\": \"\(resolved.name)\"}, \"of\": ...}}) or at an index (\"index\": 0).", at: path)
            return nil
        }
        let read = InstanceRead(block: resolved.reference, item: itemID, index: index, type: format.resultType)
        return (.instance(read), format.resultType, format.rules.choiceOptions, format)
    }
}

extension ExpressionCompiler {
    /// Whether an object is an aggregate: `{KIND: {"over": ...}}`.
    static func isAggregate(_ object: JSONObject) -> Bool {
        guard object.count == 1, let key = object.keys.first, Aggregate.Kind(rawValue: key) != nil else { return false }
        return object[key]?.objectValue?["over"] != nil
    }

    static let aggregateKeys: Set<String> = ["over", "where", "of"]

    /// `{KIND: {"over": BLOCK, "where": COND, "of": EXPR}}`, `where` and `of` compiled with the
    /// block's instance in scope.
    func aggregate(_ kind: Aggregate.Kind, _ operand: JSONObject, at path: JSONPath, depth: Int,
                   compile: (JSON, JSONPath, Int) -> (Expression, ExpressionType)?) -> (Expression, ExpressionType)? {
        let d = diagnostics
        let before = d.problems.count
        for key in operand.keys where !ExpressionCompiler.aggregateKeys.contains(key) {
            d.error("unknownKey", "An aggregate has \"over\" (the block), \"where\" (which instances) and \"of\" (the value of each); not \"\(key)\".", at: path.key(key))
        }
        guard let over = operand["over"], let block = predicates.block(over, at: path.key("over")) else { return nil }
        let needsOf = kind != .count
        if needsOf, operand["of"] == nil {
            d.error("missingKey", "\"\(kind.rawValue)\" needs \"of\": the value of each instance (" + (kind == .any || kind == .all ? "a condition" : "a number") + ").", at: path)
        }
        if !needsOf, operand["of"] != nil {
            d.error("unknownKey", "\"count\" counts instances (those \"where\" holds in); it takes no \"of\".", at: path.key("of"))
        }
        var filter: Expression?
        var of: Expression?
        predicates.scope.within(block.reference) {
            if let value = operand["where"], let (e, type) = compile(value, path.key("where"), depth + 1) {
                if type.fits(.boolean) { filter = e } else {
                    d.error("wrongType", "\"where\" is a condition, found \(type.described).", at: path.key("where"))
                }
            }
            if needsOf, let value = operand["of"], let (e, type) = compile(value, path.key("of"), depth + 1) {
                let wanted: ExpressionType = kind == .any || kind == .all ? .boolean : .number
                if type.fits(wanted) { of = e } else {
                    d.error("wrongType", "\"\(kind.rawValue)\" takes \(wanted.described) as \"of\", found \(type.described).", at: path.key("of"))
                }
            }
        }
        guard d.problems.count == before else { return nil }
        let a = Aggregate(kind: kind, block: block.reference, maxCount: block.format.bounds.maxCount, filter: filter, of: of)
        let type: ExpressionType = kind == .any || kind == .all ? .boolean : .number
        return (.aggregate(a), type)
    }
}

extension Expression {
    /// The most nodes one evaluation may visit: each node once, an aggregate's `where` and `of`
    /// once per instance its block may have (`maxCount`), a per-instance calculation what its
    /// own expression may. Walked as deep as the tree (per-instance calculations carry theirs).
    var cost: Double {
        switch self {
        case .literal, .answer, .score, .answered, .calculation, .now, .today, .comparison:
            return 1
        case .round(let x, _):
            return 1 + x.cost
        case .apply(_, let args):
            return args.reduce(1) { $0 + $1.cost }
        case .aggregate(let a):
            return 1 + Double(a.maxCount) * ((a.filter?.cost ?? 0) + (a.of?.cost ?? 0))
        case .instanceCalculation(let c):
            return c.cost
        }
    }

    /// How deep the evaluation of the expression nests: its own depth, a per-instance
    /// calculation's counted where it is read.
    var depth: Int {
        switch self {
        case .round(let x, _): return 1 + x.depth
        case .apply(_, let args): return 1 + (args.map(\.depth).max() ?? 0)
        case .aggregate(let a): return 1 + max(a.filter?.depth ?? 0, a.of?.depth ?? 0)
        case .instanceCalculation(let c): return c.depth
        default: return 1
        }
    }

    /// Whether the expression reads any block's instances (an aggregate, an instance read or a
    /// per-instance calculation): a `count` may not, so that the instances never depend on
    /// themselves.
    var readsInstances: Bool {
        switch self {
        case .aggregate, .instanceCalculation: return true
        case .answer(let s, _, _), .score(let s, _), .answered(let s):
            if case .instance = s { return true }
            return false
        case .comparison(let c):
            if case .instance = c.selector { return true }
            return false
        case .round(let x, _): return x.readsInstances
        case .apply(_, let args): return args.contains { $0.readsInstances }
        default: return false
        }
    }
}
