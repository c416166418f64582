import StepKitBase

/// One step of a task, compiled: what it asks and how the host should present it.
///
/// A class, immutable: a session reads its current step several times a call
/// (`Session.currentStep`), and as a struct every read copied all its fields, retaining and
/// releasing each (`benchmarks/README.md`); now a read is one reference.
final class Step: Sendable {
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
    /// The sections the step is in, outermost first (indexes into `Task.sections`).
    let sections: [Int]
    /// Where the step is in the definition (`steps[2].steps[0]`), for the checker's messages.
    let definitionPath: JSONPath
    /// For `active`, `countdown` and `wait` steps (whose content is `.message`): their timing,
    /// prompts and recorders.
    let active: ActiveStepSettings?
    /// `calculations`: the names of the calculations the state shows with this step (checked
    /// against the task's calculations once they are compiled).
    let calculationNames: [String]
    /// For the consent steps and the steps the host reports (`Model/HostedSteps.swift`).
    let hosted: HostedStep?

    init(type: String, identifier: String, optional: Bool, content: Content, presentation: JSONObject,
         sections: [Int], definitionPath: JSONPath, active: ActiveStepSettings? = nil,
         calculationNames: [String] = [], hosted: HostedStep? = nil) {
        self.type = type
        self.identifier = identifier
        self.optional = optional
        self.content = content
        self.presentation = presentation
        self.sections = sections
        self.definitionPath = definitionPath
        self.active = active
        self.calculationNames = calculationNames
        self.hosted = hosted
    }

    /// The step in `stepkit_task_info`: identifier, type, what a host calls it
    /// (`displayTitle`), whether it is an active step (`isActive`) and, for an active, countdown
    /// or wait step, its effective `stepDuration` in seconds (ResearchKit's default included).
    var infoJSON: JSON {
        var fields = JSONObject(["identifier": .string(identifier), "type": .string(type)])
        fields["displayTitle"] = .string(Step.displayTitle(presentation, identifier: identifier))
        fields["isActive"] = .bool(isActive)
        if let active { fields["stepDuration"] = .number(Double(active.duration) / 1000) }
        return .object(fields)
    }

    /// Whether the step is an active step (`active`, `countdown`, `wait`): one with a timer and
    /// recorders the host runs (`stepkit_session_active`). Hosts read it as `isActive` in the
    /// state's step and the task info's steps instead of keeping a list of types.
    var isActive: Bool { active != nil }

    /// What a host calls a step, decided here once for every host (the CLI, the graph, the web
    /// service read it as `displayTitle`): its `title`, else its `question`, else its `text`
    /// (the first that is not blank, without the white space around it), else its identifier.
    /// `fields` is the step as presented: after step modifiers and piping in the state.
    static func displayTitle(_ fields: JSONObject, identifier: String) -> String {
        for key in ["title", "question", "text"] {
            if let text = fields[key]?.stringValue {
                let trimmed = trimmingWhiteSpace(text)
                if !trimmed.isEmpty { return trimmed }
            }
        }
        return identifier
    }

    private static func trimmingWhiteSpace(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }

    /// Whether the author marked the step `"terminal": true`: the task may deliberately end
    /// after it without passing a completion step (a screening that stops the task).
    var isTerminal: Bool { presentation["terminal"]?.boolValue == true }

    /// A review step (`Session+Review.swift`): it lists the path's answers and asks nothing.
    var isReview: Bool { type == "review" }

    /// A page step: its content is a form whose items are its sub-steps (`TaskCompiler+Page`),
    /// and its results are named `page.substep` (ResearchKit's page results).
    var isPage: Bool { type == "page" }

    /// Whether the step takes an answer (a question, a form or a page).
    var takesAnswers: Bool {
        if case .message = content { return false }
        return true
    }

    /// The answer format of a question step, or of a form's item.
    func format(item: String? = nil) -> AnswerFormat? {
        switch content {
        case .message: return nil
        case .question(let format): return item == nil ? format : nil
        case .form(let form): return item.flatMap { form.item($0)?.format }
        }
    }
}

/// A form's items and section headers, in order (ResearchKit's `ORKFormStep`).
///
/// A class, immutable, like `AnswerFormat`: reading a step's content copies its payload, and a
/// form is read several times a call.
final class Form: Sendable {
    struct Item: Sendable {
        let identifier: String
        let optional: Bool
        let format: AnswerFormat
        /// The item's text for messages ("Answer "Email" to continue."), or its identifier.
        let label: String
    }

    /// The question items in order (section headers are only presentation).
    let items: [Item]
    let itemIndex: [String: Int]

    /// The items that confirm another (`confirmText`), by identifier; most forms have none, and
    /// then the confirmation check costs nothing (it cast every item's format to find out).
    let confirmations: [String: ConfirmTextFormat]

    init(items: [Item], itemIndex: [String: Int]) {
        self.items = items
        self.itemIndex = itemIndex
        var confirmations: [String: ConfirmTextFormat] = [:]
        for item in items {
            if let confirm = item.format.rules as? ConfirmTextFormat { confirmations[item.identifier] = confirm }
        }
        self.confirmations = confirmations
    }

    /// The item named `identifier`. A form of a few items is searched by comparing, which costs
    /// less than hashing the name (`JSONObject` does the same).
    func item(_ identifier: String) -> Item? {
        if items.count <= Form.linearLimit { return items.first { $0.identifier == identifier } }
        return itemIndex[identifier].flatMap { items[ifPresent: $0] }
    }

    private static let linearLimit = 8
}

/// A named group of steps (SageResearch's section step), walked as if its steps were inlined.
/// Rules and skip rules may target it; its steps' results nest under its own.
struct Section: Sendable {
    let identifier: String
    /// The first and last step inside it, as indexes into `Task.steps`.
    let firstStep: Int
    let lastStep: Int
    /// The enclosing sections, outermost first.
    let sections: [Int]
    /// Where the section is in the definition (`steps[2]`), for the checker's messages.
    var definitionPath: JSONPath = .root
    /// `"shuffleSteps": true`: a run shows its steps in its seeded order, steps with
    /// `"pinned": true` where the definition puts them (docs/randomization.md). Such a section
    /// holds steps only, so its positions are those of its steps.
    var shuffled = false

    func contains(step: Int) -> Bool { step >= firstStep && step <= lastStep }
}
