import StepKitBase

// Expressions over the instances of repeating blocks (docs/expressions.md, "Repeating blocks:
// scope"). Inside an instance, a read of an item of the block reads that instance's answer; from
// anywhere, an aggregate reads every instance and an indexed read one of them. Which instance a
// read means is decided by the scope it is evaluated in (`InstanceScope`), never guessed from the
// data: a read that has no instance in scope is refused when the task compiles.

/// A repeating block whose instances expressions read: a block whose instances are an answer's
/// array, or a repeating section of steps. A block of another kind adds a case here and its
/// reads in the lookups (`AnswerLookup.instanceCount`, `instanceEntry`), and nothing else changes.
enum BlockReference: Sendable, Hashable {
    /// A form's repeating group or repeating item (`item`), or a repeating question step
    /// (`item` nil), of step `step`: its instances are that answer's array.
    case answer(step: Int, item: String?)
    /// Repeating section `block` (its place in `TaskRules.stepBlocks`), whose steps start at
    /// step `first`: an instance's entry is an array of its steps' answers, in step order
    /// (`Session.sectionEntry`).
    case section(block: Int, first: Int)
    /// A repeating group (`item`) inside repeating group `outer` of step `step` (a medication's
    /// doses): its instances are those of the outer instance in scope (an array in that
    /// instance's entry), at least `minCount`. Read only with an outer instance in scope
    /// (`PredicateCompiler.block`); its `selector` is the outer block's, so what a calculation
    /// over it was computed on (`instancesDigest`) is the outer block's instances.
    case inner(step: Int, outer: String, item: String, minCount: Int)

    /// The selector of the block's whole answer (what a lookup that knows no instances reads:
    /// a section's first step, whose answer is no array, so it has none).
    var selector: Selector {
        switch self {
        case .answer(let step, let item): return item.map { .item(step: step, item: $0) } ?? .step(step)
        case .section(_, let first): return .step(first)
        case .inner(let step, let outer, _, _): return .item(step: step, item: outer)
        }
    }

    /// An inner block's outer block (nil for another block).
    var outerBlock: BlockReference? {
        if case .inner(let step, let outer, _, _) = self { return .answer(step: step, item: outer) }
        return nil
    }

    /// The step that holds the block (a section's first step: reached, the section has
    /// instances).
    var step: Int {
        switch self {
        case .answer(let step, _): return step
        case .section(_, let first): return first
        case .inner(let step, _, _, _): return step
        }
    }
}

/// A read of one item of a repeating block's instance: the instance in scope (`index` nil), or
/// a fixed one (an indexed read, from 0; a negative index counts from the last, -1).
struct InstanceRead: Sendable, Equatable {
    let block: BlockReference
    /// The group's item; nil for a repeating question, whose instance is one answer. In a
    /// repeating section: the form item of `step`, nil for a question step.
    let item: String?
    let index: Int?
    /// The item's result type (a read inside an instance always knows it).
    let type: ResultType
    /// In a repeating section, the step read (its index in the task); nil for another block.
    var step: Int? = nil

    /// The answer this read gives on `lookup` in `scope`; nil when there is no such instance, or
    /// it holds no answer there.
    func value(_ lookup: some AnswerLookup, _ scope: InstanceScope) -> JSON? {
        if case .inner = block {
            // An inner instance: of the outer instance in scope.
            let list = lookup.innerInstances(block, scope)
            guard var k = index ?? scope.index(of: block) else { return nil }
            if k < 0 { k += list.count }
            guard k >= 0, let entry = list[ifPresent: k] else { return nil }
            guard let item else { return entry.isNull ? nil : entry }
            guard let value = entry.objectValue?[item], !value.isNull else { return nil }
            return value
        }
        guard var k = index ?? scope.index(of: block) else { return nil }
        if k < 0 { k += lookup.instanceCount(block) }
        guard k >= 0, var entry = lookup.instanceEntry(block, k) else { return nil }
        if let step, case .section(_, let first) = block {
            guard let answer = entry.arrayValue?[ifPresent: step - first] else { return nil }
            entry = answer
        }
        guard let item else { return entry.isNull ? nil : entry }
        guard let value = entry.objectValue?[item], !value.isNull else { return nil }
        return value
    }
}

/// Which instance of each block a read is evaluated in: empty outside every block; one entry per
/// block entered (an aggregate's instance, a per-instance rule's), the innermost last. Nil
/// storage when empty, so passing the empty scope through every predicate costs nothing.
struct InstanceScope: Sendable {
    private struct Entry: Sendable {
        let block: BlockReference
        let index: Int
    }

    private var entries: [Entry]?

    static let none = InstanceScope()

    init() {}

    init(_ block: BlockReference, _ index: Int) { entries = [Entry(block: block, index: index)] }

    var isEmpty: Bool { entries == nil }

    func index(of block: BlockReference) -> Int? {
        guard let entries else { return nil }
        for entry in entries.reversed() where entry.block == block { return entry.index }
        return nil
    }

    /// The scope with `block`'s instance `index` entered.
    func entering(_ block: BlockReference, _ index: Int) -> InstanceScope {
        var copy = self
        copy.entries = (entries ?? []) + [Entry(block: block, index: index)]
        return copy
    }
}

/// `{"count"|"sum"|"min"|"max"|"avg"|"any"|"all": {"over": BLOCK, "where": COND, "of": EXPR}}`:
/// over the block's instances (those `where` holds in, when given), each evaluated with that
/// instance in scope. A class: the tree holds it in one pointer.
final class Aggregate: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case count, sum, min, max, avg, any, all
    }

    let kind: Kind
    let block: BlockReference
    /// The block's `maxCount`: how many instances the evaluation may visit (the cost bound).
    let maxCount: Int
    let filter: Expression?
    /// The value per instance: a number for sum, min, max and avg, a boolean for any and all;
    /// nil for count.
    let of: Expression?

    init(kind: Kind, block: BlockReference, maxCount: Int, filter: Expression?, of: Expression?) {
        self.kind = kind
        self.block = block
        self.maxCount = maxCount
        self.filter = filter
        self.of = of
    }
}

/// A per-instance calculation (`{"forEach": BLOCK, "value": EXPR}`) read inside its block's
/// instance: evaluated there, on that instance.
final class InstanceCalculation: Sendable {
    let index: Int
    let block: BlockReference
    let expression: Expression
    /// `expression.cost` and its nesting (its own depth plus that of the per-instance
    /// calculations it reads), worked out once: a read of it costs and nests that much more.
    let cost: Double
    let depth: Int

    init(index: Int, block: BlockReference, expression: Expression, depth: Int) {
        self.index = index
        self.block = block
        self.expression = expression
        self.cost = expression.cost
        self.depth = depth
    }
}

extension AnswerLookup {
    /// By default a block has the instances its answer's array holds.
    func instanceCount(_ block: BlockReference) -> Int {
        min(answerValue(block.selector)?.arrayValue?.count ?? 0, RepeatBounds.limit)
    }

    func instanceEntry(_ block: BlockReference, _ index: Int) -> JSON? {
        guard index >= 0 else { return nil }
        return answerValue(block.selector)?.arrayValue?[ifPresent: index]
    }

    /// An inner block's instances in the outer instance `scope` is in: that instance's array
    /// (empty entries up to the block's `minCount`); empty when no outer instance is in scope.
    func innerInstances(_ block: BlockReference, _ scope: InstanceScope) -> [JSON] {
        guard case .inner(_, _, let item, let minCount) = block, let outer = block.outerBlock,
              let k = scope.index(of: outer), let entry = instanceEntry(outer, k) else { return [] }
        var list = Array((entry.objectValue?[item]?.arrayValue ?? []).prefix(RepeatBounds.limit))
        while list.count < minCount { list.append(.object(JSONObject())) }
        return list
    }

    /// What a selector reads in `scope`: an instance read through its instance, any other as
    /// the lookup shows it.
    func scopedValue(_ selector: Selector, _ scope: InstanceScope) -> JSON? {
        if case .instance(let read) = selector { return read.value(self, scope) }
        return answerValue(selector)
    }

    /// The block's entries as this lookup shows them, one per instance (null for an empty
    /// one): what a calculation over the block was computed on.
    func instancesDigest(_ block: BlockReference) -> JSON {
        let n = instanceCount(block)
        var list: [JSON] = []
        list.reserveCapacity(n)
        for k in 0..<n { list.append(instanceEntry(block, k) ?? .null) }
        return .array(list)
    }
}

extension ExpressionEvaluator {
    /// An aggregate over `a.block`'s instances: each instance entered in turn.
    mutating func aggregate(_ a: Aggregate) -> ExpressionValue {
        let inner: Int? = if case .inner = a.block { lookup.innerInstances(a.block, scope).count } else { nil }
        let n = Swift.min(inner ?? lookup.instanceCount(a.block), a.maxCount, RepeatBounds.limit)
        let outer = scope
        defer { scope = outer }
        var count = 0
        var numbers: [Double] = []
        for k in 0..<n {
            scope = outer.entering(a.block, k)
            if let filter = a.filter, !value(filter).isTrue { continue }
            switch a.kind {
            case .count:
                count += 1
            case .any:
                if let of = a.of, value(of).isTrue { return .bool(true) }
            case .all:
                if let of = a.of, !value(of).isTrue { return .bool(false) }
            case .sum, .min, .max, .avg:
                if let of = a.of, case .number(let d) = value(of) { numbers.append(d) }
            }
        }
        switch a.kind {
        case .count: return .number(Double(count))
        case .any: return .bool(false)
        case .all: return .bool(true)
        case .sum: return ExpressionEvaluator.finiteNumber(numbers.reduce(0, +))
        case .avg: return numbers.isEmpty ? .null : ExpressionEvaluator.finiteNumber(numbers.reduce(0, +) / Double(numbers.count))
        case .min: return numbers.min().map { .number($0) } ?? .null
        case .max: return numbers.max().map { .number($0) } ?? .null
        }
    }

    /// A per-instance calculation read inside its block's instance (null outside one).
    mutating func instanceCalculation(_ c: InstanceCalculation) -> ExpressionValue {
        guard scope.index(of: c.block) != nil else { return .null }
        return value(c.expression)
    }

    /// A per-instance calculation's value over every instance: an array, one value per instance,
    /// as results and the state show it.
    mutating func everyInstance(_ expression: Expression, of block: BlockReference) -> ExpressionValue {
        let n = Swift.min(lookup.instanceCount(block), RepeatBounds.limit)
        let outer = scope
        defer { scope = outer }
        var list: [JSON] = []
        for k in 0..<n {
            scope = outer.entering(block, k)
            list.append(value(expression).json)
        }
        return .other(.array(list))
    }

    static func finiteNumber(_ d: Double) -> ExpressionValue { d.isFinite ? .number(d) : .null }
}
