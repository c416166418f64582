import StepKitBase

/// Evaluates a compiled expression against the answers a lookup shows. It never traps: numbers
/// are `Double`s and a result that is not finite (overflow, `0 / 0`, `x / 0`) is null; dates
/// leave years 0…9999 as null; the walk is as deep as the tree (at most
/// `ExpressionLimits.maxDepth`) and visits each node once.
struct ExpressionEvaluator<Lookup: AnswerLookup> {
    let lookup: Lookup
    /// The calculations' values, read from the lookup once, when first needed.
    private var calculations: [ExpressionValue]?
    /// The instances of repeating blocks the expression is evaluated in (`Instances.swift`).
    var scope: InstanceScope

    init(_ lookup: Lookup, calculations: [ExpressionValue]? = nil, scope: InstanceScope = .none) {
        self.lookup = lookup
        self.calculations = calculations
        self.scope = scope
    }

    /// The value of `expression`. The recursion runs value → apply → one operator family's
    /// function → value: each of these keeps few locals, so that even an unoptimised (debug) build
    /// walks the deepest expression (`ExpressionLimits.maxDepth`) on a 256 KiB thread stack.
    mutating func value(_ expression: Expression) -> ExpressionValue {
        switch expression {
        case .apply(let op, let args):
            return apply(op, args)
        case .round(let x, let digits):
            return rounded(x, digits: digits)
        case .aggregate(let a):
            return aggregate(a)
        case .instanceCalculation(let c):
            return instanceCalculation(c)
        default:
            return leaf(expression)
        }
    }

    /// The value of an expression that has no sub-expression.
    private mutating func leaf(_ expression: Expression) -> ExpressionValue {
        switch expression {
        case .literal(let v):
            return v
        case .answer(let selector, let type, let order):
            if let type { return ExpressionValue.answer(lookup.scopedValue(selector, scope), type, order: order) }
            guard let found = lookup.answer(selector) else { return .null }
            return ExpressionValue.answer(found.value, found.type, order: order)
        case .score(let selector, let table):
            return table.score(of: lookup.scopedValue(selector, scope))
        case .answered(let selector):
            if case .instance(let read) = selector { return .bool(read.value(lookup, scope) != nil) }
            return .bool(lookup.answer(selector) != nil)
        case .calculation(let index):
            if calculations == nil { calculations = lookup.calculationValues() }
            guard let values = calculations, values.indices.contains(index) else { return .null }
            return values[index]
        case .now:
            return .dateTime(milliseconds: lookup.evaluationTime)
        case .today:
            return .date(day: ExpressionEvaluator.day(of: lookup.evaluationTime))
        case .comparison(let comparison):
            return .bool(comparison.evaluate(lookup, in: scope))
        case .round, .apply, .aggregate, .instanceCalculation:
            return value(expression)
        }
    }

    private mutating func rounded(_ x: Expression, digits: Int) -> ExpressionValue {
        guard case .number(let d) = value(x) else { return .null }
        return ExpressionEvaluator.round(d, digits: digits)
    }

    /// The day (since 1970-01-01, UTC) of an instant.
    static func day(of ms: Int64) -> Int64 {
        let perDay = CivilTime.millisecondsPerDay
        return ms >= 0 ? ms / perDay : -((-(ms + 1)) / perDay) - 1
    }

    private static func finite(_ d: Double) -> ExpressionValue {
        d.isFinite ? .number(d) : .null
    }

    static func round(_ d: Double, digits: Int) -> ExpressionValue {
        var scale = 1.0
        for _ in 0..<max(0, min(digits, 6)) { scale *= 10 }
        let scaled = d * scale
        guard scaled.isFinite else { return .null }
        return finite(scaled.rounded(.toNearestOrAwayFromZero) / scale)
    }

    private mutating func numbers(_ args: [Expression]) -> [Double?] {
        var xs: [Double?] = []
        xs.reserveCapacity(args.count)
        for arg in args {
            if case .number(let d) = value(arg) { xs.append(d) } else { xs.append(nil) }
        }
        return xs
    }

    /// Hands an operator to its family's function (one small frame per level of nesting).
    private mutating func apply(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        switch op {
        case .add, .subtract, .multiply, .divide: return arithmetic(op, args)
        case .min, .max, .sum, .avg: return aggregate(op, args)
        case .count, .if, .coalesce: return control(op, args)
        case .concat, .length: return text(op, args)
        case .substring, .upper, .lower, .startsWith, .contains, .replace: return strings(op, args)
        case .ln, .exp, .power, .sqrt, .abs, .truncate: return mathematics(op, args)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: return compare(op, args)
        case .and, .or, .not, .in: return logic(op, args)
        case .daysBetween, .monthsBetween, .yearsBetween: return between(op, args)
        case .addDays, .addMonths, .addYears: return offset(op, args)
        }
    }

    /// `+ - * /`: null when any argument is not a number, when dividing by zero, or when the
    /// result is not finite.
    private mutating func arithmetic(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        let xs = numbers(args)
        guard let first = xs.first, var total = first else { return .null }
        if xs.count == 1 { return op == .subtract ? .number(-total) : .number(total) }
        for x in xs.dropFirst() {
            guard let x else { return .null }
            switch op {
            case .add: total += x
            case .subtract: total -= x
            case .multiply: total *= x
            default:
                if x == 0 { return .null }
                total /= x
            }
        }
        return ExpressionEvaluator.finite(total)
    }

    /// `min max sum avg`: over the arguments that are numbers.
    private mutating func aggregate(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        let xs = numbers(args).compactMap { $0 }
        switch op {
        case .sum: return ExpressionEvaluator.finite(xs.reduce(0, +))
        case .avg: return xs.isEmpty ? .null : ExpressionEvaluator.finite(xs.reduce(0, +) / Double(xs.count))
        case .min: return xs.min().map { .number($0) } ?? .null
        default: return xs.max().map { .number($0) } ?? .null
        }
    }

    /// `count if coalesce`.
    private mutating func control(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        switch op {
        case .count:
            var n = 0
            for arg in args where !value(arg).isNull { n += 1 }
            return .number(Double(n))
        case .if:
            guard args.count == 3 else { return .null }
            return value(args[0]).isTrue ? value(args[1]) : value(args[2])
        default:
            for arg in args {
                let v = value(arg)
                if !v.isNull { return v }
            }
            return .null
        }
    }

    /// `concat length`.
    private mutating func text(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        if op == .length {
            switch args.first.map({ value($0) }) {
            case .string(let s)?: return .number(Double(s.count))
            case .choice(let values, _)?: return .number(Double(values.count))
            default: return .null
            }
        }
        var text = ""
        var scalars = 0
        for arg in args {
            let piece: String
            switch value(arg) {
            case .string(let s): piece = s
            case .number(let d): piece = NumberText.format(d)
            default: continue
            }
            scalars += piece.unicodeScalars.count
            guard scalars <= ExpressionLimits.maxStringLength else { return .null }
            text += piece
        }
        return .string(text)
    }

    /// `substring upper lower startsWith contains replace`, on Unicode scalars: null when an
    /// argument is null, and when a result would pass `ExpressionLimits.maxStringLength` (checked
    /// before it is built). As FHIRPath: `substring` is null when its start is outside the
    /// string and stops at the string's end; `contains` and `startsWith` hold for ""; `replace`
    /// of "" puts the substitution around every scalar.
    private mutating func strings(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        var texts: [String] = []
        var numbers: [Double] = []
        for (i, arg) in args.enumerated() {
            switch value(arg) {
            case .string(let s) where op != .substring || i == 0: texts.append(s)
            case .number(let d) where op == .substring && i > 0: numbers.append(d)
            default: return .null
            }
        }
        guard let subject = texts.first else { return .null }
        switch op {
        case .upper, .lower:
            let result = op == .upper ? subject.uppercased() : subject.lowercased()
            return result.unicodeScalars.count <= ExpressionLimits.maxStringLength ? .string(result) : .null
        case .substring:
            return ExpressionEvaluator.substring(subject, numbers)
        case .startsWith:
            return .bool(subject.unicodeScalars.starts(with: texts[1].unicodeScalars))
        case .contains:
            return .bool(ExpressionEvaluator.find(Array(texts[1].unicodeScalars), in: Array(subject.unicodeScalars), from: 0) != nil)
        default:
            return ExpressionEvaluator.replace(subject, texts[1], texts[2])
        }
    }

    private static func substring(_ s: String, _ numbers: [Double]) -> ExpressionValue {
        let scalars = Array(s.unicodeScalars)
        guard let start = numbers.first, start == start.rounded(), start >= 0, start < Double(scalars.count) else { return .null }
        var end = scalars.count
        if numbers.count > 1 {
            let length = numbers[1]
            guard length == length.rounded() else { return .null }
            end = length <= 0 ? Int(start) : Int(min(Double(scalars.count), start + length))
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars[Int(start)..<end])
        return .string(String(result))
    }

    /// Where `needle` first occurs in `haystack` at or after `from`. The naive scan's work is at
    /// most the two lengths' product, both bounded by the answer limits.
    private static func find(_ needle: [Unicode.Scalar], in haystack: [Unicode.Scalar], from: Int) -> Int? {
        if needle.isEmpty { return from }
        guard haystack.count >= needle.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func replace(_ s: String, _ pattern: String, _ substitution: String) -> ExpressionValue {
        let text = Array(s.unicodeScalars), p = Array(pattern.unicodeScalars), sub = Array(substitution.unicodeScalars)
        var result: [Unicode.Scalar] = []
        func fits(_ extra: Int) -> Bool { result.count + extra <= ExpressionLimits.maxStringLength }
        if p.isEmpty {
            // FHIRPath: 'abc'.replace('', 'x') is 'xaxbxcx'.
            guard text.count + (text.count + 1) * sub.count <= ExpressionLimits.maxStringLength else { return .null }
            result.append(contentsOf: sub)
            for c in text { result.append(c); result.append(contentsOf: sub) }
        } else {
            var i = 0
            while let j = find(p, in: text, from: i) {
                guard fits(j - i + sub.count) else { return .null }
                result.append(contentsOf: text[i..<j])
                result.append(contentsOf: sub)
                i = j + p.count
            }
            guard fits(text.count - i) else { return .null }
            result.append(contentsOf: text[i...])
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: result)
        return .string(String(view))
    }

    /// `ln exp power sqrt abs truncate`: null when an argument is null or the result is not a
    /// finite number (`ln` of 0 or less, `sqrt` of a negative number, `power` overflowing or
    /// with no real result: FHIRPath's empty).
    private mutating func mathematics(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        let xs = numbers(args)
        guard let first = xs.first, let x = first else { return .null }
        switch op {
        case .ln: return x > 0 ? ExpressionEvaluator.finite(Math.log(x)) : .null
        case .exp: return ExpressionEvaluator.finite(Math.exp(x))
        case .sqrt: return x >= 0 ? ExpressionEvaluator.finite(x.squareRoot()) : .null
        case .abs: return .number(Swift.abs(x))
        case .truncate: return .number(x.rounded(.towardZero))
        default:
            guard xs.count == 2, let y = xs[1] else { return .null }
            return ExpressionEvaluator.finite(Math.pow(x, y))
        }
    }

    /// `== != < <= > >=`: false when either side is null or the two do not order.
    private mutating func compare(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        guard args.count == 2 else { return .bool(false) }
        let a = value(args[0]), b = value(args[1])
        if a.isNull || b.isNull { return .bool(false) }
        switch op {
        case .equal: return .bool(ExpressionValue.equal(a, b))
        case .notEqual: return .bool(!ExpressionValue.equal(a, b))
        default:
            guard let o = ExpressionValue.order(a, b) else { return .bool(false) }
            switch op {
            case .less: return .bool(o < 0)
            case .lessOrEqual: return .bool(o <= 0)
            case .greater: return .bool(o > 0)
            default: return .bool(o >= 0)
            }
        }
    }

    /// `and or not in`.
    private mutating func logic(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        switch op {
        case .and:
            for arg in args where !value(arg).isTrue { return .bool(false) }
            return .bool(true)
        case .or:
            for arg in args where value(arg).isTrue { return .bool(true) }
            return .bool(false)
        case .not:
            return .bool(!(args.first.map { value($0).isTrue } ?? false))
        default:
            guard args.count == 2 else { return .bool(false) }
            let needle = value(args[0])
            guard !needle.isNull, case .choice(let chosen, _) = value(args[1]) else { return .bool(false) }
            let json = needle.json
            return .bool(chosen.contains { $0.sameValue(as: json) })
        }
    }

    /// `daysBetween monthsBetween yearsBetween`.
    private mutating func between(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        guard args.count == 2, let from = DateArithmetic.civil(value(args[0])), let to = DateArithmetic.civil(value(args[1])) else { return .null }
        switch op {
        case .daysBetween: return .number(Double(to.day - from.day))
        case .monthsBetween: return .number(Double(DateArithmetic.months(from: from, to: to)))
        default: return .number(Double(DateArithmetic.months(from: from, to: to) / 12))
        }
    }

    /// `addDays addMonths addYears`.
    private mutating func offset(_ op: ExpressionOperator, _ args: [Expression]) -> ExpressionValue {
        guard args.count == 2 else { return .null }
        let base = value(args[0])
        guard case .number(let n) = value(args[1]) else { return .null }
        return DateArithmetic.add(op == .addDays ? .days : (op == .addMonths ? .months : .years), n, to: base)
    }
}

extension Expression {
    /// The expression's value on what `lookup` shows.
    func evaluate(_ lookup: some AnswerLookup, in scope: InstanceScope = .none) -> ExpressionValue {
        var evaluator = ExpressionEvaluator(lookup, scope: scope)
        return evaluator.value(self)
    }
}
