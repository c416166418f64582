/// The sentences of participant messages in one language, keyed by `Message.key`, each with
/// named arguments in braces (`"\"{choice}\" is chosen twice."`); a brace that does not enclose
/// a name (letters, digits, `_`) is written as it is. An entry keyed by a `count` argument may
/// be an object of plural forms, `{"one": …, "other": …}`: `one` when the count is 1.
///
/// The library ships English (every message as it always read), German and Spanish; a host may
/// hand its own for any language (session option `messages`). Every catalogue has exactly
/// English's keys and, for each, exactly the same argument names (`problems(at:)`), so no
/// message is left untranslated or loses a value.
package struct MessageCatalogue: Sendable {
    enum Entry: Sendable {
        case text(String)
        case plural(one: String, other: String)

        var forms: [String] {
            switch self {
            case .text(let t): return [t]
            case .plural(let one, let other): return [one, other]
            }
        }
    }

    package let language: String
    let entries: [String: Entry]

    init(language: String, _ entries: [String: Entry]) {
        self.language = language
        self.entries = entries
    }

    package func template(_ key: String, count: Int?) -> String? {
        switch entries[key] {
        case .text(let t)?: return t
        case .plural(let one, let other)?: return count == 1 ? one : other
        case nil: return nil
        }
    }

    /// The shipped catalogues by language tag.
    package static let shipped: [String: MessageCatalogue] = ["en": english, "de": german, "es": spanish]

    /// The argument names a template uses.
    static func argumentNames(_ template: String) -> Set<String> {
        var names: Set<String> = []
        let chars = Array(template)
        var i = 0
        while i < chars.count {
            if chars[i] == "{", let close = placeholderEnd(chars, from: i) {
                names.insert(String(chars[(i + 1)..<close]))
                i = close + 1
            } else {
                i += 1
            }
        }
        return names
    }

    /// The index of the `}` closing a placeholder opened at `open`, if the braces enclose a name.
    static func placeholderEnd(_ chars: [Character], from open: Int) -> Int? {
        var j = open + 1
        while j < chars.count, chars[j].isASCII, chars[j].isLetter || chars[j].isNumber || chars[j] == "_" { j += 1 }
        return j > open + 1 && j < chars.count && chars[j] == "}" ? j : nil
    }

    /// What this catalogue lacks or has beyond English: a key missing or unknown, an argument
    /// missing or unknown, plural forms where English has none. Empty for a complete catalogue.
    package func problems(at path: JSONPath) -> [Problem] {
        let d = Diagnostics()
        report(at: path, d)
        return d.problems
    }

    /// `problems(at:)`, reported into `d`.
    func report(at path: JSONPath, _ d: Diagnostics) {
        let reference = MessageCatalogue.english.entries
        for key in reference.keys.sorted() where entries[key] == nil {
            d.error("missingMessage", "The \"\(language)\" message catalogue has no \"\(key)\".", at: path.key(key))
        }
        for key in entries.keys.sorted() {
            guard let english = reference[key], let own = entries[key] else {
                d.error("unknownMessage", "\"\(key)\" is not an engine message; the keys are those of the English catalogue (docs/reference.md).", at: path.key(key))
                continue
            }
            if case .plural = own, case .text = english {
                d.error("wrongType", "\"\(key)\" has no count, so it has no plural forms: give one string.", at: path.key(key))
                continue
            }
            let expected = english.forms.reduce(into: Set<String>()) { $0.formUnion(MessageCatalogue.argumentNames($1)) }
            let given = own.forms.reduce(into: Set<String>()) { $0.formUnion(MessageCatalogue.argumentNames($1)) }
            for name in expected.subtracting(given).sorted() {
                d.error("missingArgument", "The message \"\(key)\" must use the argument {\(name)}.", at: path.key(key))
            }
            for name in given.subtracting(expected).sorted() {
                d.error("unknownArgument", "The message \"\(key)\" has no argument {\(name)}; its arguments: \(expected.sorted().map { "{\($0)}" }.joined(separator: ", ")).", at: path.key(key))
            }
        }
    }

    /// A host's catalogue (`{"key": "template" or {"one", "other"}}`) for `language`, checked
    /// against English (`problems(at:)`); nil with every problem in `d`.
    package static func parse(_ value: JSON, language: String, at path: JSONPath, _ d: Diagnostics) -> MessageCatalogue? {
        guard case .object(let object) = value else {
            d.error("wrongType", "A message catalogue is an object: message key → text.", at: path)
            return nil
        }
        let before = d.problems.count
        var entries: [String: Entry] = [:]
        for (key, entry) in object.entries {
            switch entry {
            case .string(let t):
                entries[key] = .text(t)
            case .object(let forms):
                guard forms.count == 2, let one = forms["one"]?.stringValue, let other = forms["other"]?.stringValue else {
                    d.error("wrongType", "Plural forms are an object {\"one\": text, \"other\": text}.", at: path.key(key))
                    continue
                }
                entries[key] = .plural(one: one, other: other)
            default:
                d.error("wrongType", "A message is a string, or plural forms {\"one\", \"other\"}; found \(entry.typeName).", at: path.key(key))
            }
        }
        let catalogue = MessageCatalogue(language: language, entries)
        catalogue.report(at: path, d)
        return d.problems.count == before ? catalogue : nil
    }
}

extension MessageCatalogue {
    /// The catalogue as JSON, as a host writes its own (`stepkit_message_catalogue`).
    package var json: JSON {
        var object = JSONObject()
        for key in entries.keys.sorted() {
            switch entries[key] {
            case .text(let t)?: object[key] = .string(t)
            case .plural(let one, let other)?: object[key] = .object(["one": .string(one), "other": .string(other)])
            case nil: break
            }
        }
        return .object(object)
    }

    /// The shipped catalogue for `tag` (exactly one of `shipped`'s tags, any case), as JSON.
    package static func shippedJSON(_ tag: String) throws(StepKitError) -> JSON {
        guard let canonical = LanguageTag.canonical(tag) else {
            throw StepKitError(.invalidArgument, code: "invalidLanguage", message: "\"\(tag)\" is not a BCP-47 language tag (such as \"en\", \"de\" or \"fr-CA\").")
        }
        guard let catalogue = shipped[canonical] else {
            throw StepKitError(.invalidArgument, code: "unknownLanguage", message: "StepKit ships no message catalogue for \"\(canonical)\"; it ships: " + shipped.keys.sorted().joined(separator: ", ") + ".")
        }
        return catalogue.json
    }
}
