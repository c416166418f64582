import StepKitBase

/// What the importer did not translate as written, item by item: the import report.
///
/// Nothing of a Questionnaire is dropped silently: an item type StepKit has no format for, an
/// extension it does not read, a condition it cannot express exactly, each becomes one entry
/// naming the item's linkId, the FHIR path and the reason. With the `strict` option any entry
/// is a definition error instead.
struct FHIRReportEntry: Sendable, Equatable {
    /// The item's linkId; empty for the Questionnaire itself.
    var linkId: String
    /// Where in the Questionnaire: `item[2].item[0].extension[1]`.
    var path: JSONPath
    /// A stable camel-case name: `unsupportedItemType`, `unsupportedExtension`, ...
    var code: String
    /// A sentence saying what was left out and what the task does instead.
    var reason: String

    var json: JSON {
        .object(["linkId": .string(linkId), "path": .string(path.description), "code": .string(code), "reason": .string(reason)])
    }
}

/// Collects report entries in document order.
package final class FHIRReport {
    private(set) var entries: [FHIRReportEntry] = []

    func add(_ linkId: String, _ path: JSONPath, _ code: String, _ reason: String) {
        entries.append(FHIRReportEntry(linkId: linkId, path: path, code: code, reason: reason))
    }

    package var json: JSON { .array(entries.map(\.json)) }
}
