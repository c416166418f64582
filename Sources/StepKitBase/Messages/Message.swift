/// A sentence the engine writes for a participant (an answer refused, an answer missing), kept
/// as its catalogue key and named arguments until it is rendered in the participant's language
/// (`MessageCatalogue`). Author texts (an `invalidMessage`, a validation's `message`) are
/// `.author`: already in the task's language, shown as they are.
package struct Message: Sendable, Equatable {
    package enum Argument: Sendable, Equatable {
        /// A text shown as it is: a choice's text, a value as JSON, a unit.
        case text(String)
        /// A number that also picks the plural form of a message keyed by it (`count`).
        case count(Int)
        /// Another message, rendered in the same language.
        indirect case message(Message)
        /// Another message without its final full stop, continued by this one.
        indirect case clause(Message)
        /// Messages joined with ", ".
        indirect case list([Message])
    }

    /// The catalogue key; empty for an author's text.
    package let key: String
    package let arguments: [(name: String, value: Argument)]

    package init(_ key: String, _ arguments: KeyValuePairs<String, Argument> = [:]) {
        self.key = key
        self.arguments = arguments.map { ($0.key, $0.value) }
    }

    /// A message of `key` with `arguments` listed (built by a caller that has them as a list).
    init(key: String, arguments: [(name: String, value: Argument)]) {
        self.key = key
        self.arguments = arguments
    }

    private init(author text: String) {
        self.key = ""
        self.arguments = [("text", .text(text))]
    }

    /// A text the task's author wrote, shown as it is in every language.
    package static func author(_ text: String) -> Message { Message(author: text) }

    package static func == (a: Message, b: Message) -> Bool {
        a.key == b.key && a.arguments.count == b.arguments.count
            && zip(a.arguments, b.arguments).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// The message in English, as every message read before catalogues existed.
    package var english: String { render(in: .english) }

    /// The message in `catalogue`'s language, its first letter upper case (a message may begin
    /// with an argument: "the string "2" is not…" opens a sentence).
    package func render(in catalogue: MessageCatalogue) -> String {
        let text = renderInner(catalogue)
        guard !key.isEmpty, let first = text.first, first.isLowercase else { return text }
        return first.uppercased() + text.dropFirst()
    }

    private func renderInner(_ catalogue: MessageCatalogue) -> String {
        if key.isEmpty, case .text(let text)? = arguments.first?.value { return text }
        var count: Int?
        for a in arguments where a.name == "count" { if case .count(let n) = a.value { count = n } }
        guard let template = catalogue.template(key, count: count) ?? MessageCatalogue.english.template(key, count: count) else { return key }
        return fill(template, catalogue, byCharacters: false)
    }

    /// `template` with its placeholders replaced by the arguments. An ASCII template (every
    /// English one) is read byte by byte unless `byCharacters` (the tests compare the two): its
    /// characters are its bytes, and splitting it into `Character`s was most of a state's cost
    /// (a state lists every missing answer's message, rendered in English and then in the
    /// session's language).
    func fill(_ template: String, _ catalogue: MessageCatalogue, byCharacters: Bool) -> String {
        if !byCharacters, let text = template.utf8.withContiguousStorageIfAvailable({ renderASCII($0, catalogue) }) ?? nil { return text }
        var out = ""
        let chars = Array(template)
        var i = 0
        while i < chars.count {
            guard chars[i] == "{", let close = MessageCatalogue.placeholderEnd(chars, from: i) else {
                out.append(chars[i])
                i += 1
                continue
            }
            append(String(chars[(i + 1)..<close]), to: &out, catalogue)
            i = close + 1
        }
        return out
    }

    /// `renderInner` of an ASCII template, byte by byte: the same placeholders (`{name}`, a name
    /// of ASCII letters, digits and `_`), the text between them copied whole. Nil when the
    /// template is not ASCII (the `Character` path takes it).
    private func renderASCII(_ template: UnsafeBufferPointer<UInt8>, _ catalogue: MessageCatalogue) -> String? {
        for byte in template where byte >= 0x80 { return nil }
        var out = ""
        var run = 0
        var i = 0
        while i < template.count {
            guard template[i] == UInt8(ascii: "{"), let close = Message.asciiPlaceholderEnd(template, from: i) else {
                i += 1
                continue
            }
            out += String(decoding: UnsafeBufferPointer(rebasing: template[run..<i]), as: UTF8.self)
            let name = String(decoding: UnsafeBufferPointer(rebasing: template[(i + 1)..<close]), as: UTF8.self)
            append(name, to: &out, catalogue)
            i = close + 1
            run = i
        }
        out += String(decoding: UnsafeBufferPointer(rebasing: template[run..<template.count]), as: UTF8.self)
        return out
    }

    /// `MessageCatalogue.placeholderEnd` over ASCII bytes.
    private static func asciiPlaceholderEnd(_ bytes: UnsafeBufferPointer<UInt8>, from open: Int) -> Int? {
        var j = open + 1
        while j < bytes.count {
            let b = bytes[j]
            guard (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "_") else { break }
            j += 1
        }
        return j > open + 1 && j < bytes.count && bytes[j] == UInt8(ascii: "}") ? j : nil
    }

    /// The argument `name` rendered into `out` (`{name}` itself when there is none).
    private func append(_ name: String, to out: inout String, _ catalogue: MessageCatalogue) {
        switch arguments.first(where: { $0.name == name })?.value {
        case .text(let t)?: out += t
        case .count(let n)?: out += String(n)
        case .message(let m)?: out += m.renderInner(catalogue)
        case .clause(let m)?:
            let sentence = m.renderInner(catalogue)
            out += sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
        case .list(let items)?: out += items.map { $0.renderInner(catalogue) }.joined(separator: ", ")
        case nil: out += "{" + name + "}"
        }
    }

    /// The key and arguments as a host reads them (`messageKey`, `messageArguments` of a
    /// problem), to render the message itself; nested messages as their rendering.
    package func argumentsJSON(in catalogue: MessageCatalogue) -> JSON {
        var object = JSONObject()
        for a in arguments {
            switch a.value {
            case .text(let t): object[a.name] = .string(t)
            case .count(let n): object[a.name] = .int(Int64(n))
            case .message(let m), .clause(let m): object[a.name] = .string(m.renderInner(catalogue))
            case .list(let items): object[a.name] = .string(items.map { $0.renderInner(catalogue) }.joined(separator: ", "))
            }
        }
        return .object(object)
    }
}
