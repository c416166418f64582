import StepKitBase

/// Piping: `{{name}}` in a step's texts shows the calculation `name`'s value now, `{{name|text}}`
/// shows `text` while the value is null (the default fallback is empty), and `\{{` is a literal
/// `{{`. Placeholders are checked when the task is compiled (an unknown name or an unclosed `{{`
/// is a definition error with its path) and resolved in the state's step, and in validation
/// messages, on the session's answers.
enum Piping {
    enum Piece: Equatable {
        case literal(String)
        case placeholder(name: String, fallback: String)
    }

    /// The step fields that may hold placeholders.
    static let stepFields = ["title", "text", "detailText", "footnote", "question"]

    /// Whether `text` may hold a placeholder or an escaped `{{` (a cheap test before parsing): a
    /// scan of the UTF-8 bytes, since every text of a task goes through it at compile time and
    /// the generic substring search cost a tenth of a compile.
    static func mayPipe(_ text: String) -> Bool {
        // A native string's bytes are scanned where they lie; any other through its view.
        text.utf8.withContiguousStorageIfAvailable(hasDoubleBrace) ?? hasDoubleBrace(text.utf8)
    }

    private static func hasDoubleBrace(_ bytes: some Sequence<UInt8>) -> Bool {
        var previousBrace = false
        for byte in bytes {
            let brace = byte == UInt8(ascii: "{")
            if brace && previousBrace { return true }
            previousBrace = brace
        }
        return false
    }

    /// The text's pieces, or a sentence saying what is wrong.
    static func pieces(_ text: String) -> Result<[Piece], PipingError> {
        var pieces: [Piece] = []
        var literal = ""
        let chars = Array(text.unicodeScalars)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "\\", i + 2 < chars.count, chars[i + 1] == "{", chars[i + 2] == "{" {
                literal += "{{"
                i += 3
                continue
            }
            if c == "{", i + 1 < chars.count, chars[i + 1] == "{" {
                var j = i + 2
                var inside = ""
                var closed = false
                while j < chars.count {
                    if chars[j] == "}", j + 1 < chars.count, chars[j + 1] == "}" { closed = true; break }
                    inside.unicodeScalars.append(chars[j])
                    j += 1
                }
                guard closed else { return .failure(PipingError("A placeholder \"{{\" is not closed by \"}}\"; write \"\\\\{{\" for literal braces.")) }
                let name: String, fallback: String
                if let bar = inside.firstIndex(of: "|") {
                    name = String(inside[..<bar])
                    fallback = String(inside[inside.index(after: bar)...])
                } else {
                    name = inside
                    fallback = ""
                }
                if !literal.isEmpty { pieces.append(.literal(literal)); literal = "" }
                pieces.append(.placeholder(name: name, fallback: fallback))
                i = j + 2
                continue
            }
            literal.unicodeScalars.append(c)
            i += 1
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        return .success(pieces)
    }

    /// Reports what is wrong with the placeholders of `text`; true when it has at least one.
    /// `scoped` says what is wrong with showing a known name there (a per-instance value where
    /// no instance of its block is meant: `TaskCompiler.compilePiping`).
    @discardableResult
    /// The path is worked out only for a text that holds a placeholder.
    static func check(_ text: String, at path: @autoclosure () -> JSONPath, known: (String) -> Bool,
                      scoped: ((String) -> (code: String, message: String)?)? = nil, _ d: Diagnostics) -> Bool {
        guard mayPipe(text) else { return false }
        switch pieces(text) {
        case .failure(let error):
            d.error("unclosedPlaceholder", error.message, at: path())
            return true
        case .success(let list):
            var any = false
            for case .placeholder(let name, _) in list {
                any = true
                if !known(name) {
                    d.error("unknownPlaceholder", "The placeholder \"{{\(name)}}\" names no calculation; define it in \"calculations\" (to show an answer, a calculation {\"answer\": ...}).", at: path())
                } else if let problem = scoped?(name) {
                    d.error(problem.code, problem.message, at: path())
                }
            }
            return any || text.contains("\\{{")
        }
    }

    /// `text` with each placeholder replaced by its value's text (`value` gives nil for null).
    static func render(_ text: String, value: (String) -> String?) -> String {
        guard mayPipe(text), case .success(let list) = pieces(text) else { return text }
        var out = ""
        for piece in list {
            switch piece {
            case .literal(let s): out += s
            case .placeholder(let name, let fallback): out += value(name) ?? fallback
            }
        }
        return out
    }

    /// How a calculation's value reads in a text: numbers shortest (14, 2.5), dates
    /// `YYYY-MM-DD`, booleans "Yes"/"No", a choice answer its choices' texts joined by ", " (a
    /// value without a text, or from another task, as the value); nil for null.
    static func text(of value: ExpressionValue) -> String? {
        switch value {
        case .null: return nil
        case .number(let d):
            guard d.isFinite else { return nil }
            if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return JSONWriter.string(.number(d))
        case .string(let s): return s
        case .bool(let b): return b ? "Yes" : "No"
        case .choice(let values, let choices):
            return values.map { value in
                if let choices, let i = choices.index(of: value), !choices[i].text.isEmpty { return choices[i].text }
                return value.stringValue ?? JSONWriter.string(value)
            }.joined(separator: ", ")
        default:
            let json = value.json
            return json.isNull ? nil : (json.stringValue ?? JSONWriter.string(json))
        }
    }

    /// Applies `render` to every text of a step's presentation that may hold placeholders:
    /// its fields, its choices' texts, its form items' texts and their choices' texts.
    static func apply(to fields: inout JSONObject, _ render: (String) -> String) {
        for key in stepFields {
            if let s = fields[key]?.stringValue, mayPipe(s) { fields[key] = .string(render(s)) }
        }
        if case .object(var format)? = fields["answerFormat"] {
            if renderChoices(&format, render) { fields["answerFormat"] = .object(format) }
        }
        guard case .array(var entries)? = fields["formItems"] else { return }
        var changed = false
        for (i, entry) in entries.enumerated() {
            guard case .object(var item) = entry else { continue }
            var itemChanged = false
            if let s = item["text"]?.stringValue, mayPipe(s) { item["text"] = .string(render(s)); itemChanged = true }
            if case .object(var format)? = item["answerFormat"], renderChoices(&format, render) {
                item["answerFormat"] = .object(format)
                itemChanged = true
            }
            if itemChanged { entries[i] = .object(item); changed = true }
        }
        if changed { fields["formItems"] = .array(entries) }
    }

    private static func renderChoices(_ format: inout JSONObject, _ render: (String) -> String) -> Bool {
        guard case .array(var choices)? = format["textChoices"] else { return false }
        var changed = false
        for (i, choice) in choices.enumerated() {
            guard case .object(var c) = choice, let s = c["text"]?.stringValue, mayPipe(s) else { continue }
            c["text"] = .string(render(s))
            choices[i] = .object(c)
            changed = true
        }
        if changed { format["textChoices"] = .array(choices) }
        return changed
    }

    /// Checks every text of a step's definition (`check`); true when one holds a placeholder.
    static func checkStep(_ fields: JSONObject, at path: JSONPath, known: (String) -> Bool,
                          scoped: ((String) -> (code: String, message: String)?)? = nil, _ d: Diagnostics) -> Bool {
        var any = false
        for key in stepFields {
            if let s = fields[key]?.stringValue { any = check(s, at: path.key(key), known: known, scoped: scoped, d) || any }
        }
        // Paths are built only for a text that holds a placeholder (`check`'s autoclosure).
        func choices(_ format: JSONObject?, at p: @autoclosure () -> JSONPath) {
            for (i, choice) in (format?["textChoices"]?.arrayValue ?? []).enumerated() {
                if let s = choice.objectValue?["text"]?.stringValue {
                    any = check(s, at: p().key("textChoices").index(i).key("text"), known: known, scoped: scoped, d) || any
                }
            }
        }
        choices(fields["answerFormat"]?.objectValue, at: path.key("answerFormat"))
        for (i, entry) in (fields["formItems"]?.arrayValue ?? []).enumerated() {
            let item = entry.objectValue
            if let s = item?["text"]?.stringValue {
                any = check(s, at: path.key("formItems").index(i).key("text"), known: known, scoped: scoped, d) || any
            }
            choices(item?["answerFormat"]?.objectValue, at: path.key("formItems").index(i).key("answerFormat"))
        }
        return any
    }
}

/// What is wrong with a text's placeholders.
struct PipingError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}
