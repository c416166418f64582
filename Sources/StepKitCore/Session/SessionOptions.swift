import StepKitBase

/// The options a host gives when it opens or restores a session (`options_json`).
package struct SessionOptions: Sendable {
    var taskRunUUID: String?
    /// Other tasks' results, with the option as given (`ExternalResults.given`), which
    /// restoration data keeps so a restored session's predicates see the same results.
    var additionalTaskResults = ExternalResults()
    /// A key for HMAC-SHA256 over restoration data; without one, a plain SHA-256.
    var integrityKey: String?
    /// A file the session rewrites, atomically, after every change.
    package var autosavePath: String?
    /// ResearchKit's `defaultResultSource`: answers that prefill steps with no answer yet.
    var prefill = Prefill()
    /// Restore only: carry a session saved on another version of the task over.
    var migrate = false
    /// Where recorders write their files; without it, a recorder fails when it starts.
    var outputDirectory: String?
    /// A recorder's file rolls over to a new one past this many bytes.
    var recorderFileSizeLimit: Int64 = SessionOptions.defaultRecorderFileSizeLimit
    /// Keep going when a recorder fails, instead of finishing the task with reason "failed".
    var continueOnRecorderFailure = false
    package var limits = SessionLimits()
    /// The participant's language, a BCP-47 tag in canonical case (`SessionLanguage`).
    var language: String?
    /// The host's message catalogues by language tag (option `messages`), each complete.
    var messageCatalogues: [String: MessageCatalogue] = [:]
    /// The audit trail's switch and the host's actor and reason (`AuditOptions`).
    var audit = AuditOptions()
    /// The seed of the run's randomized order (`Randomization`): given by the host, or drawn when
    /// the session opens; kept in the restoration data, which alone gives it on restore.
    var seed: UInt64?

    /// Whether every option is as `SessionOptions()` has it: such a session shares one options
    /// object with every other (`FixedOptions.holding`). Every stored option is read here, and
    /// SessionTests counts the stored options, so one added later cannot be left out (and its
    /// value dropped for the shared defaults).
    var isDefault: Bool {
        taskRunUUID == nil && additionalTaskResults.given == nil && integrityKey == nil
            && autosavePath == nil && prefill.isDefault && !migrate && outputDirectory == nil
            && recorderFileSizeLimit == SessionOptions.defaultRecorderFileSizeLimit
            && !continueOnRecorderFailure && limits.isDefault && language == nil
            && messageCatalogues.isEmpty && audit.isDefault && seed == nil
    }
    static let defaultRecorderFileSizeLimit: Int64 = 1 << 20

    /// Reads options for `stepkit_session_open` (or, with `restoring`, `stepkit_session_restore`,
    /// which adds `migrate` and takes the run's identity from the saved data).
    package static func parse(_ value: JSON?, restoring: Bool = false) throws(StepKitError) -> SessionOptions {
        guard let value, !value.isNull else { return SessionOptions() }
        let d = Diagnostics()
        var options = SessionOptions()
        if let r = FieldReader(value, at: .root, d, what: "session options") {
            if !restoring, let uuid = r.string("taskRunUUID") {
                options.taskRunUUID = UUIDText.normalized(uuid)
                if options.taskRunUUID == nil {
                    d.error("invalidValue", "\"taskRunUUID\" must be a UUID (8-4-4-4-12 hexadecimal digits).", at: .root.key("taskRunUUID"))
                }
            }
            if !restoring, let results = r.value("additionalTaskResults") {
                options.additionalTaskResults = ExternalResults(results, at: .root.key("additionalTaskResults"), d)
            }
            options.integrityKey = r.string("integrityKey", nonEmpty: true)
            options.autosavePath = r.string("autosave", nonEmpty: true)
            if let result = r.value("defaultResult") {
                options.prefill.result = ExternalResults(.array([result]), at: .root.key("defaultResult"), d)
                options.prefill.taskIdentifier = result.objectValue?["identifier"]?.stringValue
            }
            options.prefill.always = r.bool("alwaysCheckForDefaultResult") ?? false
            if let data = r.value("personalData") {
                if case .object(let object) = data {
                    for key in object.keys where !AnswerFormat.personalDataFields.contains(key) {
                        d.error("unknownKey", "Unknown personal data field \"\(key)\"; expected one of: " + AnswerFormat.personalDataFields.joined(separator: ", ") + ".", at: .root.key("personalData").key(key))
                    }
                    options.prefill.personalData = object
                } else {
                    d.error("wrongType", "\"personalData\" is an object: field → value.", at: .root.key("personalData"))
                }
            }
            if restoring { options.migrate = r.bool("migrate") ?? false }
            if let tag = r.string("language") {
                options.language = LanguageTag.canonical(tag)
                if options.language == nil {
                    d.error("invalidLanguage", "\"language\" must be a BCP-47 language tag (such as \"en\", \"de\" or \"fr-CA\"), not \"\(tag)\".", at: .root.key("language"))
                }
            }
            if let value = r.value("messages") {
                if case .object(let byLanguage) = value {
                    for (key, catalogue) in byLanguage.entries {
                        guard let tag = LanguageTag.canonical(key) else {
                            d.error("invalidLanguage", "\"\(key)\" is not a BCP-47 language tag; \"messages\" is an object: language tag → message catalogue.", at: .root.key("messages").key(key))
                            continue
                        }
                        if let parsed = MessageCatalogue.parse(catalogue, language: tag, at: .root.key("messages").key(key), d) {
                            options.messageCatalogues[tag] = parsed
                        }
                    }
                } else {
                    d.error("wrongType", "\"messages\" is an object: language tag → message catalogue.", at: .root.key("messages"))
                }
            }
            if !restoring, let value = r.value("seed") {
                options.seed = Randomization.seed(value, at: .root.key("seed"), d)
            }
            options.outputDirectory = r.string("outputDirectory", nonEmpty: true)
            if let limit = r.integer("recorderFileSizeLimit", in: 1024...(1 << 40)) { options.recorderFileSizeLimit = Int64(limit) }
            options.continueOnRecorderFailure = r.bool("continueOnRecorderFailure") ?? false
            if let value = r.value("audit") { options.audit = AuditOptions.parse(value, at: .root.key("audit"), d) }
            if let value = r.value("limits") {
                let l = FieldReader(value, at: .root.key("limits"), d, what: "limits")
                options.limits.answer = InputLimits.answer.overridden(by: l, bytesKey: "maxAnswerBytes", depthKey: "maxAnswerDepth", stringKey: "maxStringBytes")
                options.limits.samples = InputLimits.samples.overridden(by: l, bytesKey: "maxSampleBytes", depthKey: "maxSampleDepth", stringKey: "maxStringBytes")
                l?.finish()
            }
            r.finish()
        }
        guard d.isEmpty else { throw StepKitError(.invalidArgument, problems: d.problems) }
        return options
    }
}

/// Where answers for steps with no answer yet come from: an earlier run's result (ResearchKit's
/// `defaultResultSource`) and the host's personal data (ResearchKit's HealthKit characteristics).
struct Prefill: Sendable {
    var result: ExternalResults?
    var taskIdentifier: String?
    /// ResearchKit's `alwaysCheckForDefaultResult`: the default replaces an existing answer too.
    var always = false
    var personalData = JSONObject()

    var isEmpty: Bool { result == nil && personalData.count == 0 }
    var isDefault: Bool { isEmpty && taskIdentifier == nil && !always }
}

/// The bounds on a session's inputs (session option `limits`).
package struct SessionLimits: Sendable {
    package var answer = InputLimits.answer
    package var samples = InputLimits.samples

    var isDefault: Bool { answer == InputLimits.answer && samples == InputLimits.samples }
}

extension AuditOptions {
    /// Whether the audit options are as `AuditOptions()` has them (`SessionOptions.isDefault`).
    var isDefault: Bool { enabled && actor == nil && reason == nil && recordRestore }
}
