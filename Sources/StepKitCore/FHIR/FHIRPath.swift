import StepKitBase

/// A FHIRPath expression read into a tree, for the importer to recognise what it can translate
/// (`FHIRCalculations`). It reads the grammar's operators that the SDC forms' calculations use —
/// `or`, `and`, `=`, `!=`, `<`, `<=`, `>`, `>=`, `+`, `-`, `&`, `*`, `/`, invocations `.name` and
/// `.name(args)`, function calls `name(args)`, `%variables`, literals (numbers, `'strings'`,
/// `true`, `false`, `{}`) and parentheses — and refuses everything else (nil), which the importer
/// then reports. Nothing here evaluates anything.
///
/// Bounded: at most `maxLength` characters, `maxDepth` levels of parentheses and arguments (the
/// parser's own recursion) and `maxTreeDepth` levels in the tree it builds, checked as each node
/// is built (a chain `1 + 1 + ...` deepens the tree by one an operand), so every walk of a tree,
/// its release included, fits a small stack.
indirect enum FHIRPathNode: Equatable, Sendable {
    case number(Double)
    case string(String)
    case boolean(Bool)
    /// `{}`: the empty collection.
    case empty
    /// `%name`.
    case variable(String)
    /// `name` or `name(args)` at the start of a path (`base` nil), or `.name` / `.name(args)`
    /// after one; `arguments` is nil for a member, not a call.
    case invocation(base: FHIRPathNode?, name: String, arguments: [FHIRPathNode]?)
    case binary(String, FHIRPathNode, FHIRPathNode)

    static let maxLength = 8_192
    static let maxDepth = 32
    static let maxTreeDepth = 64

    /// The tree of `text`, or nil when it is not in the grammar above or passes a bound.
    static func parse(_ text: String) -> FHIRPathNode? {
        guard text.unicodeScalars.count <= maxLength, let tokens = FHIRPathToken.scan(text) else { return nil }
        var parser = FHIRPathParser(tokens: tokens)
        guard let (node, _) = parser.expression(depth: 0), parser.atEnd else { return nil }
        return node
    }

    /// A path as its start and the invocations after it: `%resource.item.where(x)` is
    /// `(%resource, [("item", nil), ("where", [x])])`.
    var chain: (start: FHIRPathNode, steps: [(name: String, arguments: [FHIRPathNode]?)]) {
        var steps: [(name: String, arguments: [FHIRPathNode]?)] = []
        var node = self
        while case .invocation(let base?, let name, let arguments) = node {
            steps.append((name, arguments))
            node = base
        }
        return (node, steps.reversed())
    }
}

/// The tokens of a FHIRPath expression.
enum FHIRPathToken: Equatable {
    case identifier(String)
    case variable(String)
    case string(String)
    case number(Double)
    /// Punctuation and operators: `( ) . , { } = != < <= > >= + - & * /`.
    case symbol(String)

    /// The tokens of `text`, or nil at anything outside the subset.
    static func scan(_ text: String) -> [FHIRPathToken]? {
        let chars = Array(text.unicodeScalars)
        var tokens: [FHIRPathToken] = []
        var i = 0
        func isNameStart(_ c: Unicode.Scalar) -> Bool { c == "_" || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
        func isName(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || (c >= "0" && c <= "9") }
        func name(from start: Int) -> (String, Int) {
            var j = start
            var s = ""
            while j < chars.count, isName(chars[j]) { s.unicodeScalars.append(chars[j]); j += 1 }
            return (s, j)
        }
        func quoted(from start: Int, _ quote: Unicode.Scalar) -> (String, Int)? {
            var j = start + 1
            var s = ""
            while j < chars.count {
                let c = chars[j]
                if c == quote { return (s, j + 1) }
                if c == "\\" {
                    guard j + 1 < chars.count else { return nil }
                    switch chars[j + 1] {
                    case "n": s += "\n"
                    case "t": s += "\t"
                    case "r": s += "\r"
                    case "'", "\"", "`", "\\", "/": s.unicodeScalars.append(chars[j + 1])
                    default: return nil
                    }
                    j += 2
                    continue
                }
                s.unicodeScalars.append(c)
                j += 1
            }
            return nil
        }
        while i < chars.count {
            let c = chars[i]
            if c == " " || c == "\n" || c == "\t" || c == "\r" { i += 1; continue }
            if isNameStart(c) {
                let (s, j) = name(from: i)
                tokens.append(.identifier(s))
                i = j
            } else if c == "`" {
                guard let (s, j) = quoted(from: i, "`") else { return nil }
                tokens.append(.identifier(s))
                i = j
            } else if c == "%" {
                guard i + 1 < chars.count else { return nil }
                if chars[i + 1] == "'" || chars[i + 1] == "`" {
                    guard let (s, j) = quoted(from: i + 1, chars[i + 1]) else { return nil }
                    tokens.append(.variable(s))
                    i = j
                } else {
                    let (s, j) = name(from: i + 1)
                    guard !s.isEmpty else { return nil }
                    tokens.append(.variable(s))
                    i = j
                }
            } else if c == "'" {
                guard let (s, j) = quoted(from: i, "'") else { return nil }
                tokens.append(.string(s))
                i = j
            } else if c >= "0" && c <= "9" {
                var j = i
                var s = ""
                while j < chars.count, (chars[j] >= "0" && chars[j] <= "9") || (chars[j] == "." && j + 1 < chars.count && chars[j + 1] >= "0" && chars[j + 1] <= "9") {
                    s.unicodeScalars.append(chars[j])
                    j += 1
                }
                guard s.count <= 30, let d = Double(s), d.isFinite else { return nil }
                tokens.append(.number(d))
                i = j
            } else {
                let two = i + 1 < chars.count ? String(c) + String(chars[i + 1]) : ""
                if two == "!=" || two == "<=" || two == ">=" {
                    tokens.append(.symbol(two))
                    i += 2
                } else if "().,{}=<>+-*/&".unicodeScalars.contains(c) {
                    tokens.append(.symbol(String(c)))
                    i += 1
                } else {
                    return nil
                }
            }
        }
        return tokens
    }
}

/// Recursive descent over the tokens, one function per precedence level (lowest first). Every
/// function takes the nesting depth and refuses past `FHIRPathNode.maxDepth`, and returns the
/// node with the depth of its tree, refusing past `FHIRPathNode.maxTreeDepth`.
struct FHIRPathParser {
    typealias Built = (node: FHIRPathNode, depth: Int)

    let tokens: [FHIRPathToken]
    private var position = 0

    init(tokens: [FHIRPathToken]) { self.tokens = tokens }

    var atEnd: Bool { position >= tokens.count }

    private var next: FHIRPathToken? { position < tokens.count ? tokens[position] : nil }

    private mutating func take(_ symbol: String) -> Bool {
        guard next == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func takeKeyword(_ word: String) -> Bool {
        guard next == .identifier(word) else { return false }
        position += 1
        return true
    }

    /// `node` with its tree's depth, or nil past `maxTreeDepth`.
    private static func built(_ node: FHIRPathNode, depth: Int) -> Built? {
        depth <= FHIRPathNode.maxTreeDepth ? (node, depth) : nil
    }

    mutating func expression(depth: Int) -> Built? {
        guard depth < FHIRPathNode.maxDepth else { return nil }
        return binary(level: 0, depth: depth)
    }

    /// The binary operators by precedence, lowest first: `or`, `and`, equality, ordering,
    /// additive (with `&`, FHIRPath's string concatenation), multiplicative.
    private static let levels: [[String]] = [["or"], ["and"], ["=", "!="], ["<", "<=", ">", ">="], ["+", "-", "&"], ["*", "/"]]

    private mutating func binary(level: Int, depth: Int) -> Built? {
        guard level < FHIRPathParser.levels.count else { return invocation(depth: depth) }
        guard var left = binary(level: level + 1, depth: depth) else { return nil }
        while let op = FHIRPathParser.levels[level].first(where: { $0.first?.isLetter == true ? takeKeyword($0) : take($0) }) {
            guard let right = binary(level: level + 1, depth: depth),
                  let joined = FHIRPathParser.built(.binary(op, left.node, right.node), depth: max(left.depth, right.depth) + 1) else { return nil }
            left = joined
        }
        return left
    }

    private mutating func invocation(depth: Int) -> Built? {
        guard var built = term(depth: depth) else { return nil }
        while take(".") {
            guard case .identifier(let name)? = next else { return nil }
            position += 1
            guard let (arguments, argumentDepth) = arguments(depth: depth),
                  let next = FHIRPathParser.built(.invocation(base: built.node, name: name, arguments: arguments),
                                                  depth: max(built.depth, argumentDepth) + 1) else { return nil }
            built = next
        }
        return built
    }

    /// A call's `(args)` if one follows: nil arguments for a member; the deepest argument's
    /// depth. Nil when malformed.
    private mutating func arguments(depth: Int) -> (arguments: [FHIRPathNode]?, depth: Int)? {
        guard take("(") else { return (nil, 0) }
        var list: [FHIRPathNode] = []
        var deepest = 0
        if take(")") { return (list, 0) }
        repeat {
            guard let argument = expression(depth: depth + 1) else { return nil }
            list.append(argument.node)
            deepest = max(deepest, argument.depth)
        } while take(",")
        return take(")") ? (list, deepest) : nil
    }

    private mutating func term(depth: Int) -> Built? {
        guard let token = next else { return nil }
        position += 1
        switch token {
        case .number(let d): return (.number(d), 1)
        case .string(let s): return (.string(s), 1)
        case .variable(let name): return (.variable(name), 1)
        case .identifier("true"): return (.boolean(true), 1)
        case .identifier("false"): return (.boolean(false), 1)
        case .identifier(let name):
            guard let (arguments, argumentDepth) = arguments(depth: depth) else { return nil }
            return FHIRPathParser.built(.invocation(base: nil, name: name, arguments: arguments), depth: argumentDepth + 1)
        case .symbol("("):
            guard let inner = expression(depth: depth + 1), take(")") else { return nil }
            return inner
        case .symbol("{"):
            return take("}") ? (.empty, 1) : nil
        case .symbol("-"):
            guard case .number(let d)? = next else { return nil }
            position += 1
            return (.number(-d), 1)
        default:
            return nil
        }
    }
}
