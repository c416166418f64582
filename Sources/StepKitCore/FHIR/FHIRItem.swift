import StepKitBase

/// One Questionnaire item as the importer reads it: its linkId, type, FHIR path and children.
///
/// Parsed once, checked for what makes a Questionnaire unusable (no linkId, an unknown type) and
/// walked by every later pass; items nest at most `FHIRItem.maxDepth` deep, so each recursive
/// walk over them is bounded.
struct FHIRItem: Sendable {
    /// Items nest at most this deep (the JSON depth limit allows no more than 32 anyway: each
    /// level is an `item` array and an object).
    static let maxDepth = 32

    static let types: Set<String> = ["group", "display", "boolean", "decimal", "integer", "date", "dateTime", "time",
                                     "string", "text", "url", "choice", "open-choice", "attachment", "reference",
                                     "quantity", "question"]

    let object: JSONObject
    let path: JSONPath
    let linkId: String
    let type: String
    let children: [FHIRItem]

    var text: String? { object["text"]?.stringValue }
    var prefix: String? { object["prefix"]?.stringValue }
    /// `prefix` and `text` as one label ("1. How old are you?").
    var label: String? {
        switch (prefix, text) {
        case (let p?, let t?) where !p.isEmpty: return p + " " + t
        case (_, let t?): return t
        case (let p?, nil): return p
        default: return nil
        }
    }
    /// `repeats`; the string `"true"` (a defect some published forms have) reads as true and is
    /// reported (`FHIRAnswerFormat`).
    var repeats: Bool { object["repeats"]?.boolValue ?? (object["repeats"]?.stringValue == "true") }
    var required: Bool { object["required"]?.boolValue ?? false }
    var readOnly: Bool { object["readOnly"]?.boolValue ?? false }
    var isQuestion: Bool { type != "group" && type != "display" }
    var extensions: [JSON] { object["extension"]?.arrayValue ?? [] }
    /// The Questionnaire's `language` (BCP-47, canonical case), "en" when it gives none.
    var language = "en"

    /// `label` as a task text, with the translations of `text` (its `_text` translation
    /// extensions, the prefix kept in front) as an object of languages.
    var labelText: JSON? {
        guard let label else { return nil }
        var translations = FHIRExtension.translations(object["_text"])
        if let p = prefix, !p.isEmpty { translations = translations.mapValues { p + " " + $0 } }
        return FHIRExtension.text(label, translations, language: language)
    }

    /// Reads `items` (the value of an `item` key at `path`), reporting every problem.
    static func parseList(_ value: JSON, at path: JSONPath, depth: Int, language: String = "en", _ d: Diagnostics) -> [FHIRItem] {
        guard case .array(let items) = value else {
            d.error("wrongType", "\"item\" must be an array, found \(value.typeName).", at: path)
            return []
        }
        guard depth < maxDepth else {
            d.error("tooDeep", "Items nest more than \(maxDepth) levels deep.", at: path)
            return []
        }
        var result: [FHIRItem] = []
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard case .object(let object) = item else {
                d.error("wrongType", "An item must be an object, found \(item.typeName).", at: p)
                continue
            }
            var linkId = ""
            switch object["linkId"] {
            case .string(let s)? where !s.isEmpty: linkId = s
            case nil: d.error("missingLinkId", "The item has no linkId.", at: p.key("linkId"))
            default: d.error("missingLinkId", "\"linkId\" must be a non-empty string.", at: p.key("linkId"))
            }
            var type = ""
            switch object["type"] {
            case .string(let s)? where types.contains(s): type = s
            case .string(let s)?: d.error("unknownItemType", "Unknown item type \"\(s)\".", at: p.key("type"))
            case nil: d.error("missingKey", "The item has no type.", at: p.key("type"))
            default: d.error("wrongType", "\"type\" must be a string.", at: p.key("type"))
            }
            let children = object["item"].map { parseList($0, at: p.key("item"), depth: depth + 1, language: language, d) } ?? []
            guard !linkId.isEmpty, !type.isEmpty else { continue }
            result.append(FHIRItem(object: object, path: p, linkId: linkId, type: type, children: children, language: language))
        }
        return result
    }
}

/// Every item by linkId, and the checks that need all of them: duplicate linkIds.
struct FHIRItemIndex {
    private(set) var items: [String: FHIRItem] = [:]
    /// linkId of each item's parent (absent at the top level).
    private(set) var parents: [String: String] = [:]

    init(_ top: [FHIRItem], _ d: Diagnostics) {
        add(top, parent: nil, d)
    }

    private mutating func add(_ list: [FHIRItem], parent: String?, _ d: Diagnostics) {
        for item in list {
            if let first = items[item.linkId] {
                d.error("duplicateLinkId", "The linkId \"\(item.linkId)\" is already used by \(first.path).", at: item.path.key("linkId"))
            } else {
                items[item.linkId] = item
                if let parent { parents[item.linkId] = parent }
            }
            add(item.children, parent: item.linkId, d)   // bounded: parseList stops at maxDepth
        }
    }

    /// The item's ancestors, nearest first (bounded by the nesting limit).
    func ancestors(of linkId: String) -> [String] {
        var result: [String] = []
        var current = parents[linkId]
        while let p = current, result.count <= FHIRItem.maxDepth {
            result.append(p)
            current = parents[p]
        }
        return result
    }
}
