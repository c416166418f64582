/// `sdc-questionnaire-calculatedExpression` in the FHIRPath subset StepKit's expression
/// language expresses, as a task calculation:
/// - `%resource.answers().value.ordinal().sum()` (SDC's total score) → `{"sum": [{"score": Q}, ...]}`
///   over every asked question whose answers carry scores;
/// - `%resource.item.where(linkId='X').answer.value` (X a top-level item, as FHIRPath's
///   `item` reaches no deeper) or `%resource.repeat(item).where(linkId='X').answer.value` (any
///   depth), with either quote → `{"answer": X}`.
/// Anything else is reported; the item is then not asked (a calculated item is not typed in).
struct FHIRCalculations {
    static let url = "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression"

    let prepared: [String: FHIRPrepared]
    let locations: [String: (step: String, item: String?)]
    /// The asked items in document order.
    let order: [String]
    /// The top-level items' linkIds: `%resource.item` reaches only these.
    let topLevel: Set<String>

    /// The expression of an item's calculatedExpression, with where it is.
    static func expression(of item: FHIRItem) -> (text: String, path: JSONPath)? {
        guard let e = FHIRExtension.find(url, in: item.extensions),
              let v = e.object["valueExpression"]?.objectValue, let text = v["expression"]?.stringValue else { return nil }
        return (text, item.path.key("extension").index(e.index))
    }

    private func selector(_ linkId: String) -> JSON? {
        guard let loc = locations[linkId] else { return nil }
        return loc.item.map { .object(["step": .string(loc.step), "item": .string($0)]) } ?? .string(loc.step)
    }

    /// The StepKit expression, or nil when the FHIRPath is outside the subset.
    func translate(_ fhirpath: String) -> JSON? {
        let text = String(fhirpath.unicodeScalars.filter { $0 != " " && $0 != "\n" && $0 != "\t" && $0 != "\r" })
        if text == "%resource.answers().value.ordinal().sum()" {
            let scored = order.filter { id in prepared[id]?.choices?.contains { $0.score != nil } == true }
            let parts = scored.compactMap { selector($0).map { JSON.object(["score": $0]) } }
            return parts.isEmpty ? nil : .object(["sum": .array(parts)])
        }
        for prefix in ["%resource.item.where(linkId=", "%resource.repeat(item).where(linkId="] where text.hasPrefix(prefix) {
            let suffix = ").answer.value"
            guard text.hasSuffix(suffix), text.count > prefix.count + suffix.count + 2 else { return nil }
            let quoted = text.dropFirst(prefix.count).dropLast(suffix.count)
            guard let q = quoted.first, q == "'" || q == "\"", quoted.last == q else { return nil }
            let linkId = String(quoted.dropFirst().dropLast())
            // `item.where(...)` looks at the top level only; `repeat(item)` at every depth.
            guard prefix.contains("repeat") || topLevel.contains(linkId) else { return nil }
            return selector(linkId).map { .object(["answer": $0]) }
        }
        return nil
    }
}
