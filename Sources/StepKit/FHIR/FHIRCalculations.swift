/// `sdc-questionnaire-calculatedExpression` and the `variable` extensions it reads, in the
/// FHIRPath subset StepKit's expression language expresses, as task calculations. The FHIRPath is
/// read into a tree (`FHIRPathNode`) and translated node by node:
/// - `%resource.answers().value.ordinal().sum()` (SDC's total score) → `{"sum": [{"score": Q}, ...]}`
///   over every asked question whose answers carry scores;
/// - `%resource.item.where(linkId='X').answer.value` (X a top-level item, as FHIRPath's `item`
///   reaches no deeper) or `%resource.repeat(item).where(linkId='X').answer.value` (any depth)
///   → `{"answer": X}`;
/// - the score of the option chosen for X, as LHC-Forms writes it:
///   `%questionnaire.item.where(linkId='X').answerOption.where(valueCoding.code =
///   %resource.item.where(linkId='X').answer.valueCoding.code).extension.where(url = U).valueDecimal`
///   with U the `ordinalValue` or `itemWeight` URL (or a variable holding it) → `{"score": X}`;
/// - `%name` → the variable's translation (variables are substituted, in scope: the
///   Questionnaire's, then each enclosing item's, in order);
/// - `iif(c, a[, b])` → `{"if": [c, a, b]}`, `{}` → null, `x.exists()` / `x.empty()` → whether
///   `x` has a value, `x.not()`, `+ - * /`, `and`, `or`, `= != < <= > >=` on numbers, strings or
///   booleans.
/// FHIRPath's empty collection is StepKit's null: arithmetic on it is null in both, and a
/// comparison with it is empty in FHIRPath and false here, which `iif` reads alike. Anything else
/// is nil (the importer reports it); so is a result past the expression language's bounds.
struct FHIRCalculations {
    static let url = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"
    static let variableURL = "http://hl7.org/fhir/StructureDefinition/variable"

    let prepared: [String: FHIRPrepared]
    let locations: [String: (step: String, item: String?)]
    /// The asked items in document order.
    let order: [String]
    /// The top-level items' linkIds: `%resource.item` reaches only these.
    let topLevel: Set<String>
    /// Every item by linkId: its FHIR type types `{"answer": X}`.
    let index: FHIRItemIndex

    /// A FHIRPath expression or variable translated: the StepKit expression and what it gives.
    struct Value {
        enum Kind: Equatable {
            case number, boolean, string, other
            /// `{}`: fits any kind.
            case null
        }

        let json: JSON
        let kind: Kind
        /// The text of a string literal (a variable holding an extension's URL).
        var literal: String?
    }

    /// The expression of an item's calculatedExpression, with where it is.
    static func expression(of item: FHIRItem) -> (text: String, path: JSONPath)? {
        guard let e = FHIRExtension.find(url, in: item.extensions),
              let v = e.object["valueExpression"]?.objectValue, let text = v["expression"]?.stringValue else { return nil }
        return (text, item.path.key("extension").index(e.index))
    }

    /// The calculation for a calculatedExpression, or nil when the FHIRPath is outside the subset.
    func translate(_ fhirpath: String, variables: [String: Value] = [:]) -> JSON? {
        guard let value = translateValue(fhirpath, variables: variables), value.kind != .null else { return nil }
        return value.json
    }

    /// A variable's or an expression's translation, or nil. The tree is at most
    /// `FHIRPathNode.maxTreeDepth` deep, which bounds the recursion of `value`; a translation
    /// past the expression language's bounds is nil too, so a chain of variables, each reading
    /// the one before, cannot build a value deeper than that (nor one whose release recurses).
    func translateValue(_ fhirpath: String, variables: [String: Value]) -> Value? {
        guard let node = FHIRPathNode.parse(fhirpath), let value = value(node, variables),
              FHIRCalculations.fitsBounds(value.json) else { return nil }
        return value
    }

    /// Whether a translation keeps within `ExpressionLimits` (counted generously: every JSON
    /// value a node, every object a level), so the task it goes into compiles.
    static func fitsBounds(_ json: JSON) -> Bool {
        var nodes = 0
        var stack: [(JSON, Int)] = [(json, 1)]
        while let (value, d) = stack.popLast() {
            nodes += 1
            guard nodes <= ExpressionLimits.maxNodes, d < ExpressionLimits.maxDepth else { return false }
            switch value {
            case .array(let items): for item in items { stack.append((item, d)) }
            case .object(let object): object.forEachEntry { _, v in stack.append((v, d + 1)) }
            default: break
            }
        }
        return true
    }

    // MARK: Nodes

    private func value(_ node: FHIRPathNode, _ variables: [String: Value]) -> Value? {
        switch node {
        case .number(let d): return Value(json: .number(d), kind: .number)
        case .boolean(let b): return Value(json: .bool(b), kind: .boolean)
        case .string(let s): return Value(json: .string(s), kind: .string, literal: s)
        case .empty: return Value(json: .null, kind: .null)
        case .variable(let name): return variables[name]
        case .binary(let op, let a, let b):
            guard let x = value(a, variables), let y = value(b, variables) else { return nil }
            return binary(op, x, y)
        case .invocation(nil, "iif", let arguments?) where arguments.count == 2 || arguments.count == 3:
            guard let c = value(arguments[0], variables), c.kind == .boolean || c.kind == .null,
                  let a = value(arguments[1], variables) else { return nil }
            let b = arguments.count == 3 ? value(arguments[2], variables) : Value(json: .null, kind: .null)
            guard let b, let kind = FHIRCalculations.common(a.kind, b.kind) else { return nil }
            return Value(json: .object(["if": .array([c.json, a.json, b.json])]), kind: kind)
        case .invocation(let base?, let name, let arguments?) where arguments.isEmpty && (name == "exists" || name == "empty"):
            guard let x = value(base, variables) else { return nil }
            let count = JSON.object(["count": .array([x.json])])
            return Value(json: .object(["==": .array([count, .int(name == "exists" ? 1 : 0)])]), kind: .boolean)
        case .invocation(let base?, "not", let arguments?) where arguments.isEmpty:
            guard let x = value(base, variables), x.kind == .boolean else { return nil }
            return Value(json: .object(["not": .array([x.json])]), kind: .boolean)
        case .invocation:
            return path(node) ?? score(node, variables)
        }
    }

    private static func common(_ a: Value.Kind, _ b: Value.Kind) -> Value.Kind? {
        if a == .null { return b }
        if b == .null || a == b { return a }
        return nil
    }

    private static let operators: [String: String] = ["=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
                                                      "+": "+", "-": "-", "*": "*", "/": "/", "and": "and", "or": "or"]

    private func binary(_ op: String, _ x: Value, _ y: Value) -> Value? {
        guard let name = FHIRCalculations.operators[op] else { return nil }
        let kind: Value.Kind
        switch op {
        case "+", "-", "*", "/":
            guard [.number, .null].contains(x.kind), [.number, .null].contains(y.kind) else { return nil }
            kind = .number
        case "and", "or":
            guard [.boolean, .null].contains(x.kind), [.boolean, .null].contains(y.kind) else { return nil }
            kind = .boolean
        default:
            guard let k = FHIRCalculations.common(x.kind, y.kind), k != .other, k != .null,
                  op == "=" || op == "!=" || k != .boolean else { return nil }
            kind = .boolean
        }
        // `a + b + c` (and `and`, `or`, `*`) as one operator with every operand, not nested.
        var operands = [y.json]
        if ["+", "*", "and", "or"].contains(op), case .object(let o) = x.json, o.count == 1, let list = o[name]?.arrayValue {
            operands = list + operands
        } else {
            operands.insert(x.json, at: 0)
        }
        return Value(json: .object([name: .array(operands)]), kind: kind)
    }

    // MARK: Paths

    private func selector(_ linkId: String) -> JSON? {
        guard let loc = locations[linkId] else { return nil }
        return loc.item.map { .object(["step": .string(loc.step), "item": .string($0)]) } ?? .string(loc.step)
    }

    private func kind(of linkId: String) -> Value.Kind {
        switch index.items[linkId]?.type {
        case "integer", "decimal": return .number
        case "boolean": return .boolean
        case "string", "text", "url": return .string
        default: return .other
        }
    }

    /// `linkId = 'X'` (either way round) as the argument list of a `where`.
    private static func linkIdFilter(_ arguments: [FHIRPathNode]?) -> String? {
        guard let arguments, arguments.count == 1, case .binary("=", let a, let b) = arguments[0] else { return nil }
        switch (a, b) {
        case (.invocation(nil, "linkId", nil), .string(let x)), (.string(let x), .invocation(nil, "linkId", nil)): return x
        default: return nil
        }
    }

    /// `item.where(linkId='X')` (X top-level) or `repeat(item).where(linkId='X')` at the front of
    /// `steps`: X and the steps after it.
    private func item(_ steps: ArraySlice<(name: String, arguments: [FHIRPathNode]?)>) -> (linkId: String, rest: ArraySlice<(name: String, arguments: [FHIRPathNode]?)>)? {
        guard steps.count >= 2, let first = steps.first, let linkId = FHIRCalculations.linkIdFilter(steps.dropFirst().first?.arguments),
              steps.dropFirst().first?.name == "where" else { return nil }
        if first.name == "item" && first.arguments == nil && topLevel.contains(linkId) { return (linkId, steps.dropFirst(2)) }
        if first.name == "repeat", first.arguments == [.invocation(base: nil, name: "item", arguments: nil)] { return (linkId, steps.dropFirst(2)) }
        return nil
    }

    private static func names(_ steps: ArraySlice<(name: String, arguments: [FHIRPathNode]?)>) -> [String] {
        steps.map { $0.arguments == nil ? $0.name : $0.name + "()" }
    }

    /// The paths into `%resource`: an item's answer, and SDC's sum of ordinal values.
    private func path(_ node: FHIRPathNode) -> Value? {
        let (start, steps) = node.chain
        guard start == .variable("resource") else { return nil }
        if FHIRCalculations.names(steps[...]) == ["answers()", "value", "ordinal()", "sum()"] {
            let scored = order.filter { id in prepared[id]?.choices?.contains { $0.score != nil } == true }
            let parts = scored.compactMap { selector($0).map { JSON.object(["score": $0]) } }
            return parts.isEmpty ? nil : Value(json: .object(["sum": .array(parts)]), kind: .number)
        }
        guard let (linkId, rest) = item(steps[...]), FHIRCalculations.names(rest) == ["answer", "value"],
              let sel = selector(linkId) else { return nil }
        return Value(json: .object(["answer": sel]), kind: kind(of: linkId))
    }

    /// The score of the option chosen for an item, read from `%questionnaire` (see above).
    private func score(_ node: FHIRPathNode, _ variables: [String: Value]) -> Value? {
        let (start, steps) = node.chain
        guard start == .variable("questionnaire"), let (linkId, rest) = item(steps[...]), rest.count == 5 else { return nil }
        let r = Array(rest)
        guard r[0].name == "answerOption", r[0].arguments == nil, r[1].name == "where", r[2].name == "extension", r[2].arguments == nil,
              r[3].name == "where", ["valueDecimal", "valueInteger"].contains(r[4].name), r[4].arguments == nil,
              let codeFilter = r[1].arguments, codeFilter.count == 1, case .binary("=", let code, let answered) = codeFilter[0],
              code.chain.start == .invocation(base: nil, name: "valueCoding", arguments: nil), FHIRCalculations.names(code.chain.steps[...]) == ["code"],
              answered.chain.start == .variable("resource"), let (answeredId, answerRest) = item(answered.chain.steps[...]), answeredId == linkId,
              FHIRCalculations.names(answerRest) == ["answer", "valueCoding", "code"],
              let urlFilter = r[3].arguments, urlFilter.count == 1, case .binary("=", .invocation(nil, "url", nil), let u) = urlFilter[0],
              let url = value(u, variables)?.literal, url == FHIRExtension.ordinalValue || url == FHIRExtension.itemWeight,
              prepared[linkId]?.choices?.contains(where: { $0.score != nil }) == true,
              let sel = selector(linkId) else { return nil }
        return Value(json: .object(["score": sel]), kind: .number)
    }
}
