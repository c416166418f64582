/// The status codes of the C ABI, as the engine throws them.
package enum Status: Int32, Sendable {
    case invalidArgument = -1
    case parse = -2
    case definition = -3
    case answer = -4
    case state = -5
    case restore = -6
    case io = -7
    case `internal` = -8

    /// The constant's name without the `STEPKIT_` prefix, as the error JSON's `code` and
    /// stepkit_status_name() (one table for both).
    var name: String { staticName.description }

    /// `name` as a literal, so stepkit_status_name() can hand out a static C string.
    package var staticName: StaticString {
        switch self {
        case .invalidArgument: return "EINVAL"
        case .parse: return "EPARSE"
        case .definition: return "EDEFINITION"
        case .answer: return "EANSWER"
        case .state: return "ESTATE"
        case .restore: return "ERESTORE"
        case .io: return "EIO"
        case .internal: return "EINTERNAL"
        }
    }
}

/// One thing wrong, where it is: a problem of a definition, an answer or a call.
package struct Problem: Sendable, Equatable {
    /// A stable camel-case name for programs ("unknownKey", "outOfRange").
    package var code: String
    /// A sentence a host may show as it is.
    package var message: String
    package var path: JSONPath
    /// The form item the problem is about, its identifier as the definition spells it: a host
    /// reads it rather than parsing `path` (which quotes identifiers that are not plain names).
    package var item: String? = nil
    /// The step the problem is about, where that is not the current one: a missing required
    /// answer listed at completion (`Session.missingAnswers`).
    package var step: String? = nil
    /// A message for the participant as its catalogue key and arguments, so the session can
    /// write `message` in the participant's language (`localized(_:)`); nil for the others.
    package var text: Message? = nil

    package init(code: String, message: String, path: JSONPath, item: String? = nil, step: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.item = item
        self.step = step
    }

    /// A problem whose message is for the participant, in English until `localized(_:)`.
    package init(code: String, text: Message, path: JSONPath, item: String? = nil, step: String? = nil) {
        self.init(code: code, message: text.english, path: path, item: item, step: step)
        self.text = text
    }

    /// The problem with its participant message in `catalogue`'s language.
    package func localized(_ catalogue: MessageCatalogue) -> Problem {
        guard let text else { return self }
        var copy = self
        copy.message = text.render(in: catalogue)
        return copy
    }

    package var json: JSON {
        var fields = JSONObject(["code": .string(code), "message": .string(message), "path": .string(path.description)])
        if let step { fields["step"] = .string(step) }
        if let item { fields["item"] = .string(item) }
        return .object(fields)
    }
}

/// Every failure of the engine: a status and the problems behind it (at least one).
package struct StepKitError: Error, Sendable {
    package var status: Status
    package var problems: [Problem]

    package init(_ status: Status, problems: [Problem]) {
        self.status = status
        self.problems = problems.isEmpty
            ? [Problem(code: "unknown", message: "The call failed.", path: .root)]
            : problems
    }

    package init(_ status: Status, code: String, message: String, path: JSONPath = .root) {
        self.init(status, problems: [Problem(code: code, message: message, path: path)])
    }

    /// The error JSON documented in stepkit.h.
    package var json: JSON {
        let first = problems.first
        var message = first?.message ?? ""
        if status == .definition && problems.count > 1 {
            message = "The task definition has \(problems.count) problems; the first: " + message
        }
        var fields = JSONObject([
            "status": .int(Int64(status.rawValue)),
            "code": .string(status.name),
            "message": .string(message),
            "path": .string(first?.path.description ?? ""),
        ])
        if let step = first?.step { fields["step"] = .string(step) }
        if let item = first?.item { fields["item"] = .string(item) }
        fields["errors"] = .array(problems.map(\.json))
        return .object(fields)
    }
}

/// Collects the problems of a definition so that all of them are reported at once.
@usableFromInline package final class Diagnostics {
    package private(set) var problems: [Problem] = []

    package init() {}

    package var isEmpty: Bool { problems.isEmpty }

    @usableFromInline package func error(_ code: String, _ message: String, at path: JSONPath) {
        problems.append(Problem(code: code, message: message, path: path))
    }
}
