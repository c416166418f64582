import StepKitBase

/// `sdc-questionnaire-calculatedExpression`, `sdc-questionnaire-enableWhenExpression` and the
/// `variable` extensions they read, in the FHIRPath subset StepKit's expression language
/// expresses. The FHIRPath is read into a tree (`FHIRPathNode`) and translated node by node:
/// - `%resource.answers().value.ordinal().sum()` (SDC's total score) → `{"sum": [{"score": Q}, ...]}`
///   over every asked question whose answers carry scores;
/// - `%resource.item.where(linkId='X').answer.value` (X a top-level item; `item.item.where(...)`
///   one level down, and so on, as FHIRPath's `item` reaches one level a step),
///   `%resource.repeat(item).where(linkId='X').answer.value` (any depth), and
///   `item.where(linkId='X').answer.value` read on an item whose child X is (a group's
///   variables) → `{"answer": X}`; a linkId no item has is FHIRPath's empty, null;
/// - on a choice question, `answer.value.code` (codings) or `answer.value` (strings) compared
///   with `=`/`!=` to a string → the option with that code selected or not;
///   `answer.value.ordinal()` / `.weight()` → `{"score": X}`;
/// - the score of the option chosen for X, as LHC-Forms writes it:
///   `%questionnaire.item.where(linkId='X').answerOption.where(valueCoding.code =
///   %resource.item.where(linkId='X').answer.valueCoding.code).extension.where(url = U).valueDecimal`
///   with U the `ordinalValue` or `itemWeight` URL (or a variable holding it) → `{"score": X}`;
/// - `%name` → the variable's translation (variables are substituted, in scope: the
///   Questionnaire's, then each enclosing item's, in order);
/// - `iif(c, a[, b])` → `{"if": [c, a, b]}`, `{}` → null, `x.exists()` / `x.empty()` → whether
///   `x` has a value, `x.not()`, `+ - * /`, `&` (`concat`: empty reads as ''), `and`, `or`,
///   `= != < <= > >=` on numbers, strings (code-point order) or booleans;
/// - the functions `ln() exp() sqrt() abs() truncate() power(n) round([n])` on numbers and
///   `upper() lower() length() substring(a[, b]) startsWith(s) contains(s) replace(a, b)` on
///   strings → the expression language's operators of the same meaning.
///
/// FHIRPath's empty collection is StepKit's null: arithmetic and the functions on it are null
/// in both. A comparison with it is empty in FHIRPath and false here; as the result of a
/// condition or an `iif` test both read as false, but negating it, comparing it or asking
/// whether it exists would not, so each value records whether it may be such a false
/// (`emptyAsFalse`): a comparison's negation becomes "its operands have values, and not"
/// (`defined`), and the rest (negating `and`/`or` of such, comparing them, `exists()`) is refused. Anything else is nil (the importer
/// reports it); so is a result past the expression language's bounds.
struct FHIRCalculations {
    static let url = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"
    static let enableWhenURL = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression"
    static let initialURL = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-initialExpression"
    static let variableURL = "http://hl7.org/fhir/StructureDefinition/variable"

    let prepared: [String: FHIRPrepared]
    let locations: [String: (step: String, item: String?)]
    /// The asked items in document order.
    let order: [String]
    /// Every item by linkId: its FHIR type types `{"answer": X}`, its parents place it.
    let index: FHIRItemIndex
    /// The repeating groups: how an item inside one is read from where the expression is.
    var blocks = FHIRBlocks()

    /// A FHIRPath expression or variable translated: the StepKit expression and what it gives.
    struct Value {
        enum Kind: Equatable {
            case number, boolean, string, other
            /// A choice question's answer (`answer.value.code`, `answer.value` of string options):
            /// compared with a string, it selects an option.
            case code
            /// `{}`: fits any kind.
            case null
        }

        let json: JSON
        let kind: Kind
        /// The text of a string literal (a variable holding an extension's URL).
        var literal: String?
        /// May be FHIRPath's empty (an answer, a function of one, `{}`).
        var mayBeEmpty = false
        /// False here where FHIRPath gives empty (a comparison with an empty side).
        var emptyAsFalse = false
        /// The item whose answer this is (`answer.value` of X), for `ordinal()` and `.code`.
        var answerOf: String? = nil
        /// For a comparison that is false here where FHIRPath is empty: the condition that it is
        /// not empty (its operands have values), so that its negation can say "defined and not".
        var defined: JSON? = nil
    }

    /// The expression of an item's extension `url` (a calculatedExpression or an
    /// enableWhenExpression), with where it is.
    static func expression(of item: FHIRItem, url: String = url) -> (text: String, path: JSONPath)? {
        guard let e = FHIRExtension.find(url, in: item.extensions),
              let v = e.object["valueExpression"]?.objectValue, let text = v["expression"]?.stringValue else { return nil }
        return (text, item.path.key("extension").index(e.index))
    }

    /// The calculation for a calculatedExpression, or nil when the FHIRPath is outside the subset.
    func translate(_ fhirpath: String, variables: [String: Value] = [:], context: String? = nil) -> JSON? {
        guard let value = translateValue(fhirpath, variables: variables, context: context), value.kind != .null,
              value.kind != .code, !(value.kind == .boolean && value.emptyAsFalse) else { return nil }
        return value.json
    }

    /// The condition for an enableWhenExpression: a boolean (empty reads as false, as SDC says
    /// an expression that is not true leaves the item disabled), or nil.
    func condition(_ fhirpath: String, variables: [String: Value], context: String?) -> JSON? {
        guard let value = translateValue(fhirpath, variables: variables, context: context), value.kind == .boolean else { return nil }
        return value.json
    }

    /// A variable's or an expression's translation, or nil. The tree is at most
    /// `FHIRPathNode.maxTreeDepth` deep, which bounds the recursion of `value`; a translation
    /// past the expression language's bounds is nil too, so a chain of variables, each reading
    /// the one before, cannot build a value deeper than that (nor one whose release recurses).
    /// `context` is the item the expression is on (nil: the Questionnaire), which `item` reads.
    func translateValue(_ fhirpath: String, variables: [String: Value], context: String? = nil) -> Value? {
        guard let node = FHIRPathNode.parse(fhirpath), let value = value(node, variables, context),
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

    /// The translation of `node`. `depth` counts the levels of the walk that wrap their operand
    /// in a level of the result (a function, `iif`, `exists()`, `not()`): a result may be at most
    /// `ExpressionLimits.maxDepth` deep, so past that many the walk stops (nil). Operators do not
    /// count (a chain `a + b + c` is one level of the result), and the tree bounds them
    /// (`FHIRPathNode.maxTreeDepth`), so the walk fits a 256 KiB stack even unoptimised.
    ///
    /// The recursion runs value → one case's function → value. `value` keeps no locals and each
    /// case's function only its own, so that an unoptimised (debug) build's frames stay small.
    private func value(_ node: FHIRPathNode, _ variables: [String: Value], _ context: String?, depth: Int = 0) -> Value? {
        guard depth < ExpressionLimits.maxDepth else { return nil }
        switch node {
        case .binary(let op, let a, let b):
            return binaryNode(op, a, b, variables, context, depth: depth)
        case .invocation(let base, let name, let arguments):
            return invocationNode(node, base, name, arguments, variables, context, depth: depth + 1)
        default:
            return FHIRCalculations.leaf(node, variables)
        }
    }

    private static func leaf(_ node: FHIRPathNode, _ variables: [String: Value]) -> Value? {
        switch node {
        case .number(let d): return Value(json: .number(d), kind: .number)
        case .boolean(let b): return Value(json: .bool(b), kind: .boolean)
        case .string(let s): return Value(json: .string(s), kind: .string, literal: s)
        case .empty: return Value(json: .null, kind: .null, mayBeEmpty: true)
        case .variable(let name): return variables[name]
        default: return nil
        }
    }

    @inline(never)
    private func binaryNode(_ op: String, _ a: FHIRPathNode, _ b: FHIRPathNode, _ variables: [String: Value], _ context: String?,
                            depth: Int) -> Value? {
        guard let x = value(a, variables, context, depth: depth), let y = value(b, variables, context, depth: depth) else { return nil }
        return binary(op, x, y)
    }

    @inline(never)
    private func invocationNode(_ node: FHIRPathNode, _ base: FHIRPathNode?, _ name: String, _ arguments: [FHIRPathNode]?,
                                _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
        switch (base, arguments) {
        case (nil, let arguments?) where name == "iif" && (arguments.count == 2 || arguments.count == 3):
            return iif(arguments, variables, context, depth: depth)
        case (let base?, let arguments?) where arguments.isEmpty && (name == "exists" || name == "empty"):
            return existence(name == "exists", base, variables, context, depth: depth)
        case (let base?, let arguments?) where arguments.isEmpty && name == "not":
            return negation(base, variables, context, depth: depth)
        case (let base?, let arguments?) where FHIRCalculations.functions[name] != nil:
            return function(name, base, arguments, variables, context, depth: depth)
        default:
            return pathOrScore(node, variables, context, depth: depth)
        }
    }

    /// A path into the response or the Questionnaire (an answer, a score, an aggregate over
    /// repetitions). Out of line, so that `invocationNode`'s frame stays as small as it was.
    @inline(never)
    private func pathOrScore(_ node: FHIRPathNode, _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
        if case .invocation(let base?, let name, let arguments?) = node, arguments.isEmpty, name == "count" || name == "sum",
           let aggregate = overRepetitions(name, base) {
            return aggregate
        }
        return path(node, context) ?? score(node, variables, context, depth: depth)
    }

    @inline(never)
    private func iif(_ arguments: [FHIRPathNode], _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
        guard let c = value(arguments[0], variables, context, depth: depth), c.kind == .boolean || c.kind == .null,
              let a = value(arguments[1], variables, context, depth: depth) else { return nil }
        let b = arguments.count == 3 ? value(arguments[2], variables, context, depth: depth) : Value(json: .null, kind: .null, mayBeEmpty: true)
        guard let b, a.kind != .code, b.kind != .code, let kind = FHIRCalculations.common(a.kind, b.kind) else { return nil }
        return Value(json: .object(["if": .array([c.json, a.json, b.json])]), kind: kind,
                     mayBeEmpty: a.mayBeEmpty || b.mayBeEmpty, emptyAsFalse: a.emptyAsFalse || b.emptyAsFalse)
    }

    @inline(never)
    private func existence(_ exists: Bool, _ base: FHIRPathNode, _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
        guard let x = value(base, variables, context, depth: depth), !x.emptyAsFalse else { return nil }
        let count = JSON.object(["count": .array([x.json])])
        return Value(json: .object(["==": .array([count, .int(exists ? 1 : 0)])]), kind: .boolean)
    }

    @inline(never)
    private func negation(_ base: FHIRPathNode, _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
        guard let x = value(base, variables, context, depth: depth), x.kind == .boolean, !x.emptyAsFalse || x.defined != nil else { return nil }
        if x.emptyAsFalse, let defined = x.defined {
            // Empty stays empty (false here): defined, and not.
            return Value(json: .object(["and": .array([defined, .object(["not": .array([x.json])])])]), kind: .boolean,
                         mayBeEmpty: true, emptyAsFalse: true, defined: defined)
        }
        // The negation of an empty boolean is empty: `x = false` is false for null, as
        // FHIRPath's empty reads in a condition.
        if x.mayBeEmpty { return Value(json: .object(["==": .array([x.json, .bool(false)])]), kind: .boolean, mayBeEmpty: true, emptyAsFalse: true) }
        return Value(json: .object(["not": .array([x.json])]), kind: .boolean)
    }

    /// The functions on strings and numbers: the kind of the input, the kinds of the arguments
    /// (the last ones optional from `optional` on) and the result's kind.
    private static let functions: [String: (input: Value.Kind, arguments: [Value.Kind], optional: Int, result: Value.Kind)] = [
        "ln": (.number, [], 0, .number), "exp": (.number, [], 0, .number), "sqrt": (.number, [], 0, .number),
        "abs": (.number, [], 0, .number), "truncate": (.number, [], 0, .number), "power": (.number, [.number], 1, .number),
        "upper": (.string, [], 0, .string), "lower": (.string, [], 0, .string), "length": (.string, [], 0, .number),
        "substring": (.string, [.number, .number], 1, .string), "startsWith": (.string, [.string], 1, .boolean),
        "contains": (.string, [.string], 1, .boolean), "replace": (.string, [.string, .string], 2, .string),
        "round": (.number, [.number], 0, .number), "ordinal": (.other, [], 0, .number), "weight": (.other, [], 0, .number),
    ]

    @inline(never)
    private func function(_ name: String, _ base: FHIRPathNode, _ arguments: [FHIRPathNode], _ variables: [String: Value],
                          _ context: String?, depth: Int) -> Value? {
        guard let signature = FHIRCalculations.functions[name], arguments.count >= signature.optional,
              arguments.count <= signature.arguments.count, let x = value(base, variables, context, depth: depth) else { return nil }
        if name == "ordinal" || name == "weight" {
            // SDC's ordinal() of an answer: its option's score.
            guard let linkId = x.answerOf, prepared[linkId]?.choices?.contains(where: { $0.score != nil }) == true,
                  let sel = FHIRCalculations.answerSelector(x) else { return nil }
            return Value(json: .object(["score": sel]), kind: .number, mayBeEmpty: true)
        }
        guard x.kind == signature.input || x.kind == .null else { return nil }
        if name == "round" {
            // The digits must be a literal 0…6 (the expression language's `round`).
            var digits = 0.0
            if let first = arguments.first {
                guard case .number(let d) = first, d == d.rounded(), d >= 0, d <= 6 else { return nil }
                digits = d
            }
            return Value(json: .object(["round": .array([x.json, .number(digits)])]), kind: .number, mayBeEmpty: true)
        }
        var operands = [x.json]
        for (i, argument) in arguments.enumerated() {
            guard let a = value(argument, variables, context, depth: depth), a.kind == signature.arguments[i] || a.kind == .null else { return nil }
            operands.append(a.json)
        }
        return Value(json: .object([name: .array(operands)]), kind: signature.result, mayBeEmpty: true)
    }

    private static func common(_ a: Value.Kind, _ b: Value.Kind) -> Value.Kind? {
        if a == .null { return b }
        if b == .null || a == b { return a }
        return nil
    }

    private static let operators: [String: String] = ["=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
                                                      "+": "+", "-": "-", "*": "*", "/": "/", "and": "and", "or": "or",
                                                      "&": "concat"]

    private func binary(_ op: String, _ x: Value, _ y: Value) -> Value? {
        guard let name = FHIRCalculations.operators[op] else { return nil }
        let kind: Value.Kind
        var emptyAsFalse = false
        switch op {
        case "+", "-", "*", "/":
            guard [.number, .null].contains(x.kind), [.number, .null].contains(y.kind) else { return nil }
            kind = .number
        case "&":
            // FHIRPath's `&` reads an empty operand as '' and is never empty; so is `concat`.
            guard [.string, .null].contains(x.kind), [.string, .null].contains(y.kind) else { return nil }
            kind = .string
        case "and", "or":
            guard [.boolean, .null].contains(x.kind), [.boolean, .null].contains(y.kind) else { return nil }
            kind = .boolean
            emptyAsFalse = x.mayBeEmpty || y.mayBeEmpty || x.emptyAsFalse || y.emptyAsFalse
        default:
            if x.kind == .code || y.kind == .code { return code(op, x, y) }
            guard !x.emptyAsFalse, !y.emptyAsFalse, let k = FHIRCalculations.common(x.kind, y.kind), k != .other, k != .null,
                  op == "=" || op == "!=" || k != .boolean else { return nil }
            kind = .boolean
            emptyAsFalse = x.mayBeEmpty || y.mayBeEmpty
        }
        // `a + b + c` (and `&`, `and`, `or`, `*`) as one operator with every operand, not nested.
        var operands = [y.json]
        if ["+", "*", "and", "or", "&"].contains(op), case .object(let o) = x.json, o.count == 1, let list = o[name]?.arrayValue {
            operands = list + operands
        } else {
            operands.insert(x.json, at: 0)
        }
        let mayBeEmpty = kind != .string && (x.mayBeEmpty || y.mayBeEmpty)
        var defined: JSON?
        if emptyAsFalse, op != "and", op != "or" {
            // A comparison is empty exactly when an operand is.
            defined = .object(["==": .array([.object(["count": .array([x.json, y.json])]), .int(2)])])
        }
        return Value(json: .object([name: .array(operands)]), kind: kind, mayBeEmpty: mayBeEmpty || emptyAsFalse,
                     emptyAsFalse: emptyAsFalse, defined: defined)
    }

    /// A choice question's answer compared with a string with `=` or `!=`: whether the option
    /// with that code (or string value) is the one selected. A question that repeats is a
    /// collection in FHIRPath, which `=` compares whole: not translated.
    private func code(_ op: String, _ x: Value, _ y: Value) -> Value? {
        let (answer, other) = x.kind == .code ? (x, y) : (y, x)
        guard op == "=" || op == "!=", let linkId = answer.answerOf, let item = index.items[linkId], !item.repeats,
              let text = other.literal, let choices = prepared[linkId]?.choices, let sel = FHIRCalculations.answerSelector(answer) else { return nil }
        let match = choices.first { c in
            c.kind == "Coding" ? c.coding?.objectValue?["code"]?.stringValue == text : (c.kind == "String" && c.value.stringValue == text)
        }
        guard let match else {
            // No option has it: `=` never holds, `!=` holds once the question is answered.
            return op == "=" ? Value(json: .bool(false), kind: .boolean, mayBeEmpty: true, emptyAsFalse: true, defined: .object(["answered": sel]))
                             : Value(json: .object(["answered": sel]), kind: .boolean, mayBeEmpty: true, emptyAsFalse: true, defined: .object(["answered": sel]))
        }
        let compared = JSON.object([op == "=" ? "==" : "!=": .array([.object(["answer": sel]), match.value])])
        return Value(json: compared, kind: .boolean, mayBeEmpty: true, emptyAsFalse: true, defined: .object(["answered": sel]))
    }

    // MARK: Paths

    /// The selector an answer's value reads (`{"answer": SEL}`'s SEL), as it was read where the
    /// expression is. Out of line: inlined, its temporaries would widen `function`'s frame,
    /// which the translation recurses through.
    @inline(never)
    private static func answerSelector(_ value: Value) -> JSON? {
        guard case .object(let o) = value.json else { return nil }
        return o["answer"]
    }

    /// The selector of `linkId`'s answer read on `context` (`FHIRBlocks`: inside a repeating
    /// group, its repetition's).
    private func selector(_ linkId: String, _ context: String?) -> JSON? {
        guard let loc = locations[linkId] else { return nil }
        return blocks.selector(linkId, location: loc, context: context)
    }

    private func kind(of linkId: String) -> Value.Kind {
        switch index.items[linkId]?.type {
        case "integer", "decimal": return .number
        case "boolean": return .boolean
        case "string", "text", "url": return prepared[linkId]?.choices == nil ? .string : .other
        default: return .other
        }
    }

    /// The linkIds an expression names in `where(linkId = 'X')` filters, in order (an explicit
    /// stack: no recursion).
    static func linkIds(in fhirpath: String) -> [String] {
        guard let root = FHIRPathNode.parse(fhirpath) else { return [] }
        var found: [String] = []
        var stack = [root]
        while let node = stack.popLast() {
            switch node {
            case .binary(_, let a, let b):
                stack.append(b)
                stack.append(a)
            case .invocation(let base, let name, let arguments):
                if name == "where", let x = linkIdFilter(arguments) { found.append(x) }
                stack += (arguments ?? []).reversed()
                if let base { stack.append(base) }
            default:
                break
            }
        }
        return found
    }

    /// `linkId = 'X'` (either way round) as the argument list of a `where`.
    private static func linkIdFilter(_ arguments: [FHIRPathNode]?) -> String? {
        guard let arguments, arguments.count == 1, case .binary("=", let a, let b) = arguments[0] else { return nil }
        switch (a, b) {
        case (.invocation(nil, "linkId", nil), .string(let x)), (.string(let x), .invocation(nil, "linkId", nil)): return x
        default: return nil
        }
    }

    typealias Steps = ArraySlice<(name: String, arguments: [FHIRPathNode]?)>

    /// How deep an item is: 1 at the top level.
    private func depth(_ linkId: String) -> Int { index.ancestors(of: linkId).count + 1 }

    /// `item.where(linkId='X')` (X top-level), `item.item.where(linkId='X')` (X one level down,
    /// ...) or `repeat(item).where(linkId='X')` at the front of `steps`: X and the steps after
    /// it. X may be a linkId no item has (FHIRPath's empty).
    @inline(never)
    private func item(_ steps: Steps) -> (linkId: String, rest: Steps)? {
        if let first = steps.first, first.name == "repeat", first.arguments == [.invocation(base: nil, name: "item", arguments: nil)],
           steps.dropFirst().first?.name == "where", let linkId = FHIRCalculations.linkIdFilter(steps.dropFirst().first?.arguments) {
            return (linkId, steps.dropFirst(2))
        }
        // `item.where(linkId='G').item.where(linkId='X')`: each filter names the item one level
        // below the one before (the first a top-level item).
        var rest = steps
        var parent: String?
        var chained = 0
        while rest.count >= 2, let first = rest.first, first.name == "item", first.arguments == nil,
              rest.dropFirst().first?.name == "where", let x = FHIRCalculations.linkIdFilter(rest.dropFirst().first?.arguments),
              index.items[x] != nil, index.parents[x] == parent {
            (parent, rest, chained) = (x, rest.dropFirst(2), chained + 1)
        }
        if chained >= 2, let parent { return (parent, rest) }
        let levels = steps.prefix { $0.name == "item" && $0.arguments == nil }.count
        let after = steps.dropFirst(levels)
        guard levels >= 1, after.first?.name == "where", let linkId = FHIRCalculations.linkIdFilter(after.first?.arguments),
              index.items[linkId] == nil || depth(linkId) == levels else { return nil }
        return (linkId, after.dropFirst())
    }

    private static func names(_ steps: Steps) -> [String] {
        steps.map { $0.arguments == nil ? $0.name : $0.name + "()" }
    }

    /// The paths into `%resource` (or, from `item`, into the context item): an item's answer,
    /// and SDC's sum of ordinal values.
    private func path(_ node: FHIRPathNode, _ context: String?) -> Value? {
        let (start, steps) = node.chain
        let linkId: String, rest: Steps
        if start == .variable("resource") {
            if FHIRCalculations.names(steps[...]) == ["answers()", "value", "ordinal()", "sum()"] {
                let scored = order.filter { id in prepared[id]?.choices?.contains { $0.score != nil } == true }
                // An item of a repeating group: every repetition's score (an aggregate).
                let parts = scored.compactMap { id in selector(id, context).map { sel in blocks.everyRepetition(id, sel, of: "score") } }
                return parts.isEmpty ? nil : Value(json: .object(["sum": .array(parts)]), kind: .number)
            }
            guard let found = item(steps[...]) else { return nil }
            (linkId, rest) = found
        } else if start == .invocation(base: nil, name: "item", arguments: nil), steps.first?.name == "where",
                  let x = FHIRCalculations.linkIdFilter(steps.first?.arguments) {
            // `item` read on the context item: its children (the Questionnaire's: the top level).
            guard index.items[x] == nil || index.parents[x] == context else { return nil }
            (linkId, rest) = (x, steps.dropFirst())
        } else {
            return nil
        }
        let names = FHIRCalculations.names(rest)
        guard names.first == "answer", names.count >= 2, names[1] == "value" else { return nil }
        // A linkId no item has: the empty collection.
        guard index.items[linkId] != nil else { return names.count <= 3 ? Value(json: .null, kind: .null, mayBeEmpty: true) : nil }
        guard let sel = selector(linkId, context) else { return nil }
        let answer = JSON.object(["answer": sel])
        let choices = prepared[linkId]?.choices
        switch names.dropFirst(2) {
        case []:
            if let choices, choices.allSatisfy({ $0.kind == "String" }) {
                return Value(json: answer, kind: .code, mayBeEmpty: true, answerOf: linkId)
            }
            return Value(json: answer, kind: kind(of: linkId), mayBeEmpty: true, answerOf: linkId)
        case ["code"]:
            guard let choices, choices.allSatisfy({ $0.kind == "Coding" }) else { return nil }
            return Value(json: answer, kind: .code, mayBeEmpty: true, answerOf: linkId)
        default:
            return nil
        }
    }

    /// `count()` and `sum()` over the repetitions of a repeating group G, read from
    /// `%resource` (which holds every repetition, wherever the expression is):
    /// - `%resource.item.where(linkId='G').count()`: how many repetitions the response has, the
    ///   instances where one of G's questions is answered (a repetition with no answer is not in
    ///   the response) → `{"count": {"over": G, "where": {"any": [answered...]}}}`;
    /// - `...where(linkId='X').answer.value.sum()` / `.count()`, X a number question of G that
    ///   does not repeat: every repetition's answer added, or counted
    ///   → `{"sum": {"over": G, "of": {"answer": X}}}` (nulls left out, 0 over none, as
    ///   FHIRPath's `sum()` of an empty collection).
    /// Anything else is not translated.
    @inline(never)
    private func overRepetitions(_ name: String, _ base: FHIRPathNode) -> Value? {
        let (start, steps) = base.chain
        guard start == .variable("resource"), let (linkId, rest) = item(steps[...]) else { return nil }
        let names = FHIRCalculations.names(rest)
        if names.isEmpty, name == "count", blocks.isRepeatingGroup(linkId), let over = blocks.reference(linkId, locations: locations) {
            let asked = order.filter { blocks.scope(of: $0) == linkId }
            let answered = asked.compactMap { id in selector(id, linkId).map { JSON.object(["answered": $0]) } }
            guard !answered.isEmpty else { return nil }
            let which = answered.count == 1 ? answered[0] : .object(["any": .array(answered)])
            return Value(json: .object(["count": .object(["over": over, "where": which])]), kind: .number)
        }
        guard names == ["answer", "value"], let group = blocks.scope(of: linkId), group != linkId, index.items[linkId]?.repeats != true,
              let over = blocks.reference(group, locations: locations), let sel = selector(linkId, group) else { return nil }
        if name == "count" {
            return Value(json: .object(["count": .object(["over": over, "where": .object(["answered": sel])])]), kind: .number)
        }
        guard kind(of: linkId) == .number else { return nil }
        return Value(json: .object(["sum": .object(["over": over, "of": .object(["answer": sel])])]), kind: .number)
    }

    /// The score of the option chosen for an item, read from `%questionnaire` (see above).
    private func score(_ node: FHIRPathNode, _ variables: [String: Value], _ context: String?, depth: Int) -> Value? {
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
              let url = value(u, variables, context, depth: depth)?.literal, url == FHIRExtension.ordinalValue || url == FHIRExtension.itemWeight,
              prepared[linkId]?.choices?.contains(where: { $0.score != nil }) == true,
              let sel = selector(linkId, context) else { return nil }
        return Value(json: .object(["score": sel]), kind: .number, mayBeEmpty: true)
    }
}
