import StepKitBase

/// The choice-like formats that answer with an array of choice values: `textChoice`,
/// `imageChoice`, `textScale` and `valuePicker`.
struct ChoiceFormat: AnswerFormatRules {
    enum Kind: Sendable {
        case textChoice, imageChoice, textScale, valuePicker
    }

    let kind: Kind
    let options: [ChoiceOption]
    let multiple: Bool
    /// `shuffle`: the choices are shown in the session's seeded order (`Randomization`), the
    /// pinned ones staying in place.
    var shuffle = false
    /// `choicesFrom`: the choices offered are those chosen (or not chosen) in an earlier answer.
    var source: ChoiceSource? = nil

    var resultType: ResultType { .choice }
    var isShuffled: Bool { shuffle }
    var choiceSource: ChoiceSource? { source }
    var choiceOptions: [ChoiceOption]? { options }
    var allowsMultipleChoices: Bool { multiple }
    var scores: ScoreTable { ScoreTable(choices: options.compactMap { o in o.score.map { (o.value, $0) } }) }
    /// Text scales and value pickers take one choice; the style says so for every kind.
    func defaults(_ add: (_ key: String, _ value: JSON) -> Void) { add("style", .string(multiple ? "multipleChoice" : "singleChoice")) }

    /// Read once, not made per format read (an array literal is allocated on each call).
    private static let styles = ["singleChoice", "multipleChoice"]

    static func parse(_ r: FieldReader, kind: Kind) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        let listKey = kind == .imageChoice ? "imageChoices" : "textChoices"
        var multiple = false
        switch kind {
        case .textChoice:
            multiple = r.choice("style", of: ChoiceFormat.styles, required: true) == "multipleChoice"
        case .imageChoice:
            multiple = r.choice("style", of: ChoiceFormat.styles) == "multipleChoice"
        case .textScale, .valuePicker:
            break
        }
        if kind == .textScale { _ = r.bool("vertical") }
        var shuffle = false
        if kind == .textChoice || kind == .imageChoice {
            shuffle = r.bool("shuffle") ?? false
        }
        let source = r.value("choicesFrom").flatMap { ChoiceSource.parse($0, at: r.path.key("choicesFrom"), d) }
        if source != nil && kind != .textChoice {
            d.error("invalidValue", "\"choicesFrom\" applies to a \"textChoice\" format.", at: r.path.key("choicesFrom"))
        }
        guard let items = r.array(listKey, required: true) else { return nil }
        let options = ChoiceOption.parseList(items, at: r.path.key(listKey), d, images: kind == .imageChoice, scores: true)
        let minimum = kind == .textScale ? 2 : 1
        if items.count < minimum {
            d.error("emptyChoices", "\"\(listKey)\" needs at least \(minimum) choice\(minimum == 1 ? "" : "s").", at: r.path.key(listKey))
        }
        if kind == .textScale || kind == .valuePicker {
            if let i = options.firstIndex(where: { $0.exclusive || $0.other }) {
                d.error("invalidValue", "A \(kind == .textScale ? "text scale" : "value picker") has no exclusive or other choices.", at: r.path.key(listKey).index(i))
            }
            if let index = r.integer("defaultIndex"), !(0..<max(items.count, 1)).contains(index) {
                d.error("outOfRange", "\"defaultIndex\" must be between 0 and \(max(items.count - 1, 0)).", at: r.path.key("defaultIndex"))
            }
        }
        return ChoiceFormat(kind: kind, options: options, multiple: multiple, shuffle: shuffle, source: source)
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        try ChoiceFormat.validateSelection(answer, previous: previous, options: options, multiple: multiple)
    }

    /// Checks an array of choice values and applies the exclusive-choice rule against the
    /// previous selection. `[]` clears the answer.
    static func validateSelection(_ answer: JSON, previous: JSON?, options: [ChoiceOption],
                                  multiple: Bool) throws(AnswerRejection) -> JSON? {
        guard case .array(let items) = answer else {
            throw AnswerRejection("wrongType", multiple ? "choice.wrongTypeMultiple" : "choice.wrongTypeSingle")
        }
        if items.isEmpty { return nil }
        if items.count == 1 {
            // One choice (every single-choice answer): no duplicates, no exclusive-choice rule
            // to apply (a lone choice stands either way), so no lists to build.
            return .array([try resolve(items[0], options: options).1])
        }
        var chosen: [Int] = []
        var kept: [JSON] = []
        chosen.reserveCapacity(items.count)
        kept.reserveCapacity(items.count)
        for item in items {
            let (index, element) = try resolve(item, options: options)
            if chosen.contains(index) {
                throw AnswerRejection("duplicateChoice", "choice.chosenTwice", ["choice": .text(options[index].text)])
            }
            chosen.append(index)
            kept.append(element)
        }
        if !multiple && kept.count > 1 {
            throw AnswerRejection("tooManyChoices", "choice.onlyOne")
        }
        // The exclusive-choice rule needs the previous selection only when some choice is
        // exclusive; most lists have none, and skip resolving the previous answer again.
        guard multiple, options.contains(where: { $0.exclusive }) else { return .array(kept) }

        // A handful of choices: a list, searched, costs less than a set.
        let before = (previous?.arrayValue ?? []).compactMap { try? resolve($0, options: options).0 }
        let added = chosen.filter { !before.contains($0) }
        let exclusives = chosen.filter { options[$0].exclusive }
        if let newExclusive = added.first(where: { options[$0].exclusive }) {
            guard added.count == 1 else {
                throw AnswerRejection("exclusiveChoice", "choice.exclusive", ["choice": .text(options[newExclusive].text)])
            }
            // A newly selected exclusive choice clears the others.
            return chosen.firstIndex(of: newExclusive).map { .array([kept[$0]]) }
        }
        if !exclusives.isEmpty && chosen.count > 1 {
            guard !added.isEmpty else {
                throw AnswerRejection("exclusiveChoice", "choice.exclusive", ["choice": .text(options[exclusives[0]].text)])
            }
            // A choice newly selected next to an exclusive one clears the exclusive one.
            return .array(zip(chosen, kept).filter { !options[$0.0].exclusive }.map(\.1))
        }
        return .array(kept)
    }

    /// The option an answer element names: a value, or `{"value": V, "text": "..."}` for an
    /// "other" choice.
    private static func resolve(_ item: JSON, options: [ChoiceOption]) throws(AnswerRejection) -> (Int, JSON) {
        switch item {
        case .string, .int, .double:
            guard let index = options.index(of: item) else {
                throw AnswerRejection("unknownChoice", options.notAChoiceMessage(item))
            }
            if options[index].other && !options[index].otherTextOptional {
                throw AnswerRejection("missingOtherText", "choice.missingOtherText", ["choice": .text(options[index].text)])
            }
            return (index, options[index].value)
        case .object(let object):
            guard let value = object["value"], let index = options.index(of: value) else {
                throw AnswerRejection("unknownChoice", "choice.objectWithoutValue")
            }
            guard options[index].other else {
                throw AnswerRejection("notOtherChoice", "choice.notOther", ["choice": .text(options[index].text)])
            }
            guard object.keys.allSatisfy({ $0 == "value" || $0 == "text" }) else {
                throw AnswerRejection("unknownKey", "choice.otherKeys")
            }
            guard let text = object["text"]?.stringValue else {
                throw AnswerRejection("wrongType", "choice.otherTextType", ["choice": .text(options[index].text)])
            }
            if text.isEmpty {
                if !options[index].otherTextOptional {
                    throw AnswerRejection("missingOtherText", "choice.missingOtherText", ["choice": .text(options[index].text)])
                }
                return (index, options[index].value)
            }
            return (index, .object(["value": options[index].value, "text": .string(text)]))
        default:
            throw AnswerRejection("wrongType", "choice.valueType", ["type": .text(item.typeName)])
        }
    }
}

/// `multipleValuePicker`: one value from each of several pickers (ResearchKit's
/// `ORKMultipleValuePickerAnswerFormat`).
struct MultipleValuePickerFormat: AnswerFormatRules {
    let pickers: [[ChoiceOption]]

    var resultType: ResultType { .multipleComponent }

    static func parse(_ r: FieldReader) -> (any AnswerFormatRules)? {
        let d = r.diagnostics
        _ = r.string("separator")
        guard let items = r.array("valuePickers", required: true) else { return nil }
        if items.count < 2 {
            d.error("emptyChoices", "\"valuePickers\" needs at least 2 pickers.", at: r.path.key("valuePickers"))
        }
        var pickers: [[ChoiceOption]] = []
        for (i, item) in items.enumerated() {
            let path = r.path.key("valuePickers").index(i)
            guard let picker = FieldReader(item, at: path, d, what: "a value picker") else { continue }
            if let type = picker.string("type"), type != "valuePicker" {
                d.error("invalidValue", "Each of \"valuePickers\" is a \"valuePicker\".", at: path.key("type"))
            }
            if let choices = picker.array("textChoices", required: true) {
                if choices.isEmpty {
                    d.error("emptyChoices", "\"textChoices\" needs at least 1 choice.", at: path.key("textChoices"))
                }
                pickers.append(ChoiceOption.parseList(choices, at: path.key("textChoices"), d))
            }
            _ = picker.integer("defaultIndex")
            picker.finish()
        }
        return MultipleValuePickerFormat(pickers: pickers)
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .array(let items) = answer, items.count == pickers.count else {
            throw AnswerRejection("wrongType", "picker.wrongType", ["count": .count(pickers.count)])
        }
        for (item, options) in zip(items, pickers) where options.index(of: item) == nil {
            throw AnswerRejection("unknownChoice", options.notAChoiceMessage(item))
        }
        return answer
    }
}
