import StepKitBase

/// One answer a choice item offers, from an `answerOption` or a contained ValueSet's concept:
/// the StepKit choice it becomes and the FHIR answer it stands for.
struct FHIRChoice: Sendable {
    /// The StepKit choice value: a coding's code (or `system|code` where codes repeat), the
    /// string, the integer, the date or time as written.
    var value: JSON
    var text: String
    /// The value's FHIR type: `Coding`, `String`, `Integer`, `Date`, `Time`.
    var kind: String
    /// The FHIR answer: `{"valueCoding": {...}}`, `{"valueInteger": 3}`, ...
    var answer: JSON
    /// For a coding: `{"system", "code", "display"}` (those present).
    var coding: JSON?
    var score: Double?
    var initiallySelected: Bool
    /// The text in other languages (a coding's `_display` translation extensions), and the
    /// language of `text` (the Questionnaire's).
    var translations: [String: String] = [:]
    var language = "en"

    /// The StepKit text choice: `{"text", "value"}` (+ `coding` for a coded answer, `score` from
    /// `ordinalValue` / `itemWeight`).
    var json: JSON {
        var o = JSONObject(["text": FHIRExtension.text(text, translations, language: language), "value": value])
        if let coding { o["coding"] = coding }
        if let score { o["score"] = .number(score) }
        return .object(o)
    }

    /// Whether this choice is the FHIR answer value `value` of type `kind` (`enableWhen`'s
    /// answer[x]): codings match by code, and by system when both have one.
    func matches(kind other: String, _ value: JSON) -> Bool {
        guard other == kind else { return false }
        if kind == "Coding" {
            guard let mine = coding?.objectValue, let theirs = value.objectValue,
                  let code = theirs["code"]?.stringValue, mine["code"]?.stringValue == code else { return false }
            if let s = theirs["system"]?.stringValue, let m = mine["system"]?.stringValue { return s == m }
            return true
        }
        return answer.objectValue?["value" + kind]?.sameValue(as: value) ?? false
    }
}

/// Reads an item's answers: `answerOption`, or `answerValueSet` naming a contained ValueSet or
/// one the host supplies (the import option `valueSets`).
struct FHIRChoiceReader {
    let valueSets: [String: JSONObject]
    /// The concepts of the value sets the host supplies, by canonical URL.
    var supplied: [String: [JSONObject]] = [:]
    let diagnostics: Diagnostics
    let report: FHIRReport

    /// The answer types an item type may offer as options.
    static func allowedKinds(_ itemType: String) -> Set<String> {
        switch itemType {
        case "choice", "open-choice": return ["Coding", "String", "Integer", "Date", "Time"]
        case "integer": return ["Integer"]
        case "date": return ["Date"]
        case "time": return ["Time"]
        case "string", "text": return ["String"]
        default: return []
        }
    }

    /// The item's choices; nil when it offers none (or they could not be read: reported).
    func choices(for item: FHIRItem) -> [FHIRChoice]? {
        if let options = item.object["answerOption"] {
            return fromOptions(options, item)
        }
        guard let vs = item.object["answerValueSet"] else { return nil }
        let path = item.path.key("answerValueSet")
        guard let ref = vs.stringValue else {
            diagnostics.error("wrongType", "\"answerValueSet\" must be a string.", at: path)
            return nil
        }
        if ref.hasPrefix("#"), let set = valueSets[String(ref.dropFirst())] {
            return fromValueSet(set, item, path)
        }
        // A canonical may carry a version (`url|1.0`); the host may supply either form.
        let unversioned = ref.split(separator: "|", maxSplits: 1).first.map(String.init) ?? ref
        if let concepts = supplied[ref] ?? supplied[unversioned] {
            guard FHIRChoiceReader.allowedKinds(item.type).contains("Coding") else {
                diagnostics.error("answerTypeMismatch", "A \(item.type) item cannot take its answers from a value set.", at: path)
                return nil
            }
            let choices = concepts.compactMap { concept($0, system: $0["system"]?.stringValue, item, path) }
            return unique(choices, item, path)
        }
        // Declined by the caller (`FHIRAnswerFormat`): the answers are unknown.
        return nil
    }

    private func fromOptions(_ value: JSON, _ item: FHIRItem) -> [FHIRChoice]? {
        let path = item.path.key("answerOption")
        guard case .array(let options) = value else {
            diagnostics.error("wrongType", "\"answerOption\" must be an array.", at: path)
            return nil
        }
        let allowed = FHIRChoiceReader.allowedKinds(item.type)
        var result: [FHIRChoice] = []
        for (i, option) in options.enumerated() {
            let p = path.index(i)
            guard let o = option.objectValue, let (kind, v) = FHIRExtension.value(o) else {
                diagnostics.error("missingValue", "An answerOption needs a value[x].", at: p)
                continue
            }
            guard allowed.contains(kind) else {
                diagnostics.error("answerTypeMismatch", "A \(item.type) item cannot offer a value\(kind) answer.", at: p.key("value" + kind))
                continue
            }
            let extensions = o["extension"]?.arrayValue ?? []
            var score = FHIRExtension.score(in: extensions)
            if kind == "Coding", score == nil { score = FHIRExtension.score(in: v.objectValue?["extension"]?.arrayValue ?? []) }
            let prefix = FHIRExtension.find(FHIRExtension.optionPrefix, in: extensions).flatMap { $0.object["valueString"]?.stringValue }
            for (j, e) in extensions.enumerated() {
                let url = e.objectValue?["url"]?.stringValue ?? ""
                if url != FHIRExtension.ordinalValue && url != FHIRExtension.itemWeight && url != FHIRExtension.optionPrefix {
                    report.add(item.linkId, p.key("extension").index(j), "unsupportedExtension", "The option's extension \(url) is not translated.")
                }
            }
            guard let choice = choice(kind, v, prefix: prefix, score: score, selected: o["initialSelected"]?.boolValue ?? false,
                                      item, at: p.key("value" + kind)) else { continue }
            result.append(choice)
        }
        return unique(result, item, path)
    }

    private func fromValueSet(_ set: JSONObject, _ item: FHIRItem, _ path: JSONPath) -> [FHIRChoice]? {
        var result: [FHIRChoice] = []
        guard FHIRChoiceReader.allowedKinds(item.type).contains("Coding") else {
            diagnostics.error("answerTypeMismatch", "A \(item.type) item cannot take its answers from a value set.", at: path)
            return nil
        }
        if let contains = set["expansion"]?.objectValue?["contains"]?.arrayValue {
            for c in contains.prefix(10_000) {
                guard let o = c.objectValue else { continue }
                if let ch = concept(o, system: o["system"]?.stringValue, item, path) { result.append(ch) }
            }
        } else if let include = set["compose"]?.objectValue?["include"]?.arrayValue {
            for inc in include.prefix(100) {
                guard let i = inc.objectValue else { continue }
                for c in (i["concept"]?.arrayValue ?? []).prefix(10_000) {
                    guard let o = c.objectValue else { continue }
                    if let ch = concept(o, system: i["system"]?.stringValue, item, path) { result.append(ch) }
                }
            }
        }
        guard !result.isEmpty else { return nil }
        return unique(result, item, path)
    }

    private func concept(_ o: JSONObject, system: String?, _ item: FHIRItem, _ path: JSONPath) -> FHIRChoice? {
        var coding = JSONObject()
        if let system { coding["system"] = .string(system) }
        if let code = o["code"] { coding["code"] = code }
        if let display = o["display"] { coding["display"] = display }
        return choice("Coding", .object(coding), prefix: nil, score: FHIRExtension.score(in: o["extension"]?.arrayValue ?? []),
                      selected: false, item, at: path)
    }

    private func choice(_ kind: String, _ v: JSON, prefix: String?, score: Double?, selected: Bool,
                        _ item: FHIRItem, at path: JSONPath) -> FHIRChoice? {
        var value: JSON, text: String, coding: JSON? = nil
        var translations: [String: String] = [:]
        switch (kind, v) {
        case ("Coding", .object(let c)):
            let code = c["code"]?.stringValue
            let display = c["display"]?.stringValue
            guard let key = code ?? display else {
                diagnostics.error("missingValue", "A coding needs a code or a display.", at: path)
                return nil
            }
            value = .string(key)
            text = display ?? key
            if display != nil { translations = FHIRExtension.translations(c["_display"]) }
            var kept = JSONObject()
            for k in ["system", "version", "code", "display"] { if let x = c[k] { kept[k] = x } }
            coding = .object(kept)
        case ("String", .string(let s)), ("Date", .string(let s)), ("Time", .string(let s)):
            value = .string(s); text = s
        case ("Integer", .int(let n)):
            value = .int(n); text = String(n)
        default:
            diagnostics.error("wrongType", "value\(kind) has the wrong JSON type (\(v.typeName)).", at: path)
            return nil
        }
        if let prefix, !prefix.isEmpty {
            text = prefix + " " + text
            translations = translations.mapValues { prefix + " " + $0 }
        }
        var a = JSONObject()
        a["value" + kind] = coding ?? v
        return FHIRChoice(value: value, text: text, kind: kind, answer: .object(a), coding: coding, score: score, initiallySelected: selected,
                          translations: translations, language: item.language)
    }

    /// Makes the values unique: codes shared by several systems become `system|code`; what still
    /// repeats is a definition error.
    private func unique(_ choices: [FHIRChoice], _ item: FHIRItem, _ path: JSONPath) -> [FHIRChoice]? {
        var result = choices
        var counts: [String: Int] = [:]
        for c in result { if let s = c.value.stringValue { counts[s, default: 0] += 1 } }
        for i in result.indices where result[i].kind == "Coding" {
            if let s = result[i].value.stringValue, (counts[s] ?? 0) > 1,
               let system = result[i].coding?.objectValue?["system"]?.stringValue {
                result[i].value = .string(system + "|" + s)
            }
        }
        // A set of the values so far: a list of them, searched for each value, made importing a
        // long answer list quadratic (50,000 answerOptions took 95 s, issue 26).
        var seen = Set<ScalarKey>(minimumCapacity: result.count)
        for c in result {
            // Every value is a string or an integer (`choice` makes nothing else).
            guard let key = ScalarKey(c.value) else { continue }
            if !seen.insert(key).inserted {
                diagnostics.error("duplicateAnswer", "The item offers the answer \(JSONWriter.string(c.value)) twice.", at: path)
                return nil
            }
        }
        return result.isEmpty ? nil : result
    }
}
