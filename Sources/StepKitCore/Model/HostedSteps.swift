import StepKitBase

/// The steps ResearchKit shows with views of its own, whose outcome StepKit cannot observe:
/// the consent steps and the steps whose result the host reports (`stepkit_session_report`).
///
/// - `visualConsent` walks the consent document's sections (a message step; the sections are
///   in its presentation as `consentSections`).
/// - `consentReview` is a form the engine writes: `consented` (agree/disagree), `givenName`,
///   `familyName`, with the document in its presentation; its result adds the consent record.
/// - `signature`, `imageCapture`, `table`, `webView`, `videoInstruction`, `pdfViewer`,
///   `requestPermissions` are answered only by a report (`ReportedFormat`): `set_answer` refuses
///   them, so what the result says happened is what the host said it observed.
enum HostedStep: Sendable {
    case visualConsent(ConsentDocument)
    case consentReview(ConsentDocument)
    case reported(ReportedFormat.Kind)

    var reportKind: ReportedFormat.Kind? {
        if case .reported(let kind) = self { return kind }
        return nil
    }

    var consentDocument: ConsentDocument? {
        switch self {
        case .visualConsent(let document), .consentReview(let document): return document
        case .reported: return nil
        }
    }

    /// The types these steps have in a definition.
    static let types = ["visualConsent", "consentReview"] + ReportedFormat.Kind.allCases.map(\.rawValue)
}

extension TaskCompiler {
    /// A hosted step's content, and what its presentation adds to the definition's fields.
    struct HostedCompiled {
        var content: Step.Content
        var hosted: HostedStep
        var presentation = JSONObject()
    }

    static func compileHosted(_ type: String, _ r: FieldReader, at path: JSONPath, _ b: Builder) -> HostedCompiled? {
        let d = b.d
        switch type {
        case "visualConsent":
            guard let document = requireDocument(type, at: path, b) else { return nil }
            return HostedCompiled(content: .message, hosted: .visualConsent(document), presentation: JSONObject(["consentSections": document.visualSectionsJSON]))
        case "consentReview":
            let reason = r.string("reasonForConsent", nonEmpty: true) ?? "I have read the document above and agree to take part."
            let requiresName = r.bool("requiresName") ?? true
            guard let document = requireDocument(type, at: path, b) else { return nil }
            let identifier = r.object["identifier"]?.stringValue ?? ""
            let items = consentReviewItems(reason: reason)
            guard let form = compileForm(items, at: path.key("formItems"), stepIndex: b.steps.count, b) else { return nil }
            if requiresName {
                b.pendingValidations.append((b.steps.count, consentNameRules(identifier), path))
            }
            return HostedCompiled(content: .form(form), hosted: .consentReview(document),
                                  presentation: JSONObject(["document": document.reviewJSON, "formItems": .array(items), "requiresName": .bool(requiresName)]))
        default:
            guard let kind = ReportedFormat.Kind(rawValue: type) else { return nil }
            guard let format = ReportedFormat.parse(kind, r, at: path, d) else { return nil }
            let answerFormat = AnswerFormat(type: kind.rawValue, rules: format, allowsDontKnow: false, personalData: nil,
                                            presentation: JSONObject(["type": .string(kind.rawValue)]))
            // Hosts read `reportedByHost` instead of keeping a list of these types.
            return HostedCompiled(content: .question(answerFormat), hosted: .reported(kind), presentation: JSONObject(["reportedByHost": .bool(true)]))
        }
    }

    private static func requireDocument(_ type: String, at path: JSONPath, _ b: Builder) -> ConsentDocument? {
        if let document = b.consentDocument { return document }
        // A document with problems was reported where it is; a missing one is reported here.
        if !b.consentDocumentGiven {
            b.d.error("missingConsentDocument", "A \"\(type)\" step needs the task's \"consentDocument\".", at: path.key("type"))
        }
        return nil
    }

    /// The consent review's items: the agreement first, then the names.
    private static func consentReviewItems(reason: String) -> [JSON] {
        func name(_ identifier: String, _ text: String) -> JSON {
            .object(["identifier": .string(identifier), "text": .string(text), "optional": .bool(true),
                     "answerFormat": .object(["type": .string("text"), "maximumLength": .int(200), "multipleLines": .bool(false)])])
        }
        return [
            .object(["identifier": .string("consented"), "text": .string(reason),
                     "answerFormat": .object(["type": .string("boolean"), "yesString": .string("Agree"), "noString": .string("Disagree")])]),
            name("givenName", "Given name"),
            name("familyName", "Family name"),
        ]
    }

    /// Agreeing needs both names; disagreeing needs none.
    private static func consentNameRules(_ step: String) -> JSON {
        func missing(_ item: String, _ message: String) -> JSON {
            .object(["when": .object(["all": .array([
                .object(["result": .object(["step": .string(step), "item": .string("consented")]), "equals": .bool(true)]),
                .object(["result": .object(["step": .string(step), "item": .string(item)]), "answered": .bool(false)]),
            ])]), "message": .string(message)])
        }
        return .array([missing("givenName", "Enter your given name to consent."), missing("familyName", "Enter your family name to consent.")])
    }
}

/// The answer format of a step the host reports: what a report must say (`read`) and what the
/// kept record must look like (`validate`, which restore replays).
struct ReportedFormat: AnswerFormatRules {
    enum Kind: String, CaseIterable, Sendable {
        case signature, imageCapture, table, webView, videoInstruction, pdfViewer, requestPermissions

        /// Whether its report is a file the engine writes into the output directory.
        var capturesFile: Bool { self == .signature || self == .imageCapture }
    }

    /// What `requestPermissions` may ask for.
    static let permissionNames = ["camera", "microphone", "location", "motion", "health", "notifications", "photos", "contacts", "calendar"]
    /// The image types a capture may be, and the file name extension of each.
    static let imageTypes: [(contentType: String, fileExtension: String)] = [("image/png", "png"), ("image/jpeg", "jpg"), ("image/svg+xml", "svg")]
    /// The largest captured file (decoded), and the longest web-view message.
    static let maximumFileBytes = 8 * 1024 * 1024
    static let maximumMessageBytes = 64 * 1024

    let kind: Kind
    /// `requestPermissions`: the permissions asked for, in order.
    let permissions: [String]

    var resultType: ResultType { kind.capturesFile ? .file : .report }

    static func parse(_ kind: Kind, _ r: FieldReader, at path: JSONPath, _ d: Diagnostics) -> ReportedFormat? {
        let before = d.problems.count
        var permissions: [String] = []
        switch kind {
        case .signature:
            break
        case .imageCapture:
            _ = r.string("templateImage")
            _ = r.string("accessibilityInstructions")
        case .table:
            let items = r.array("items", required: true) ?? []
            if items.isEmpty { d.error("emptyItems", "A table step lists at least one item.", at: path.key("items")) }
            for (i, item) in items.enumerated() where item.stringValue == nil {
                d.error("wrongType", "A table's items are strings.", at: path.key("items").index(i))
            }
            _ = r.bool("isBulleted")
        case .webView:
            if r.string("html") == nil && r.string("url") == nil {
                d.error("missingKey", "A web view step needs \"html\" or \"url\".", at: path)
            }
        case .videoInstruction:
            _ = r.string("videoURL", required: true, nonEmpty: true)
            if let t = r.number("thumbnailTime"), !(t >= 0) {
                d.error("invalidValue", "\"thumbnailTime\" is a number of seconds, at least 0.", at: path.key("thumbnailTime"))
            }
        case .pdfViewer:
            _ = r.string("pdfURL", required: true, nonEmpty: true)
        case .requestPermissions:
            let items = r.array("permissions", required: true) ?? []
            if items.isEmpty { d.error("emptyPermissions", "A request permissions step asks for at least one permission.", at: path.key("permissions")) }
            for (i, item) in items.enumerated() {
                guard let name = item.stringValue, permissionNames.contains(name) else {
                    d.error("unknownPermission", "A permission is one of: " + permissionNames.joined(separator: ", ") + ".", at: path.key("permissions").index(i))
                    continue
                }
                if permissions.contains(name) {
                    d.error("duplicatePermission", "\"\(name)\" is asked for twice.", at: path.key("permissions").index(i))
                }
                permissions.append(name)
            }
        }
        guard d.problems.count == before else { return nil }
        return ReportedFormat(kind: kind, permissions: permissions)
    }

    // MARK: Reports

    /// What a report gives: a value kept as it is, or a file's bytes to write first.
    enum Reading {
        case value(JSON)
        case file(bytes: [UInt8], kind: String, contentType: String, fileExtension: String)
    }

    /// Reads a host's report (without its `step`), refusing one that is not what this step
    /// reports, with the path of the bad field.
    func read(_ report: JSONObject) throws(StepKitError) -> Reading {
        switch kind {
        case .signature, .imageCapture:
            let allowed = kind == .signature ? ["image", "path", "typedName"] : ["image"]
            guard report.count == 1, let key = report.keys.first, allowed.contains(key), let value = report[key] else {
                throw refusal("A \(kind.rawValue) report has exactly one of: " + allowed.map { "\"\($0)\"" }.joined(separator: ", ") + ".", at: .root)
            }
            switch key {
            case "image": return try image(value)
            case "path":
                guard let data = value.stringValue, !data.isEmpty, data.utf8.count <= ReportedFormat.maximumMessageBytes,
                      data.unicodeScalars.allSatisfy({ "MmLlHhVvCcSsQqTtAaZz0123456789.,-+eE ".unicodeScalars.contains($0) }) else {
                    throw refusal("\"path\" is SVG path data (commands and numbers only), at most \(ReportedFormat.maximumMessageBytes) bytes.", at: .root.key("path"))
                }
                let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"\(data)\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/></svg>\n"
                return .file(bytes: Array(svg.utf8), kind: "path", contentType: "image/svg+xml", fileExtension: "svg")
            default:
                guard let name = value.stringValue, name.unicodeScalars.contains(where: { !$0.properties.isWhitespace }), name.utf8.count <= 400 else {
                    throw refusal("\"typedName\" is the participant's name as typed: not blank, at most 400 bytes.", at: .root.key("typedName"))
                }
                return .file(bytes: Array((name + "\n").utf8), kind: "typedName", contentType: "text/plain", fileExtension: "txt")
            }
        default:
            do throws(AnswerRejection) {
                return .value(try validate(.object(report), previous: nil) ?? .null)
            } catch {
                throw refusal(error.message, at: .root)
            }
        }
    }

    private func image(_ value: JSON) throws(StepKitError) -> Reading {
        let path = JSONPath.root.key("image")
        guard let object = value.objectValue, object.count == 2, let type = object["contentType"]?.stringValue,
              let encoded = object["base64"]?.stringValue else {
            throw refusal("\"image\" is {\"contentType\", \"base64\"}.", at: path)
        }
        guard let known = ReportedFormat.imageTypes.first(where: { $0.contentType == type }) else {
            throw refusal("\"contentType\" is one of: " + ReportedFormat.imageTypes.map(\.contentType).joined(separator: ", ") + ".", at: path.key("contentType"))
        }
        guard encoded.utf8.count <= (ReportedFormat.maximumFileBytes / 3 + 1) * 4, let bytes = Base64.decode(encoded), !bytes.isEmpty else {
            throw refusal("\"base64\" is the image's bytes in base64 (RFC 4648), at most \(ReportedFormat.maximumFileBytes) bytes decoded.", at: path.key("base64"))
        }
        guard ReportedFormat.looksLike(type, bytes) else {
            throw refusal("The bytes are not a \(type) image.", at: path.key("base64"))
        }
        return .file(bytes: bytes, kind: "image", contentType: type, fileExtension: known.fileExtension)
    }

    /// Whether `bytes` start as an image of `type` does (PNG's and JPEG's signatures; SVG text).
    static func looksLike(_ type: String, _ bytes: [UInt8]) -> Bool {
        switch type {
        case "image/png": return bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "image/jpeg": return bytes.starts(with: [0xFF, 0xD8, 0xFF])
        default: return String(validating: bytes, as: UTF8.self)?.contains("<svg") == true
        }
    }

    private func refusal(_ message: String, at path: JSONPath) -> StepKitError {
        StepKitError(.answer, code: "invalidReport", message: message, path: path)
    }

    // MARK: The kept record

    /// Checks a kept record: what `read` and the session made of a report. Restore replays it.
    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard let object = answer.objectValue else { throw ReportedFormat.rejection("A report is an object.") }
        func only(_ keys: [String]) throws(AnswerRejection) {
            for key in object.keys where !keys.contains(key) {
                throw ReportedFormat.rejection("A \(kind.rawValue) report has no \"\(key)\"; it has " + keys.map { "\"\($0)\"" }.joined(separator: ", ") + ".")
            }
        }
        switch kind {
        case .signature, .imageCapture:
            try only(["kind", "fileName", "contentType", "bytes", "sha256"])
            let kinds = kind == .signature ? ["image", "path", "typedName"] : ["image"]
            guard let k = object["kind"]?.stringValue, kinds.contains(k),
                  let name = object["fileName"]?.stringValue, RecorderFileName.isSafe(name),
                  let type = object["contentType"]?.stringValue, (ReportedFormat.imageTypes.map(\.contentType) + ["text/plain"]).contains(type),
                  let bytes = object["bytes"]?.numericValue, bytes >= 0, bytes == bytes.rounded(),
                  let digest = object["sha256"]?.stringValue, digest.utf8.count == 64, digest.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
                throw ReportedFormat.rejection("A captured file is {\"kind\", \"fileName\", \"contentType\", \"bytes\", \"sha256\"}.")
            }
        case .table, .pdfViewer:
            try only(["viewed"])
            guard object["viewed"] == .bool(true) else { throw ReportedFormat.rejection("A \(kind.rawValue) report is {\"viewed\": true}.") }
        case .webView:
            try only(["message"])
            guard let message = object["message"]?.stringValue, message.utf8.count <= ReportedFormat.maximumMessageBytes else {
                throw ReportedFormat.rejection("A web view report is {\"message\": text} (at most \(ReportedFormat.maximumMessageBytes) bytes), what the page posted.")
            }
        case .videoInstruction:
            try only(["playbackCompleted", "position"])
            guard object["playbackCompleted"]?.boolValue != nil else {
                throw ReportedFormat.rejection("A video instruction report is {\"playbackCompleted\": true or false, \"position\": seconds}.")
            }
            if let position = object["position"], !((position.numericValue ?? -1) >= 0) {
                throw ReportedFormat.rejection("\"position\" is where playback stopped, in seconds (at least 0).")
            }
        case .requestPermissions:
            try only(["granted", "denied"])
            guard let granted = object["granted"]?.arrayValue, let denied = object["denied"]?.arrayValue else {
                throw ReportedFormat.rejection("A request permissions report is {\"granted\": [...], \"denied\": [...]}.")
            }
            let all = (granted + denied).compactMap(\.stringValue)
            guard all.count == granted.count + denied.count else { throw ReportedFormat.rejection("Permissions are named by strings.") }
            for name in all where !permissions.contains(name) {
                throw ReportedFormat.rejection("\"\(name)\" was not asked for; the step asks for: " + permissions.joined(separator: ", ") + ".")
            }
            for name in permissions where all.filter({ $0 == name }).count != 1 {
                throw ReportedFormat.rejection("\"\(name)\" must be in exactly one of \"granted\" and \"denied\".")
            }
            // Kept in the order the step asks for them.
            return .object(["granted": .array(permissions.filter { all.prefix(granted.count).contains($0) }.map { .string($0) }),
                            "denied": .array(permissions.filter { all.dropFirst(granted.count).contains($0) }.map { .string($0) })])
        }
        return answer
    }

    private static func rejection(_ text: String) -> AnswerRejection {
        AnswerRejection("invalidReport", Message.author(text))
    }
}
