import StepKitBase

/// The extensions the importer reads, by URL, and reading one: an extension is
/// `{"url": URL, "valueX": ...}`.
enum FHIRExtension {
    private static let core = "http://hl7.org/fhir/StructureDefinition/"
    private static let sdc = "http://hl7.org/fhir/uv/sdc/StructureDefinition/"

    static let minValue = core + "minValue"
    static let maxValue = core + "maxValue"
    static let minLength = core + "minLength"
    static let regex = core + "regex"
    static let entryFormat = core + "entryFormat"
    static let itemControl = core + "questionnaire-itemControl"
    static let sliderStepValue = core + "questionnaire-sliderStepValue"
    static let unit = core + "questionnaire-unit"
    static let hidden = core + "questionnaire-hidden"
    static let ordinalValue = core + "ordinalValue"
    static let itemWeight = core + "itemWeight"
    static let optionPrefix = core + "questionnaire-optionPrefix"
    static let displayCategory = core + "questionnaire-displayCategory"
    static let renderingMarkdown = core + "rendering-markdown"
    static let renderingXhtml = core + "rendering-xhtml"
    static let translation = core + "translation"

    /// The translations of a primitive element, from its `_element` object's `translation`
    /// extensions (`lang` a BCP-47 code, `content` the text): language tag → text. Entries
    /// without both, or whose tag is not BCP-47, are left out.
    static func translations(_ element: JSON?) -> [String: String] {
        var found: [String: String] = [:]
        for e in element?.objectValue?["extension"]?.arrayValue ?? [] {
            guard let o = e.objectValue, o["url"]?.stringValue == translation else { continue }
            var lang: String?, content: String?
            for part in o["extension"]?.arrayValue ?? [] {
                guard let p = part.objectValue else { continue }
                switch p["url"]?.stringValue {
                case "lang": lang = p["valueCode"]?.stringValue
                case "content": content = p["valueString"]?.stringValue ?? p["valueMarkdown"]?.stringValue
                default: break
                }
            }
            if let tag = lang.flatMap(LanguageTag.canonical), let content { found[tag] = content }
        }
        return found
    }

    /// `text` as a task text: the string, or with translations an object of language tags
    /// (`language`, the Questionnaire's, for the text itself).
    static func text(_ text: String, _ translations: [String: String], language: String) -> JSON {
        guard !translations.isEmpty else { return .string(text) }
        var object = JSONObject([language: .string(text)])
        for tag in translations.keys.sorted() where tag != language { object[tag] = translations[tag].map { .string($0) } }
        return .object(object)
    }

    /// The extensions an item's own translation reads (an item's other extensions are reported).
    static let readOnItems: Set<String> = [minValue, maxValue, minLength, regex, entryFormat, itemControl,
                                           sliderStepValue, unit, hidden, displayCategory]

    /// The extension with `url` in `list`, with its index.
    static func find(_ url: String, in list: [JSON]) -> (index: Int, object: JSONObject)? {
        for (i, e) in list.enumerated() {
            if let o = e.objectValue, o["url"]?.stringValue == url { return (i, o) }
        }
        return nil
    }

    /// The `value[x]` of an extension (or of any FHIR element with a choice of types): the type
    /// suffix (`Integer`, `Coding`, ...) and the value.
    static func value(_ object: JSONObject, prefix: String = "value") -> (type: String, value: JSON)? {
        var found: (String, JSON)?
        object.forEachEntry { key, value in
            if found == nil, key.hasPrefix(prefix), key.count > prefix.count {
                found = (String(key.dropFirst(prefix.count)), value)
            }
        }
        return found
    }

    /// The number of an `ordinalValue` or `itemWeight` extension in `list`, if any.
    static func score(in list: [JSON]) -> Double? {
        for url in [ordinalValue, itemWeight] {
            if let e = find(url, in: list), let v = value(e.object)?.value.numericValue, v.isFinite { return v }
        }
        return nil
    }

    /// The codes of an `itemControl` extension (`drop-down`, `radio-button`, `slider`, ...).
    static func controlCode(_ list: [JSON]) -> String? {
        guard let e = find(itemControl, in: list),
              let coding = e.object["valueCodeableConcept"]?.objectValue?["coding"]?.arrayValue else { return nil }
        return coding.lazy.compactMap { $0.objectValue?["code"]?.stringValue }.first
    }

    /// Whether the `questionnaire-hidden` extension is present and true.
    static func isHidden(_ list: [JSON]) -> Bool {
        find(hidden, in: list)?.object["valueBoolean"]?.boolValue ?? false
    }
}
