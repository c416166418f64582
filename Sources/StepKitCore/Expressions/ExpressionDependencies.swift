import StepKitBase

/// What an expression reads, extracted once at compile time: the answers (selectors), the
/// calculations, and whether it reads the clock. `stepkit_task_info` lists them, and the
/// calculation cache re-reads exactly these to know whether a value must be computed again.
struct ExpressionDependencies: Sendable {
    /// How an expression reads the clock: not at all, the date (`today`), or the instant (`now`).
    enum TimeUse: Int, Sendable, Comparable {
        case none, day, instant
        static func < (a: TimeUse, b: TimeUse) -> Bool { a.rawValue < b.rawValue }
    }

    private(set) var selectors: [Selector] = []
    private(set) var calculations: [Int] = []
    private(set) var time: TimeUse = .none
    /// The repeating blocks whose instances it reads (inside an instance, at an index, or in an
    /// aggregate): the cache re-reads their instances as the lookup shows them.
    private(set) var blocks: [BlockReference] = []

    init() {}

    init(of expression: Expression) {
        add(expression)
    }

    /// Walks the tree (as deep as it is: at most `ExpressionLimits.maxDepth`).
    mutating func add(_ expression: Expression) {
        switch expression {
        case .literal:
            break
        case .answer(let s, _, _), .score(let s, _), .answered(let s):
            addSelector(s)
        case .comparison(let c):
            addSelector(c.selector)
        case .calculation(let i):
            if !calculations.contains(i) { calculations.append(i) }
        case .now:
            time = max(time, .instant)
        case .today:
            time = max(time, .day)
        case .round(let x, _):
            add(x)
        case .apply(_, let args):
            for arg in args { add(arg) }
        case .aggregate(let a):
            addBlock(a.block)
            if let filter = a.filter { add(filter) }
            if let of = a.of { add(of) }
        case .instanceCalculation(let c):
            addBlock(c.block)
            if !calculations.contains(c.index) { calculations.append(c.index) }
        }
    }

    private mutating func addSelector(_ s: Selector) {
        if !selectors.contains(s) { selectors.append(s) }
        if case .instance(let read) = s { addBlock(read.block) }
    }

    mutating func addBlock(_ block: BlockReference) {
        if !blocks.contains(block) { blocks.append(block) }
    }

    /// The steps of this task read, by index, in order of first reading.
    var steps: [Int] {
        var result: [Int] = []
        for selector in selectors {
            switch selector {
            case .step(let i), .item(let i, _):
                if !result.contains(i) { result.append(i) }
            case .instance(let read):
                let step = read.step ?? read.block.step
                if !result.contains(step) { result.append(step) }
            case .external:
                break
            }
        }
        return result
    }
}

extension Expression {
    /// The predicate comparisons inside the expression (walked as deep as the tree).
    var comparisons: [Comparison] {
        switch self {
        case .comparison(let c): return [c]
        case .round(let x, _): return x.comparisons
        case .apply(_, let args): return args.flatMap(\.comparisons)
        case .aggregate(let a): return (a.filter?.comparisons ?? []) + (a.of?.comparisons ?? [])
        default: return []
        }
    }
}

extension Predicate {
    /// Every selector the predicate reads (for a predicate holding expressions, what they read).
    var selectors: [Selector] {
        switch self {
        case .always: return []
        case .compare(let c): return [c.selector]
        case .expression(let e): return ExpressionDependencies(of: e).selectors
        case .not(let q): return q.selectors
        case .all(let ps), .any(let ps): return ps.flatMap(\.selectors)
        }
    }
}
