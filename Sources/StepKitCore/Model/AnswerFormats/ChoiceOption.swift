import StepKitBase

/// One choice of a choice-like format: a text choice, an image choice or a picker row.
struct ChoiceOption: Sendable, Equatable {
    let text: String
    /// A string or a number, unique among the format's choices.
    let value: JSON
    /// Selecting it clears every other choice ("None of the above").
    let exclusive: Bool
    /// The participant may type their own text with it (ResearchKit's `ORKTextChoiceOther`).
    let other: Bool
    let otherTextOptional: Bool
    /// The code it stands for (`{"system", "code", "display"}`, from a FHIR answer list), copied
    /// to the result of an answer that selects it.
    var coding: JSON? = nil
    /// `score`: what `{"score": SEL}` adds up when the choice is selected.
    var score: Double? = nil
    /// `pinned`: a shuffled list (`shuffle`) leaves it where the definition puts it.
    var pinned = false
    /// `visibleWhen`: the condition under which the choice is offered, compiled once every step
    /// is known (`TaskCompiler+ChoiceFilters.swift`).
    var visibleWhen: JSON? = nil

    /// Reads a list of choices, checking that the values are strings or numbers and unique.
    static func parseList(_ items: [JSON], at path: JSONPath, _ diagnostics: Diagnostics,
                          images: Bool = false, scores: Bool = false) -> [ChoiceOption] {
        var options: [ChoiceOption] = []
        options.reserveCapacity(items.count)
        // The values so far, to find a repeat in one probe rather than a pass over the list; a
        // short list (most are) compares with the values before instead, which costs less than
        // making and filling the set (`benchmarks/README.md`, issue 36).
        let hashed = items.count > shortList
        var seen = Set<ScalarKey>(minimumCapacity: hashed ? items.count : 0)
        var keys: [ScalarKey] = []
        if !hashed { keys.reserveCapacity(items.count) }
        for (i, item) in items.enumerated() {
            let itemPath = path.index(i)
            guard let r = FieldReader(item, at: itemPath, diagnostics, what: "a choice") else { continue }
            let text = r.string("text", required: !images) ?? ""
            if !images { _ = r.string("detailText") }
            let value = r.value("value", required: true)
            let score = scores ? r.number("score") : nil
            let pinned = r.bool("pinned") ?? false
            let visibleWhen = r.value("visibleWhen")
            var exclusive = false, other = false, otherOptional = true
            let coding = images ? nil : r.value("coding").flatMap { parseCoding($0, at: itemPath.key("coding"), diagnostics) }
            if images {
                r.accept(strings: imageKeys)
            } else {
                exclusive = r.bool("exclusive") ?? false
                other = r.bool("other") ?? false
                _ = r.string("textViewPlaceholderText")
                otherOptional = r.bool("textViewInputOptional") ?? true
                _ = r.bool("textViewStartsHidden")
                if !other {
                    for key in otherKeys where r.has(key) {
                        diagnostics.error("invalidValue", "\"\(key)\" applies only to a choice with \"other\": true.", at: itemPath.key(key))
                    }
                }
            }
            r.finish()
            guard let value else { continue }
            guard let key = ScalarKey(value) else {
                diagnostics.error("wrongType", "A choice's \"value\" must be a string or a number, found \(value.typeName).", at: itemPath.key("value"))
                continue
            }
            let repeated = hashed ? !seen.insert(key).inserted : keys.contains(key)
            if !hashed && !repeated { keys.append(key) }
            if repeated {
                diagnostics.error("duplicateValue", "Another choice already has the value \(JSONWriter.string(value)).", at: itemPath.key("value"))
                continue
            }
            options.append(ChoiceOption(text: text, value: value, exclusive: exclusive, other: other, otherTextOptional: otherOptional,
                                        coding: coding, score: score, pinned: pinned, visibleWhen: visibleWhen))
        }
        return options
    }

    /// Lists of at most this many choices are checked for repeated values without a set.
    private static let shortList = 16
    /// The settings of a choice with `"other": true`.
    private static let otherKeys = ["textViewPlaceholderText", "textViewInputOptional", "textViewStartsHidden"]
    private static let imageKeys = ["normalImage", "selectedImage", "accessibilityText"]
}

/// A choice's `coding`: an object of the strings `system`, `version`, `code`, `display`, with a
/// code or a display.
private func parseCoding(_ value: JSON, at path: JSONPath, _ diagnostics: Diagnostics) -> JSON? {
    guard let r = FieldReader(value, at: path, diagnostics, what: "a coding") else { return nil }
    let code = r.string("code"), display = r.string("display")
    r.accept(strings: ["system", "version"])
    r.finish()
    if code == nil && display == nil {
        diagnostics.error("missingKey", "A coding needs \"code\" or \"display\".", at: path)
        return nil
    }
    return value
}

extension Array where Element == ChoiceOption {
    func index(of value: JSON) -> Int? {
        // Most values are strings: compared as strings directly, without `sameValue`'s pairing
        // of the two values (which copies both).
        if case .string(let text) = value {
            return firstIndex { option in
                if case .string(let own) = option.value { return own == text }
                return false
            }
        }
        return firstIndex { $0.value.sameValue(as: value) }
    }

    /// The message for a value that is no choice's value. Answers and conditions compare values,
    /// not texts, so the message names the values with their JSON types: `the string "2" is not
    /// the value of any choice; the values are the numbers 1, 2, 3.` (a text would hide that
    /// `"2"` and `2` differ). Long lists stop after `listLimit` values.
    func notAChoiceMessage(_ value: JSON) -> Message {
        let listed = prefix(ChoiceValueWords.listLimit).map(\.value)
        var list: Message.Argument
        if let kind = listed.first.map(ChoiceValueWords.kind), listed.allSatisfy({ ChoiceValueWords.kind($0) == kind }) {
            list = .message(Message("values." + kind + "s", ["count": .count(listed.count), "list": .text(listed.map { JSONWriter.string($0) }.joined(separator: ", "))]))
        } else {
            list = .list(listed.map { ChoiceValueWords.described($0) })
        }
        if count > listed.count { list = .message(Message("values.more", ["list": list, "more": .text(String(count - listed.count))])) }
        let lead = ChoiceValueWords.described(value)
        if isEmpty { return Message("choice.noChoices", ["value": .message(lead)]) }
        return Message("choice.notAChoice", ["value": .message(lead), "count": .count(count), "values": list])
    }
}

/// How choice messages name a JSON value: with its type, since a choice's value may be a string
/// or a number and `"2"` is not `2`.
enum ChoiceValueWords {
    static let listLimit = 20

    /// "string", "number", or "value" for anything else (the `values.` message keys).
    static func kind(_ value: JSON) -> String {
        switch value {
        case .string: return "string"
        case .int, .double: return "number"
        default: return "value"
        }
    }

    /// `the string "2"`, `the number 2`, `an array [1]`.
    static func described(_ value: JSON) -> Message {
        switch value {
        case .string, .int, .double: return Message("value." + kind(value), ["json": .text(JSONWriter.string(value))])
        case .null: return Message("value.null")
        default: return Message("value.other", ["type": .text(value.typeName), "json": .text(JSONWriter.string(value))])
        }
    }
}
