import StepKitBase

/// `text`: free text with an optional length limit and pattern (ResearchKit's
/// `ORKTextAnswerFormat`). `""` clears the answer, as an empty text field does.
struct TextFormat: AnswerFormatRules {
    let maximumLength: Int
    let multipleLines: Bool
    let pattern: Pattern?
    let invalidMessage: String

    var resultType: ResultType { .text }
    /// A `maximumLength` of 0 means no limit, as in ResearchKit.
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {
        add("maximumLength", .int(Int64(maximumLength)))
        add("multipleLines", .bool(multipleLines))
    }

    /// Display settings, read once, not made per format read (an array literal is allocated
    /// on each call).
    static let displayStrings = ["placeholder", "autocapitalizationType", "autocorrectionType", "spellCheckingType",
                                 "keyboardType", "textContentType", "passwordRules"]
    static let displayBools = ["secureTextEntry", "hideCharacterCountLabel", "hideClearButton"]

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let maximumLength = r.integer("maximumLength", in: 0...1_000_000) ?? 0
        let multipleLines = r.bool("multipleLines") ?? true
        let source = r.string("validationRegularExpression")
        let invalidMessage = r.string("invalidMessage")
        r.accept(strings: TextFormat.displayStrings)
        r.accept(bools: TextFormat.displayBools)
        var pattern: Pattern?
        if let source {
            do throws(RegularExpression.CompileError) {
                pattern = try Pattern(source)
            } catch {
                d.error("invalidRegularExpression", "\"validationRegularExpression\" is not a valid regular expression: it \(error.message).", at: r.path.key("validationRegularExpression"))
            }
        }
        if (source == nil) != (invalidMessage == nil) {
            let missing = source == nil ? "validationRegularExpression" : "invalidMessage"
            d.error("missingKey", "\"validationRegularExpression\" and \"invalidMessage\" go together; \"\(missing)\" is missing.", at: r.path.key(missing))
        }
        let format = TextFormat(maximumLength: maximumLength, multipleLines: multipleLines, pattern: pattern,
                                invalidMessage: invalidMessage ?? "")
        format.checkDefault("defaultTextAnswer", in: r)
        return format
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "text.wrongType") }
        if text.isEmpty { return nil }
        try TextLength.check(text, maximumLength: maximumLength)
        if !multipleLines && text.contains(where: \.isNewline) {
            throw AnswerRejection("multipleLines", "text.singleLine")
        }
        if let pattern {
            switch pattern.match(text) {
            case .match: break
            case .noMatch: throw AnswerRejection("patternMismatch", .author(InvalidMessage.filled(invalidMessage, with: text)))
            case .tooComplex: throw AnswerRejection.patternTooComplex
            }
        }
        return answer
    }
}

/// ResearchKit shows a text format's `invalidMessage` as a format string with the typed text as
/// its argument (`"%@ is not a valid code"`). A message with `%@` gets the text in place of each
/// `%@`, and `%%` reads `%`; a message without `%@` is shown exactly as written.
enum InvalidMessage {
    static func filled(_ message: String, with text: String) -> String {
        guard message.contains("%@") else { return message }
        var result = ""
        var percent = false
        for ch in message {
            if percent {
                percent = false
                switch ch {
                case "@": result += text
                case "%": result.append("%")
                default: result.append("%"); result.append(ch)
                }
            } else if ch == "%" {
                percent = true
            } else {
                result.append(ch)
            }
        }
        if percent { result.append("%") }
        return result
    }
}

/// `email`: text shaped like an e-mail address (ResearchKit's `ORKEmailAnswerFormat`).
struct EmailFormat: AnswerFormatRules {
    private static let pattern = try? Pattern("^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}$")

    var resultType: ResultType { .text }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        _ = r.string("placeholder")
        return EmailFormat()
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "email.wrongType") }
        if text.isEmpty { return nil }
        // 254 characters, and so at most 1,016 bytes (4 a character), before any matching.
        guard text.utf8.count <= 254 * 4, text.count <= 254, EmailFormat.pattern?.matches(text) == true else {
            throw AnswerRejection("invalidEmail", "email.invalid")
        }
        return answer
    }
}

/// `confirmText`: the same text typed twice, as for an e-mail address or a password
/// (ResearchKit's `ORKConfirmTextAnswerFormat`). The form checks it against its original item,
/// when it is set and again when the form is left.
struct ConfirmTextFormat: AnswerFormatRules {
    let originalItemIdentifier: String
    let errorMessage: String
    let maximumLength: Int

    var resultType: ResultType { .text }
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) {
        add("maximumLength", .int(Int64(maximumLength)))
        add("errorMessage", .string(errorMessage))
    }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let original = r.string("originalItemIdentifier", required: true, nonEmpty: true)
        let message = r.string("errorMessage") ?? "The entries do not match."
        let maximumLength = r.integer("maximumLength", in: 0...1_000_000) ?? 0
        _ = r.string("placeholder")
        guard let original else { return nil }
        return ConfirmTextFormat(originalItemIdentifier: original, errorMessage: message, maximumLength: maximumLength)
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "text.wrongType") }
        if text.isEmpty { return nil }
        try TextLength.check(text, maximumLength: maximumLength)
        return answer
    }

    /// The cross-item check: the confirmation must equal the original's answer.
    func confirm(_ answer: JSON, original: JSON?) throws(AnswerRejection) {
        guard let original, answer.sameValue(as: original) else {
            throw AnswerRejection("confirmationMismatch", .author(errorMessage))
        }
    }
}

/// `maximumLength` of text answers: at most that many characters (grapheme clusters, as a
/// person counts them) and at most `bytesPerCharacter` times as many UTF-8 bytes, so a few
/// characters carrying thousands of combining marks are refused too. The bytes are checked
/// first: they cost nothing to count, the characters cost a walk of the text.
enum TextLength {
    /// Generous for any real character: the longest emoji sequences are about 35 bytes.
    static let bytesPerCharacter = 64

    static func check(_ text: String, maximumLength: Int) throws(AnswerRejection) {
        guard maximumLength > 0 else { return }
        let (maxBytes, overflow) = maximumLength.multipliedReportingOverflow(by: bytesPerCharacter)
        if (!overflow && text.utf8.count > maxBytes) || text.count > maximumLength {
            throw AnswerRejection("tooLong", "text.tooLong", ["count": .count(maximumLength)])
        }
    }
}
