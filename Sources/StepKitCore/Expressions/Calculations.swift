import StepKitBase

/// The task's `calculations`: named expressions over answers and other calculations, compiled
/// in dependency order (so each knows the types of those it reads), cycles refused.
struct Calculations: Sendable {
    struct Calculation: Sendable {
        let name: String
        let expression: Expression
        let type: ExpressionType
        let dependencies: ExpressionDependencies
        /// A per-instance calculation's block (`{"forEach": BLOCK, "value": EXPR}`): its value is
        /// one per instance, an array in results and the state; nil for a calculation over all.
        var block: BlockReference? = nil
    }

    /// In definition order; `{"calc": NAME}` refers to an index here.
    private(set) var list: [Calculation] = []
    /// Indexes into `list`, every calculation after those it reads.
    private(set) var order: [Int] = []

    var isEmpty: Bool { list.isEmpty }

    func index(of name: String) -> Int? { list.firstIndex { $0.name == name } }

    /// The calculations in `stepkit_task_info`: name, type and what each reads directly.
    func info(_ task: Task) -> JSON {
        .array(list.map { c in
            .object([
                "name": .string(c.name),
                "type": .string(c.type.rawValue),
                "dependsOn": .object([
                    "steps": .array(c.dependencies.steps.compactMap { task.step(at: $0).map { .string($0.identifier) } }),
                    "calculations": .array(c.dependencies.calculations.compactMap { list[ifPresent: $0].map { .string($0.name) } }),
                ]),
            ])
        })
    }

    // MARK: Compiling

    /// Compiles `"calculations"`; fills `predicates.calculations` with every name and type so
    /// the rules compiled after may read them.
    static func compile(_ value: JSON, _ predicates: PredicateCompiler) -> Calculations {
        let d = predicates.diagnostics
        let path = JSONPath.root.key("calculations")
        guard case .object(let object) = value else {
            d.error("wrongType", "\"calculations\" is an object: name → expression.", at: path)
            return Calculations()
        }
        let entries = object.entries
        let table = predicates.calculations
        for (i, entry) in entries.enumerated() {
            if !isName(entry.key) {
                d.error("invalidName", "A calculation's name is a letter or \"_\" followed by letters, digits or \"_\"; \"\(entry.key)\" is not.", at: path.key(entry.key))
            }
            table.index[entry.key] = i
        }
        table.types = Array(repeating: nil, count: entries.count)
        // Which calculations each one names, read from the JSON before compiling, so they can be
        // compiled in order.
        let edges = entries.map { entry in referencedNames(entry.value).compactMap { table.index[$0] } }
        let (order, cycles) = topologicalOrder(edges)
        for cycle in cycles {
            guard let first = cycle.first, entries.indices.contains(first) else { continue }
            let names = (cycle + [first]).compactMap { entries[ifPresent: $0]?.key }
            d.error("calculationCycle", "The calculations read each other in a cycle: " + names.joined(separator: " → ") + ".", at: path.key(entries[first].key))
        }
        var compiled: [Calculation?] = Array(repeating: nil, count: entries.count)
        for i in order where entries.indices.contains(i) {
            let (name, expressionValue) = entries[i]
            if let perInstance = expressionValue.objectValue, perInstance["forEach"] != nil {
                compiled[i] = compilePerInstance(perInstance, name: name, index: i, at: path.key(name), predicates)
                continue
            }
            guard let (expression, type) = ExpressionCompiler(predicates: predicates).compile(expressionValue, at: path.key(name)) else { continue }
            table.types[i] = type
            compiled[i] = Calculation(name: name, expression: expression, type: type, dependencies: ExpressionDependencies(of: expression))
        }
        for (i, c) in compiled.enumerated() { if let c { table.compiled[i] = c } }
        let list = compiled.compactMap { $0 }
        guard list.count == entries.count else { return Calculations() }
        return Calculations(list: list, order: order)
    }

    /// `{"forEach": BLOCK, "value": EXPR}`: `value` computed in each instance of the block.
    private static func compilePerInstance(_ object: JSONObject, name: String, index: Int, at path: JSONPath, _ predicates: PredicateCompiler) -> Calculation? {
        let d = predicates.diagnostics
        for key in object.keys where key != "forEach" && key != "value" {
            d.error("unknownKey", "A per-instance calculation is {\"forEach\": BLOCK, \"value\": EXPRESSION}; not \"\(key)\".", at: path.key(key))
        }
        guard let forEach = object["forEach"], let block = predicates.anyBlock(forEach, at: path.key("forEach")) else { return nil }
        guard let value = object["value"] else {
            d.error("missingKey", "A per-instance calculation needs \"value\": the expression computed in each instance.", at: path)
            return nil
        }
        let compiled = predicates.scope.within(block.reference) {
            ExpressionCompiler(predicates: predicates).compile(value, at: path.key("value"))
        }
        guard let (expression, type) = compiled else { return nil }
        predicates.calculations.types[index] = type
        predicates.calculations.perInstance[index] = InstanceCalculation(index: index, block: block.reference, expression: expression, depth: expression.depth)
        var dependencies = ExpressionDependencies(of: expression)
        dependencies.addBlock(block.reference)
        return Calculation(name: name, expression: expression, type: type, dependencies: dependencies, block: block.reference)
    }

    private static func isName(_ s: String) -> Bool {
        guard let first = s.utf8.first else { return false }
        func letter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F }
        return letter(first) && s.utf8.allSatisfy { letter($0) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    /// The names in `{"calc": NAME}` anywhere in `value`, walked with an explicit stack and at
    /// most a few times the node budget (a larger expression is refused when it compiles).
    static func referencedNames(_ value: JSON) -> [String] {
        var names: [String] = []
        var stack = [value]
        var visited = 0
        while let next = stack.popLast(), visited < ExpressionLimits.maxNodes * 4 {
            visited += 1
            switch next {
            case .array(let items):
                stack.append(contentsOf: items)
            case .object(let object):
                if object.count == 1, let name = object["calc"]?.stringValue {
                    names.append(name)
                } else {
                    object.forEachEntry { _, v in stack.append(v) }
                }
            default:
                break
            }
        }
        return names
    }

    /// Every node after those it points to (depth-first, with an explicit stack), and the cycles
    /// met on the way (each as the nodes in order; at most `maxReportedCycles`, each through a
    /// node no earlier one passed, so the work stays linear in practice and bounded always).
    static func topologicalOrder(_ edges: [[Int]]) -> (order: [Int], cycles: [[Int]]) {
        enum Mark { case new, open, done }
        var marks = Array(repeating: Mark.new, count: edges.count)
        // Where each open node sits on the stack.
        var position = Array(repeating: 0, count: edges.count)
        var inCycle = Array(repeating: false, count: edges.count)
        var order: [Int] = []
        var cycles: [[Int]] = []
        for root in edges.indices where marks[root] == .new {
            // (node, next edge to follow)
            var stack: [(node: Int, next: Int)] = [(root, 0)]
            marks[root] = .open
            position[root] = 0
            while let top = stack.last {
                let targets = edges[top.node]
                if top.next < targets.count {
                    stack[stack.count - 1].next += 1
                    let target = targets[top.next]
                    guard edges.indices.contains(target) else { continue }
                    switch marks[target] {
                    case .new:
                        marks[target] = .open
                        position[target] = stack.count
                        stack.append((target, 0))
                    case .open:
                        let start = position[target]
                        guard !inCycle[target], cycles.count < maxReportedCycles, stack.indices.contains(start) else { continue }
                        let cycle = stack[start...].map(\.node)
                        cycles.append(cycle)
                        for node in cycle { inCycle[node] = true }
                    case .done:
                        break
                    }
                } else {
                    marks[top.node] = .done
                    order.append(top.node)
                    stack.removeLast()
                }
            }
        }
        return (order, cycles)
    }

    static let maxReportedCycles = 20
}

/// What expressions may know of the task's calculations while the task compiles: every name
/// (known first) and each type once its calculation has compiled.
final class CalculationTable {
    var index: [String: Int] = [:]
    var types: [ExpressionType?] = []
    /// Per-instance calculations (`{"forEach": BLOCK, "value": EXPR}`), by index, once compiled.
    var perInstance: [Int: InstanceCalculation] = [:]
    /// Every calculation compiled so far, by index (what a `count` reads through them).
    var compiled: [Int: Calculations.Calculation] = [:]
}
