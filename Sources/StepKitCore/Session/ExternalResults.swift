import StepKitBase

/// Results of other task runs that predicates may read (`{"task": T, "step": S}` selectors):
/// the session option `additionalTaskResults`, ResearchKit's `additionalTaskResults`.
struct ExternalResults: Sendable {
    /// Task identifier → step identifier → question identifier → (answer, type).
    private var answers: [String: [String: [String: (JSON, ResultType)]]] = [:]
    /// The results as the host gave them (nil when none were given): what restoration data
    /// saves, so the lookup above and its source are one option, stored once.
    private(set) var given: JSON?

    init() {}

    /// Reads an array of task results in StepKit's result format; the last result of a step wins.
    init(_ value: JSON, at path: JSONPath, _ d: Diagnostics) {
        given = value
        guard case .array(let tasks) = value else {
            d.error("wrongType", "\"additionalTaskResults\" is an array of task results.", at: path)
            return
        }
        for (t, task) in tasks.enumerated() {
            let taskPath = path.index(t)
            guard let taskID = task.objectValue?["identifier"]?.stringValue, let steps = task.objectValue?["results"]?.arrayValue else {
                d.error("wrongType", "A task result has a string \"identifier\" and an array \"results\".", at: taskPath)
                continue
            }
            for (s, step) in steps.enumerated() {
                collect(step, task: taskID, at: taskPath.key("results").index(s), d)
            }
        }
    }

    /// A step result, or a section result holding step results.
    private mutating func collect(_ step: JSON, task: String, at path: JSONPath, _ d: Diagnostics) {
        guard let stepID = step.objectValue?["identifier"]?.stringValue, let results = step.objectValue?["results"]?.arrayValue else {
            d.error("wrongType", "A step result has a string \"identifier\" and an array \"results\".", at: path)
            return
        }
        for (q, question) in results.enumerated() {
            guard let object = question.objectValue else { continue }
            if object["type"] == nil, object["results"] != nil {
                collect(question, task: task, at: path.key("results").index(q), d)
                continue
            }
            guard let questionID = object["identifier"]?.stringValue, let typeName = object["type"]?.stringValue,
                  let type = ResultType(rawValue: typeName) else {
                if object["type"]?.stringValue == "file" { continue }
                d.error("wrongType", "A question result has a string \"identifier\" and a known \"type\".", at: path.key("results").index(q))
                continue
            }
            answers[task, default: [:]][stepID, default: [:]][questionID] = object["answer"].flatMap { $0.isNull ? nil : ($0, type) }
        }
    }

    func answer(task: String, step: String, item: String?) -> (value: JSON, type: ResultType)? {
        answers[task]?[step]?[item ?? step].map { (value: $0.0, type: $0.1) }
    }
}
