/// A FHIRPath expression read into a tree, for the importer to recognise what it can translate
/// (`FHIRCalculations`). It reads the grammar's operators that the SDC forms' calculations use —
/// `or`, `and`, `=`, `!=`, `<`, `<=`, `>`, `>=`, `+`, `-`, `*`, `/`, invocations `.name` and
/// `.name(args)`, function calls `name(args)`, `%variables`, literals (numbers, `'strings'`,
/// `true`, `false`, `{}`) and parentheses — and refuses everything else (nil), which the importer
/// then reports. Nothing here evaluates anything.
///
/// Bounded: at most `maxLength` characters and `maxDepth` levels of nesting, so the recursive
/// descent (and every walk of the tree) fits a small stack.
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

    /// The tree of `text`, or nil when it is not in the grammar above or passes a bound.
    static func parse(_ text: String) -> FHIRPathNode? {
        guard text.unicodeScalars.count <= maxLength, let tokens = FHIRPathToken.scan(text) else { return nil }
        var parser = FHIRPathParser(tokens: tokens)
        guard let node = parser.expression(depth: 0), parser.atEnd else { return nil }
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
    /// Punctuation and operators: `( ) . , { } = != < <= > >= + - * /`.
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
                } else if "().,{}=<>+-*/".unicodeScalars.contains(c) {
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
/// function takes the depth and refuses past `FHIRPathNode.maxDepth`.
struct FHIRPathParser {
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

    mutating func expression(depth: Int) -> FHIRPathNode? {
        guard depth < FHIRPathNode.maxDepth else { return nil }
        return binary(level: 0, depth: depth)
    }

    /// The binary operators by precedence, lowest first: `or`, `and`, equality, ordering,
    /// additive, multiplicative.
    private static let levels: [[String]] = [["or"], ["and"], ["=", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/"]]

    private mutating func binary(level: Int, depth: Int) -> FHIRPathNode? {
        guard level < FHIRPathParser.levels.count else { return invocation(depth: depth) }
        guard var left = binary(level: level + 1, depth: depth) else { return nil }
        while let op = FHIRPathParser.levels[level].first(where: { $0.first?.isLetter == true ? takeKeyword($0) : take($0) }) {
            guard let right = binary(level: level + 1, depth: depth) else { return nil }
            left = .binary(op, left, right)
        }
        return left
    }

    private mutating func invocation(depth: Int) -> FHIRPathNode? {
        guard var node = term(depth: depth) else { return nil }
        while take(".") {
            guard case .identifier(let name)? = next else { return nil }
            position += 1
            switch arguments(depth: depth) {
            case .member: node = .invocation(base: node, name: name, arguments: nil)
            case .call(let list): node = .invocation(base: node, name: name, arguments: list)
            case .malformed: return nil
            }
        }
        return node
    }

    private enum Arguments {
        case member
        case call([FHIRPathNode])
        case malformed
    }

    /// A call's `(args)` if one follows.
    private mutating func arguments(depth: Int) -> Arguments {
        guard take("(") else { return .member }
        var list: [FHIRPathNode] = []
        if take(")") { return .call(list) }
        repeat {
            guard let argument = expression(depth: depth + 1) else { return .malformed }
            list.append(argument)
        } while take(",")
        return take(")") ? .call(list) : .malformed
    }

    private mutating func term(depth: Int) -> FHIRPathNode? {
        guard let token = next else { return nil }
        position += 1
        switch token {
        case .number(let d): return .number(d)
        case .string(let s): return .string(s)
        case .variable(let name): return .variable(name)
        case .identifier("true"): return .boolean(true)
        case .identifier("false"): return .boolean(false)
        case .identifier(let name):
            switch arguments(depth: depth) {
            case .member: return .invocation(base: nil, name: name, arguments: nil)
            case .call(let list): return .invocation(base: nil, name: name, arguments: list)
            case .malformed: return nil
            }
        case .symbol("("):
            guard let inner = expression(depth: depth + 1), take(")") else { return nil }
            return inner
        case .symbol("{"):
            return take("}") ? .empty : nil
        case .symbol("-"):
            guard case .number(let d)? = next else { return nil }
            position += 1
            return .number(-d)
        default:
            return nil
        }
    }
}
