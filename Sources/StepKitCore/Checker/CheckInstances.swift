import StepKitBase

/// Reads of repeating blocks that compile but read nothing useful (docs/expressions.md,
/// "Repeating blocks: scope"; what can never mean anything — a read with no instance in scope —
/// is refused when the task compiles):
/// - `aggregateOverNothing`: an aggregate over a block of a step no path reaches, so it has no
///   instance on any path (count 0, sum 0, any false, all true, always);
/// - `indexNeverExists`: an indexed read at or past the block's `maxCount`: always null;
/// - `aggregateIgnoresInstance`: an aggregate whose `where` and `of` read nothing of its
///   block's instance, so every instance gives the same value (usually a read meant to be per
///   instance that names another answer).
extension TaskChecker {
    mutating func checkInstanceReads() {
        var sites: [(Expression, JSONPath)] = []
        for c in task.calculations.list { sites.append((c.expression, .root.key("calculations").key(c.name))) }
        for site in ruleSites() { for e in TaskChecker.expressions(in: site.predicate) { sites.append((e, site.path)) } }
        for (step, blocks) in task.rules.instanceVisibility {
            for block in blocks {
                for item in block.items {
                    for e in TaskChecker.expressions(in: item.predicate) { sites.append((e, itemPath(step: step, item: block.block).key("items"))) }
                }
            }
        }
        guard !sites.isEmpty else { return }
        let seen = reachable()
        var reported = Set<String>()
        for (expression, path) in sites {
            TaskChecker.walk(expression) { node in
                switch node {
                case .aggregate(let a):
                    if seen.indices.contains(a.block.step), !seen[a.block.step] {
                        note(.warning, "aggregateOverNothing", "This \"\(a.kind.rawValue)\" is over a block of the step \"\(task.step(at: a.block.step)?.identifier ?? "")\", which no path reaches: it has no instance, always.", path, &reported)
                    }
                    let reads = [a.filter, a.of].compactMap { $0 }.contains { TaskChecker.readsInstance(of: a.block, in: $0) }
                    if !reads, a.filter != nil || a.of != nil {
                        note(.warning, "aggregateIgnoresInstance", "This \"\(a.kind.rawValue)\"'s \"where\" and \"of\" read nothing of the block's instance, so every instance gives the same value; read the instance's items with {\"step\", \"block\", \"item\"}.", path, &reported)
                    }
                case .answer(.instance(let r), _, _), .score(.instance(let r), _), .answered(.instance(let r)):
                    checkIndex(r, path, &reported)
                case .comparison(let c):
                    if case .instance(let r) = c.selector { checkIndex(r, path, &reported) }
                default:
                    break
                }
            }
        }
    }

    private mutating func checkIndex(_ r: InstanceRead, _ path: JSONPath, _ reported: inout Set<String>) {
        guard let index = r.index, let max = blockMaxCount(r.block), index >= max || -index > max else { return }
        note(.warning, "indexNeverExists", "Instance \(index) (\(index < 0 ? "from the last, -1" : "from 0")) never exists: the block has at most \(max) instances, so this read is always null.", path, &reported)
    }

    private func blockMaxCount(_ block: BlockReference) -> Int? {
        switch block {
        case .answer(let step, let item):
            guard let format = task.step(at: step)?.format(item: item), let r = format.rules as? RepeatingFormat else { return nil }
            return r.bounds.maxCount
        case .section(let n, _):
            return task.rules.stepBlocks[ifPresent: n]?.bounds.maxCount
        case .inner(let step, let outer, let item, _):
            return Session.nestedGroups(of: task.step(at: step)?.format(item: outer)).first { $0.identifier == item }?.format.bounds.maxCount
        }
    }

    /// Whether `expression` reads the instance of `block` in scope (an item with no `index`, or
    /// a per-instance calculation of the block).
    static func readsInstance(of block: BlockReference, in expression: Expression) -> Bool {
        var found = false
        walk(expression) { node in
            switch node {
            case .answer(.instance(let r), _, _), .score(.instance(let r), _), .answered(.instance(let r)):
                if r.block == block && r.index == nil { found = true }
            case .comparison(let c):
                if case .instance(let r) = c.selector, r.block == block, r.index == nil { found = true }
            case .instanceCalculation(let c):
                if c.block == block { found = true }
            default:
                break
            }
        }
        return found
    }

    /// One finding per code and place.
    private mutating func note(_ severity: Severity, _ code: String, _ message: String, _ path: JSONPath, _ reported: inout Set<String>) {
        guard reported.insert(code + " " + path.description).inserted else { return }
        report(severity, code, message, at: path)
    }

    /// The expressions of a predicate (its expression parts, and its comparisons as nodes).
    static func expressions(in predicate: Predicate) -> [Expression] {
        var out: [Expression] = []
        var stack = [predicate]
        while let next = stack.popLast() {
            switch next {
            case .all(let ps), .any(let ps): stack += ps
            case .not(let q): stack.append(q)
            case .always: break
            case .compare(let c): out.append(.comparison(c))
            case .expression(let e): out.append(e)
            }
        }
        return out
    }

    /// Every node of an expression, with an explicit stack (aggregates' `where` and `of`
    /// included; per-instance calculations are walked where they are defined).
    static func walk(_ expression: Expression, _ visit: (Expression) -> Void) {
        var stack = [expression]
        while let next = stack.popLast() {
            visit(next)
            switch next {
            case .round(let x, _): stack.append(x)
            case .apply(_, let args): stack += args
            case .aggregate(let a): stack += [a.filter, a.of].compactMap { $0 }
            default: break
            }
        }
    }
}
