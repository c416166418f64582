import StepKitBase

/// A task's languages: `defaultLanguage`, the declared `languages`, and the definition's texts
/// resolved in each.
///
/// Any text of a definition (a member named in `textKeys`) may be a string or an object of
/// language tags (`{"en": "Mood", "fr": "Humeur"}`). The definition is resolved once per declared
/// language into a plain definition (every text object replaced by its text in that language,
/// `fr-CA` falling back to `fr` and then to the default language) and each is compiled as any
/// task (`TaskCompiler.compile`), so the state, piping, messages, events and results of a session
/// read plain strings of one language and nothing below the compiler knows about languages.
package struct TaskLanguages: Sendable {
    /// The language of every plain string, and the fallback of every text object.
    package let defaultLanguage: String
    /// The declared languages, the default first, in canonical case.
    package let declared: [String]
    /// Whether the definition says anything about languages (`defaultLanguage`, `languages`
    /// or a text object): only then do the state and the result name them.
    package let isDeclared: Bool
    /// Texts without a declared language (they fall back to the default): the checker's
    /// `missingTranslation` warnings.
    let missing: [(path: JSONPath, language: String)]

    /// A task that says nothing about languages: English, as every text was before.
    static let plain = TaskLanguages(defaultLanguage: "en", declared: ["en"], isDeclared: false, missing: [])

    /// The members whose value is a text a participant reads or hears.
    static let textKeys: Set<String> = [
        "title", "text", "detailText", "footnote", "question", "placeholder", "textViewPlaceholderText",
        "invalidMessage", "errorMessage", "message", "sectionTitle", "learnMoreText", "accessibilityText",
        "spokenInstruction", "finishedSpokenInstruction", "yesString", "noString", "customDontKnowButtonText",
        "minimumValueDescription", "maximumValueDescription", "topRungText", "bottomRungText",
        "minimumAgeCustomText", "maximumAgeCustomText", "unit", "displayUnit",
    ]

    /// The declared language `tag` resolves to: `fr-CA` → `fr` → the default.
    package func resolve(_ tag: String) -> String {
        LanguageTag.lookup(tag, in: declared) ?? defaultLanguage
    }

    /// Reads the languages of `definition` and resolves its texts in each: the definitions by
    /// language (the default's first), each without `defaultLanguage` and `languages`, or nil
    /// with the problems in `d` (every one: a malformed tag, a text object without the default
    /// language, a text in an undeclared language, a text that is not a string).
    static func read(_ definition: JSON, _ d: Diagnostics) -> (TaskLanguages, [(language: String, definition: JSON)])? {
        guard case .object(var top) = definition else { return (.plain, [("en", definition)]) }
        let declaredKeys = top["defaultLanguage"] != nil || top["languages"] != nil
        guard declaredKeys || containsTextObject(definition) else { return (.plain, [("en", definition)]) }
        let before = d.problems.count
        var defaultLanguage = "en"
        if let value = top["defaultLanguage"] {
            if let text = value.stringValue, let tag = LanguageTag.canonical(text) {
                defaultLanguage = tag
            } else {
                d.error("invalidLanguage", "\"defaultLanguage\" must be a BCP-47 language tag such as \"en\" or \"fr-CA\".", at: .root.key("defaultLanguage"))
            }
        }
        var declared = [defaultLanguage]
        if let value = top["languages"] {
            if let list = value.arrayValue, !list.isEmpty {
                var tags: [String] = []
                for (i, item) in list.enumerated() {
                    guard let text = item.stringValue, let tag = LanguageTag.canonical(text) else {
                        d.error("invalidLanguage", "A language must be a BCP-47 language tag such as \"en\" or \"fr-CA\".", at: .root.key("languages").index(i))
                        continue
                    }
                    if tags.contains(tag) {
                        d.error("duplicateLanguage", "The language \"\(tag)\" is listed twice.", at: .root.key("languages").index(i))
                    }
                    tags.append(tag)
                }
                if top["defaultLanguage"] == nil, let first = tags.first { defaultLanguage = first }
                if !tags.contains(defaultLanguage) && d.problems.count == before {
                    d.error("defaultLanguageNotListed", "\"languages\" must list the default language \"\(defaultLanguage)\".", at: .root.key("languages"))
                }
                declared = [defaultLanguage] + tags.filter { $0 != defaultLanguage }
            } else {
                d.error("wrongType", "\"languages\" is a non-empty array of language tags.", at: .root.key("languages"))
            }
        }
        guard d.problems.count == before else { return nil }
        top["defaultLanguage"] = nil
        top["languages"] = nil
        var missing: [(path: JSONPath, language: String)] = []
        var resolved: [(language: String, definition: JSON)] = []
        for language in declared {
            let first = language == defaultLanguage
            var context = Context(language: language, defaultLanguage: defaultLanguage, declared: declared,
                                  d: first ? d : nil)
            let definition = context.resolve(.object(top), at: .root)
            if first {
                missing = context.missing
                guard d.problems.count == before else { return nil }
            }
            resolved.append((language, definition))
        }
        // Missing texts are found while resolving each language; those of the default are errors.
        let languages = TaskLanguages(defaultLanguage: defaultLanguage, declared: declared, isDeclared: true, missing: missing)
        return (languages, resolved)
    }

    /// Whether any text member of `value` is an object.
    /// Every task is scanned once, most with nothing to find: the members are read in place
    /// (`entries` copied each object out, and reading a member by position copied it), and an
    /// object member's key is compared with the text keys of its length only (hashing every
    /// such key into `textKeys` was most of the scan: `benchmarks/README.md`, issue 36).
    private static func containsTextObject(_ value: JSON) -> Bool {
        switch value {
        case .object(let object):
            var found = false
            object.forEachEntry { key, member in
                guard !found else { return }
                switch member {
                case .object: found = isTextKey(key) || containsTextObject(member)
                case .array: found = containsTextObject(member)
                default: return
                }
            }
            return found
        case .array(let items):
            for item in items {
                switch item {
                case .object, .array: if containsTextObject(item) { return true }
                default: continue
                }
            }
            return false
        default: return false
        }
    }

    /// The text keys by their length in UTF-8 bytes (every one has fewer than 64).
    private static let textKeysByLength: [[String]] = {
        var buckets = Array(repeating: [String](), count: 64)
        for key in textKeys { buckets[key.utf8.count].append(key) }
        return buckets
    }()

    /// `textKeys.contains(key)`, comparing `key` with the text keys of its length only.
    private static func isTextKey(_ key: String) -> Bool {
        let length = key.utf8.count
        guard length < 64 else { return false }
        return textKeysByLength[length].contains(key)
    }

    /// One language's pass over the definition.
    private struct Context {
        let language: String
        let defaultLanguage: String
        let declared: [String]
        /// Problems are reported on the default language's pass only (the others meet the same).
        let d: Diagnostics?
        var missing: [(path: JSONPath, language: String)] = []

        mutating func resolve(_ value: JSON, at path: JSONPath) -> JSON {
            switch value {
            case .object(var object):
                for (key, member) in object.entries {
                    let memberPath = path.key(key)
                    if case .object(let texts) = member, TaskLanguages.textKeys.contains(key) {
                        object[key] = .string(text(texts, at: memberPath))
                    } else if case .object = member, key == "answerFormat" {
                        object[key] = labelled(resolve(member, at: memberPath))
                    } else if case .object = member {
                        object[key] = resolve(member, at: memberPath)
                    } else if case .array = member {
                        object[key] = resolve(member, at: memberPath)
                    }
                }
                return .object(object)
            case .array(let items):
                return .array(items.enumerated().map { resolve($0.element, at: path.index($0.offset)) })
            default:
                return value
            }
        }

        /// An answer format with the labels the engine gives it (a boolean's "Yes" and "No",
        /// the "don't know" answer's) in this pass's language, where the author gave none:
        /// from the shipped message catalogue of the language, else English.
        func labelled(_ format: JSON) -> JSON {
            guard case .object(var object) = format else { return format }
            let catalogue = LanguageTag.lookup(language, in: MessageCatalogue.shipped.keys).flatMap { MessageCatalogue.shipped[$0] } ?? .english
            func label(_ key: String, _ message: String) {
                if object[key] == nil, let text = catalogue.template(message, count: nil) { object[key] = .string(text) }
            }
            if object["type"] == .string("boolean") {
                label("yesString", "label.yes")
                label("noString", "label.no")
            }
            if object["showDontKnowButton"] == .bool(true) { label("customDontKnowButtonText", "label.dontKnow") }
            return .object(object)
        }

        /// The text of `texts` in this pass's language.
        mutating func text(_ texts: JSONObject, at path: JSONPath) -> String {
            var byTag: [String: String] = [:]
            for (key, value) in texts.entries {
                guard let tag = LanguageTag.canonical(key) else {
                    d?.error("invalidLanguage", "\"\(key)\" is not a BCP-47 language tag; a text object's keys are language tags such as \"en\" or \"fr-CA\".", at: path.key(key))
                    continue
                }
                guard declared.contains(tag) || LanguageTag.lookup(tag, in: declared) != nil else {
                    d?.error("undeclaredLanguage", "The text is given in \"\(tag)\", which \"languages\" does not declare (declared: \(declared.joined(separator: ", "))).", at: path.key(key))
                    continue
                }
                guard let string = value.stringValue else {
                    d?.error("wrongType", "A text in a language is a string, found \(value.typeName).", at: path.key(key))
                    continue
                }
                byTag[tag] = string
            }
            guard let fallback = byTag[defaultLanguage] else {
                d?.error("missingDefaultLanguage", "A text object needs the default language \"\(defaultLanguage)\".", at: path)
                return ""
            }
            if d != nil {
                for tag in declared where tag != defaultLanguage && LanguageTag.lookup(tag, in: byTag.keys) == nil {
                    missing.append((path, tag))
                }
            }
            return LanguageTag.lookup(language, in: byTag.keys).flatMap { byTag[$0] } ?? fallback
        }
    }
}
