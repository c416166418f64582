/// One step of a task, compiled: what it asks and how the host should present it.
struct Step: Sendable {
    enum Content: Sendable {
        /// Presents text only (`instruction`, `completion`).
        case message
        case question(AnswerFormat)
        case form(Form)
    }

    let type: String
    let identifier: String
    let optional: Bool
    let content: Content
    /// The definition as the host should present it: the source object with defaults filled in.
    let presentation: JSONObject

    /// Whether the step takes an answer (a question or a form).
    var takesAnswers: Bool {
        if case .message = content { return false }
        return true
    }
}

/// A form's items and section headers, in order (ResearchKit's `ORKFormStep`).
struct Form: Sendable {
    struct Item: Sendable {
        let identifier: String
        let optional: Bool
        let format: AnswerFormat
    }

    /// The question items in order (section headers are only presentation).
    let items: [Item]
    let itemIndex: [String: Int]

    func item(_ identifier: String) -> Item? {
        itemIndex[identifier].flatMap { items.indices.contains($0) ? items[$0] : nil }
    }
}
