import StepKitBase

// Compiling reads of repeating blocks: `{"step", "block", "item", "index"}` selectors, the
// aggregates, and the scope that decides which reads have an instance to read
// (docs/expressions.md, "Repeating blocks: scope").

/// The blocks whose instance is in scope while an expression compiles: a per-instance rule's
/// block, then each aggregate's, innermost last. A read of a block item with no `index` is
/// accepted only here.
final class CompileScope {
    private(set) var blocks: [BlockReference] = []
    /// The step whose rule is compiling (its skip rule, navigation rule, modifier, bounds,
    /// `visibleWhen`, validations...): inside a repeating section, that rule runs in the
    /// instance the participant is in, so it reads the section's steps there. Nil for what
    /// belongs to no step (calculations, the task's validations, a section's rule or count).
    private(set) var owner: Int?

    func contains(_ block: BlockReference) -> Bool { blocks.contains(block) }

    /// Runs `body` with `block` entered.
    func within<T>(_ block: BlockReference, _ body: () -> T) -> T {
        blocks.append(block)
        defer { blocks.removeLast() }
        return body()
    }

    /// Runs `body` compiling a rule of step `step`.
    func owned<T>(by step: Int?, _ body: () -> T) -> T {
        let outer = owner
        owner = step
        defer { owner = outer }
        return body()
    }
}

/// The task's repeating sections as expressions name them (`{"section": S}`), known before any
/// rule compiles: numbered as `TaskRules.stepBlocks` numbers them (`TaskCompiler+StepBlocks`).
struct RepeatingSections {
    struct Entry {
        let identifier: String
        let first: Int
        let last: Int
        let bounds: RepeatBounds

        func contains(_ step: Int) -> Bool { step >= first && step <= last }
    }

    private(set) var entries: [Entry] = []

    mutating func append(_ entry: Entry) { entries.append(entry) }

    /// The section holding step `step` (sections of steps do not nest: at most one).
    func block(of step: Int) -> Int? { entries.firstIndex { $0.contains(step) } }

    func block(named name: String) -> Int? { entries.firstIndex { $0.identifier == name } }

    func reference(_ n: Int) -> BlockReference { .section(block: n, first: entries[n].first) }
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
        if blockID.contains(".") { return innerBlock(blockID, step: step, index: index, at: path) }
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

    /// `{"step": S, "block": "outer.inner"}`: a repeating group inside a repeating group of a
    /// form step, read only with an outer instance in scope (a per-instance rule or calculation
    /// of the outer block, or an aggregate over it): its instances are that outer instance's.
    private func innerBlock(_ blockID: String, step: Step, index: Int, at path: JSONPath) -> ResolvedBlock? {
        let parts = blockID.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, case .form(let form) = step.content, let outer = form.item(parts[0])?.format.repeating,
              case .group(let outerForm) = outer.content, let inner = outerForm.item(parts[1])?.format.repeating,
              case .group = inner.content else {
            diagnostics.error("unknownBlock", "The step \"\(step.identifier)\" has no repeating group \"\(blockID)\" (a group inside a group is named \"outer.inner\").", at: path.key("block"))
            return nil
        }
        let outerReference = BlockReference.answer(step: index, item: parts[0])
        guard scope.contains(outerReference) else {
            let code = scope.blocks.isEmpty ? "outsideInstance" : "otherInstance"
            diagnostics.error(code, "\"\(blockID)\" has instances in each instance of \"\(parts[0])\": read it where one is in scope (an aggregate over \"\(parts[0])\", or one of its per-instance rules or calculations).", at: path.key("block"))
            return nil
        }
        return ResolvedBlock(reference: .inner(step: index, outer: parts[0], item: parts[1], minCount: inner.bounds.minCount), format: inner, name: blockID)
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

extension PredicateCompiler {
    static let sectionSelectorKeys: Set<String> = ["section", "step", "item", "index"]

    /// `{"section": S}`: the repeating section `S`; nil, reported, when it names none.
    func section(_ value: JSON?, at path: JSONPath) -> Int? {
        guard let name = value?.stringValue else {
            diagnostics.error("wrongType", "\"section\" names a repeating section.", at: path)
            return nil
        }
        guard let n = repeatingSections.block(named: name) else {
            let what = sectionIdentifiers.contains(name) ? "\"\(name)\" is a section without \"repeat\": it has one instance, read its steps with {\"answer\": STEP}." : "No repeating section is called \"\(name)\"."
            diagnostics.error(sectionIdentifiers.contains(name) ? "notABlock" : "unknownBlock", what, at: path)
            return nil
        }
        return n
    }

    /// A block as `over` and `forEach` name it: a form's (`{"step", "block"}`) or a repeating
    /// section (`{"section"}`), with its `maxCount`.
    func anyBlock(_ value: JSON, at path: JSONPath) -> (reference: BlockReference, maxCount: Int)? {
        if let o = value.objectValue, o["section"] != nil, o["block"] == nil {
            for key in o.keys where key != "section" {
                diagnostics.error("unknownKey", "A repeating section is named {\"section\": SECTION}; not \"\(key)\".", at: path.key(key))
            }
            guard let n = section(o["section"], at: path.key("section")) else { return nil }
            return (repeatingSections.reference(n), repeatingSections.entries[n].bounds.maxCount)
        }
        return block(value, at: path).map { ($0.reference, $0.format.bounds.maxCount) }
    }

    /// `{"section", "step", "item", "index"}`: a step (a form step's item) of a repeating
    /// section, in instance `index`, or without it as a plain read of the step is scoped
    /// (`sectionScoped`).
    func sectionSelector(_ o: JSONObject, at path: JSONPath) -> (selector: Selector, type: ResultType?, choices: [ChoiceOption]?, format: AnswerFormat?)? {
        for key in o.keys where !PredicateCompiler.sectionSelectorKeys.contains(key) {
            diagnostics.error("unknownKey", "A read of a repeating section has \"section\", \"step\", \"item\" and \"index\"; not \"\(key)\".", at: path.key(key))
        }
        guard let n = section(o["section"], at: path.key("section")) else { return nil }
        let entry = repeatingSections.entries[n]
        guard let stepID = o["step"]?.stringValue else {
            diagnostics.error("missingKey", "Name one of the steps of \"\(entry.identifier)\" with \"step\".", at: path)
            return nil
        }
        guard let index = stepIndex[stepID], entry.contains(index), let step = steps[ifPresent: index] else {
            diagnostics.error("unknownStep", "The repeating section \"\(entry.identifier)\" has no step \"\(stepID)\".", at: path.key("step"))
            return nil
        }
        var k: Int?
        if let value = o["index"] {
            guard let d = value.numericValue, d == d.rounded(), d >= -Double(RepeatBounds.limit), d < Double(RepeatBounds.limit) else {
                diagnostics.error("outOfRange", "\"index\" is an instance's position: from 0 for the first, or from -1 for the last; a whole number from -\(RepeatBounds.limit) to \(RepeatBounds.limit - 1).", at: path.key("index"))
                return nil
            }
            k = Int(d)
        }
        let itemID = o["item"]?.stringValue
        let format: AnswerFormat
        switch step.content {
        case .question(let f):
            if o["item"] != nil {
                diagnostics.error("unknownItem", "\"\(stepID)\" is a question step, not a form; drop \"item\".", at: path.key("item"))
                return nil
            }
            format = f
        case .form(let form):
            guard let itemID, let item = form.item(itemID) else {
                diagnostics.error(o["item"] == nil ? "missingKey" : "unknownItem", "\"\(stepID)\" is a form: name one of its items with \"item\".", at: path)
                return nil
            }
            format = item.format
        case .message:
            diagnostics.error("noAnswer", "The step \"\(stepID)\" takes no answer.", at: path)
            return nil
        }
        guard let k else {
            let plain: Selector = itemID.map { .item(step: index, item: $0) } ?? .step(index)
            return sectionScoped((plain, format.resultType, format.rules.choiceOptions, format), step: index, item: itemID, at: path)
        }
        let read = InstanceRead(block: repeatingSections.reference(n), item: itemID, index: k, type: format.resultType, step: index)
        return (.instance(read), format.resultType, format.rules.choiceOptions, format)
    }

    /// A read of step `index` (its item `item`) as the scope has it. A step of a repeating
    /// section is read in the instance an aggregate or per-instance calculation over the
    /// section has in scope, else in the instance the participant is in when a rule of one of
    /// the section's own steps reads it (as it reads the session: unchanged); anywhere else no
    /// instance is meant and the read is refused (`outsideInstance`, `otherInstance`).
    func sectionScoped(_ resolved: (selector: Selector, type: ResultType?, choices: [ChoiceOption]?, format: AnswerFormat?),
                       step index: Int, item: String?, at path: JSONPath) -> (selector: Selector, type: ResultType?, choices: [ChoiceOption]?, format: AnswerFormat?)? {
        guard let n = repeatingSections.block(of: index) else { return resolved }
        let reference = repeatingSections.reference(n)
        if scope.contains(reference), let type = resolved.type {
            let read = InstanceRead(block: reference, item: item, index: nil, type: type, step: index)
            return (.instance(read), resolved.type, resolved.choices, resolved.format)
        }
        if let owner = scope.owner, repeatingSections.entries[n].contains(owner) { return resolved }
        let name = repeatingSections.entries[n].identifier
        let stepID = steps[ifPresent: index]?.identifier ?? ""
        let code = scope.blocks.isEmpty ? "outsideInstance" : "otherInstance"
        let whereRead = scope.blocks.isEmpty ? "outside its instances" : "inside an instance of another block"
        diagnostics.error(code, "This reads \"\(stepID)\" of the repeating section \"\(name)\" \(whereRead), where no instance of it is meant: read it in an aggregate ({\"count\": {\"over\": {\"section\": \"\(name)\"}, \"where\": ...}}) or at an index ({\"section\": \"\(name)\", \"step\": \"\(stepID)\", \"index\": 0}).", at: path)
        return nil
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
        guard let over = operand["over"], let block = predicates.anyBlock(over, at: path.key("over")) else { return nil }
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
        let a = Aggregate(kind: kind, block: block.reference, maxCount: block.maxCount, filter: filter, of: of)
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
