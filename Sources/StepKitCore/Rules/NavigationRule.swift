import StepKitBase

/// Where navigation can go: a step, a section (its first step) or the end of the task.
enum Destination: Sendable, Equatable {
    case step(Int)
    case section(Int)
    case end
}

/// What happens after a step or section (ResearchKit's `ORKStepNavigationRule`).
enum NavigationRule: Sendable {
    struct Branch: Sendable {
        let when: Predicate
        /// The condition as the definition wrote it, for the edges `stepkit_task_graph` lists.
        let condition: JSON
        let destination: Destination
    }

    /// ResearchKit's `ORKPredicateStepNavigationRule`: the first branch whose predicate holds,
    /// else the default destination, else the next step in order (nil).
    case predicate(branches: [Branch], defaultDestination: Destination?)
    /// ResearchKit's `ORKDirectStepNavigationRule`.
    case direct(Destination)
}

/// `stepModifiers`: fields of a step set when it is reached and the predicate holds
/// (ResearchKit's `ORKStepModifier`).
struct StepModifier: Sendable {
    let when: Predicate
    let fields: JSONObject
    static let settableFields = ["title", "text", "detailText", "footnote", "image", "placeholder", "question"]
}
