/// A regular expression compiled when the task is, shared by every session.
struct Pattern: @unchecked Sendable {
    // Regex is immutable once built; matching does not mutate it.
    let regex: Regex<AnyRegexOutput>
    let source: String

    init?(_ source: String) {
        guard let regex = try? Regex(source) else { return nil }
        self.regex = regex
        self.source = source
    }

    /// Whether the pattern matches somewhere in `text`, as `NSRegularExpression` counts matches.
    func matches(_ text: String) -> Bool {
        (try? regex.firstMatch(in: text)) != nil
    }
}

/// `text`: free text with an optional length limit and pattern (ResearchKit's
/// `ORKTextAnswerFormat`). `""` clears the answer, as an empty text field does.
struct TextFormat: AnswerFormatRules {
    let maximumLength: Int
    let multipleLines: Bool
    let pattern: Pattern?
    let invalidMessage: String

    var resultType: ResultType { .text }
    /// A `maximumLength` of 0 means no limit, as in ResearchKit.
    var defaults: JSONObject {
        JSONObject(["maximumLength": .int(Int64(maximumLength)), "multipleLines": .bool(multipleLines)])
    }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let maximumLength = r.integer("maximumLength", in: 0...1_000_000) ?? 0
        let multipleLines = r.bool("multipleLines") ?? true
        let source = r.string("validationRegularExpression")
        let invalidMessage = r.string("invalidMessage")
        r.accept(strings: ["placeholder", "autocapitalizationType", "autocorrectionType", "spellCheckingType",
                           "keyboardType", "textContentType", "passwordRules"])
        r.accept(bools: ["secureTextEntry", "hideCharacterCountLabel", "hideClearButton"])
        var pattern: Pattern?
        if let source {
            pattern = Pattern(source)
            if pattern == nil {
                d.error("invalidRegularExpression", "\"validationRegularExpression\" is not a valid regular expression.", at: r.path.key("validationRegularExpression"))
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
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "Enter text.") }
        if text.isEmpty { return nil }
        if maximumLength > 0 && text.count > maximumLength {
            throw AnswerRejection("tooLong", "Enter at most \(maximumLength) characters.")
        }
        if !multipleLines && text.contains(where: \.isNewline) {
            throw AnswerRejection("multipleLines", "Enter a single line of text.")
        }
        if let pattern, !pattern.matches(text) {
            throw AnswerRejection("patternMismatch", invalidMessage)
        }
        return answer
    }
}

/// `email`: text shaped like an e-mail address (ResearchKit's `ORKEmailAnswerFormat`).
struct EmailFormat: AnswerFormatRules {
    private static let pattern = Pattern("^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}$")

    var resultType: ResultType { .text }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        _ = r.string("placeholder")
        return EmailFormat()
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "Enter an email address.") }
        if text.isEmpty { return nil }
        guard text.count <= 254, EmailFormat.pattern?.matches(text) == true else {
            throw AnswerRejection("invalidEmail", "Enter a valid email address.")
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
    var defaults: JSONObject {
        JSONObject(["maximumLength": .int(Int64(maximumLength)), "errorMessage": .string(errorMessage)])
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
        guard case .string(let text) = answer else { throw AnswerRejection("wrongType", "Enter text.") }
        if text.isEmpty { return nil }
        if maximumLength > 0 && text.count > maximumLength {
            throw AnswerRejection("tooLong", "Enter at most \(maximumLength) characters.")
        }
        return answer
    }

    /// The cross-item check: the confirmation must equal the original's answer.
    func confirm(_ answer: JSON, original: JSON?) throws(AnswerRejection) {
        guard let original, answer.sameValue(as: original) else {
            throw AnswerRejection("confirmationMismatch", errorMessage)
        }
    }
}
