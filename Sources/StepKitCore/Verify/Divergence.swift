import StepKitBase

/// One way a submission differs from what the task does with its answers: a stable code, a
/// sentence, and where in the submission it is (`path`, as JSON paths are written elsewhere).
struct Divergence: Sendable {
    /// The codes a report uses (docs/verify.md lists what each means).
    enum Code: String, Sendable {
        case otherTask, otherVersion
        case unexpectedStep, missingStep, repeatedStep, reorderedStep
        case answerRefused, wrongType, requiredAnswerMissing, disabledItem, duplicateItem
        case calculationMismatch, datesOutOfOrder, invalidDate
        case orderMismatch
        case gameMismatch
        case unknownIdentifier, unknownField
    }

    var code: Code
    var message: String
    var path: JSONPath
    var step: String? = nil
    var item: String? = nil
    /// The engine's own code for a refused answer (`outOfRange`, `validationFailed`, ...).
    var reason: String? = nil

    var json: JSON {
        var o = JSONObject(["code": .string(code.rawValue), "message": .string(message), "path": .string(path.description)])
        if let step { o["step"] = .string(step) }
        if let item { o["item"] = .string(item) }
        if let reason { o["reason"] = .string(reason) }
        return .object(o)
    }
}

/// The divergences found so far, at most `limit` of them (a submission made of ten thousand
/// wrong steps is reported by its first thousand, and the report says it stopped).
struct Divergences {
    static let limit = 1000
    private(set) var list: [Divergence] = []
    private(set) var truncated = false

    mutating func add(_ d: Divergence) {
        guard list.count < Divergences.limit else { truncated = true; return }
        list.append(d)
    }

    mutating func add(_ code: Divergence.Code, _ message: String, at path: JSONPath, step: String? = nil, item: String? = nil, reason: String? = nil) {
        add(Divergence(code: code, message: message, path: path, step: step, item: item, reason: reason))
    }

    /// Whether a divergence with this code is reported at `path` already.
    func has(_ code: Divergence.Code, at path: JSONPath) -> Bool {
        list.contains { $0.code == code && $0.path == path }
    }

    /// Changes the code and message of the divergence at `path` with code `from`.
    mutating func reclassify(at path: JSONPath, from: Divergence.Code, to: Divergence.Code, message: String) {
        guard let i = list.firstIndex(where: { $0.code == from && $0.path == path }) else { return }
        list[i].code = to
        list[i].message = message
    }
}
