import StepKitBase

/// The Questionnaire's shape as the export needs it, kept with the task it was imported as:
/// every item in order, where its answer is in the session, and how each StepKit answer
/// becomes a FHIR answer.
package struct FHIRLayout: Sendable {
    /// `Questionnaire.url` (with `|version`), or `Questionnaire/<id>`; nil when it has neither.
    var questionnaire: String?
    var items: [FHIRNode]
}

/// One Questionnaire item in the layout (children nest as in the Questionnaire, at most
/// `FHIRItem.maxDepth` deep).
struct FHIRNode: Sendable {
    var linkId: String
    var text: String?
    var type: String
    /// The question's step, and its form item if it is one; nil when it is not asked.
    var step: String?
    var formItem: String?
    var choices: [FHIRChoice] = []
    var otherValue: JSON?
    var unit: JSONObject?
    /// For a hidden or read-only item: its `initial` answers (FHIR answer objects), given when
    /// `enabled` holds.
    var fixedAnswers: [JSON] = []
    /// Its `enableWhen` and its groups', as a StepKit predicate (compiled into `enabled`).
    var condition: JSON?
    var enabled: Predicate?
    /// For a calculated item: the task calculation giving its answer.
    var calculation: String?
    /// A calculated item inside a repeating group: its calculation is per instance (an array,
    /// one value per repetition; null where the item is disabled).
    var perRepetition = false
    /// A repeating group: its instances are the answer of its own form item (`step`,
    /// `linkId`), one response item per instance, its children's answers read from each.
    var repeating = false
    var children: [FHIRNode] = []
}

extension FHIRNode {
    /// The per-repetition calculations of the items under this node (a repeating group's).
    var perRepetitionCalculations: [String] {
        var names: [String] = []
        var stack = children
        while let node = stack.popLast() {
            if node.perRepetition, let name = node.calculation { names.append(name) }
            stack += node.children
        }
        return names
    }

    var hasPerRepetitionCalculation: Bool { !perRepetitionCalculations.isEmpty }
}
