import Glibc

/// Restoration data: a session as versioned JSON that names the task's fingerprint and carries an
/// integrity check, and the way back from it. See `schema/restoration.schema.json`.
///
/// ResearchKit's restoration data is an opaque archive that loses the back stack; this keeps the
/// whole visit path, every answer on and off it, and every date, and is refused whole if
/// anything about it is wrong.
enum Restoration {
    static let format = "stepkit-restoration"
    /// The members a saved visit may have.
    static let visitKeys: Set<String> = ["step", "startDate", "endDate", "answer", "skipped", "modified", "hiddenItems", "arrival", "active"]
    static let version: Int64 = 1

    // MARK: Save

    /// The restoration data as text, written once: the document is dumped without its integrity
    /// member, digested, and the member is appended to the same text (it is the last key, and
    /// this is exactly how the document writes itself). The path is dumped visit by visit, and
    /// `visits` keeps each visit's text for the next save (a session's handle keeps one), so
    /// an autosave re-encodes only the visits that changed.
    static func saveText(_ s: Session, visits: SavedVisitTexts = SavedVisitTexts()) -> String {
        var bytes = Array(JSONWriter.string(.object(contents(s, pathPlaceholder: true))).utf8)
        // `,"path":null` first appears where the placeholder is: a `"` inside a string is escaped.
        let marker = Array(",\"path\":null".utf8)
        if let at = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) {
            bytes.replaceSubrange(at..<(at + marker.count), with: Array((",\"path\":" + visits.pathText(of: s)).utf8))
        } else {
            bytes = Array(JSONWriter.string(.object(contents(s))).utf8)
        }
        let (algorithm, digest) = sign(String(decoding: bytes, as: UTF8.self), key: s.options.integrityKey)
        if bytes.last == 0x7D { bytes.removeLast() }  // the closing brace
        return String(decoding: bytes, as: UTF8.self) + ",\"integrity\":{\"algorithm\":\"" + algorithm + "\",\"digest\":\"" + digest + "\"}}"
    }

    /// One visit of the path as saved.
    static func encode(_ visit: Visit, in s: Session) -> JSON {
        var v = JSONObject()
        v["step"] = .string(s.task.step(at: visit.stepIndex)?.identifier ?? "")
        v["startDate"] = .int(visit.startDate)
        v["endDate"] = visit.endDate.map { .int($0) } ?? .null
        if let answer = visit.answer { v["answer"] = answer }
        v["skipped"] = .bool(visit.skipped)
        v["modified"] = .bool(visit.modified)
        v["hiddenItems"] = .array(visit.hiddenItems.map { .string($0) })
        v["arrival"] = visit.arrival
        if let active = visit.active { v["active"] = encode(active, at: s.now) }
        return .object(v)
    }

    /// Everything but the integrity member (with `pathPlaceholder`, the path is null, to be
    /// written in its place).
    private static func contents(_ s: Session, pathPlaceholder: Bool = false) -> JSONObject {
        var document = JSONObject()
        document["format"] = .string(format)
        document["version"] = .int(version)
        document["task"] = .object(["identifier": .string(s.task.identifier), "fingerprint": .string(s.task.fingerprint.value)])
        document["taskRunUUID"] = .string(s.taskRunUUID)
        document["startDate"] = .int(s.startDate)
        document["endDate"] = s.endDate.map { .int($0) } ?? .null
        document["finishReason"] = .string(s.finishReason?.rawValue)
        document["touched"] = .bool(s.touched)
        document["path"] = pathPlaceholder ? .null : .array(s.path.map { encode($0, in: s) })
        var answers = JSONObject()
        for index in s.answers.keys.sorted() {
            if let step = s.task.step(at: index), let answer = s.answers[index] { answers[step.identifier] = answer }
        }
        document["answers"] = .object(answers)
        var later = JSONObject()
        for index in s.laterAnswers.keys.sorted() {
            if let step = s.task.step(at: index), let list = s.laterAnswers[index], !list.isEmpty { later[step.identifier] = .array(list) }
        }
        document["laterAnswers"] = .object(later)
        document["taskSuspended"] = .bool(s.taskSuspended)
        var asyncRuns = JSONObject()
        for index in s.asyncRuns.keys.sorted() {
            if let run = s.asyncRuns[index] { asyncRuns[run.identifier] = encode(run) }
        }
        document["asyncActions"] = .object(asyncRuns)
        document["additionalTaskResults"] = s.options.additionalTaskResultsJSON ?? .null
        return document
    }

    private static func sign(_ text: String, key: String?) -> (algorithm: String, digest: String) {
        if let key, let mac = Digest.hmacSHA256(text, key: key) { return ("HMAC-SHA256", mac) }
        return ("SHA-256", Digest.sha256(text))
    }

    /// The integrity check on the text as given, when it is in the form `saveText` writes: the
    /// text before the integrity member is what was digested. Nil when the text has another form
    /// (a host re-wrote it), and the document must be written again to be checked.
    private static func quickCheck(_ raw: UnsafePointer<CChar>, key: String?) -> Bool? {
        let algorithm = key == nil ? "SHA-256" : "HMAC-SHA256"
        let head = Array((",\"integrity\":{\"algorithm\":\"" + algorithm + "\",\"digest\":\"").utf8)
        let length = strlen(raw)
        let tailLength = head.count + 64 + 3
        guard length > tailLength else { return nil }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: length)
        let start = length - tailLength
        guard bytes[start..<(start + head.count)].elementsEqual(head),
              bytes[(length - 3)...].elementsEqual(Array("\"}}".utf8)) else { return nil }
        let digest = String(decoding: bytes[(start + head.count)..<(length - 3)], as: UTF8.self)
        let signed = String(decoding: bytes[..<start], as: UTF8.self) + "}"
        if let key {
            return Digest.hmacSHA256(signed, key: key).map { Digest.equal($0, digest) } ?? false
        }
        return Digest.equal(Digest.sha256(signed), digest)
    }

    // MARK: Restore

    private static func refuse(_ code: String, _ message: String, _ path: JSONPath = .root) -> StepKitError {
        StepKitError(.restore, code: code, message: message, path: path)
    }

    static func restore(_ text: UnsafePointer<CChar>, task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        let parsed: JSON
        do throws(StepKitError) {
            parsed = try JSONParser.parse(cString: text)
        } catch {
            throw refuse("damaged", "The restoration data is damaged or truncated: " + (error.problems.first?.message ?? "not JSON."))
        }
        guard case .object(var document) = parsed else { throw refuse("damaged", "The restoration data is not a JSON object.") }
        guard document["format"] == .string(format) else {
            throw refuse("notRestorationData", "This is not StepKit restoration data (\"format\" is not \"\(format)\").", .root.key("format"))
        }
        guard document["version"] == .int(version) else {
            throw refuse("unsupportedVersion", "Restoration data version \(document["version"].map(JSONWriter.string) ?? "(none)") is not supported; this library reads version \(version).", .root.key("version"))
        }
        if quickCheck(text, key: options.integrityKey) == true {
            document["integrity"] = nil
        } else {
            try checkIntegrity(&document, key: options.integrityKey)
        }
        guard let taskInfo = document["task"]?.objectValue, let identifier = taskInfo["identifier"]?.stringValue,
              let fingerprint = taskInfo["fingerprint"]?.stringValue else {
            throw refuse("damaged", "The restoration data does not name its task.", .root.key("task"))
        }
        guard identifier == task.identifier else {
            throw refuse("differentTask", "The restoration data is for the task \"\(identifier)\", not \"\(task.identifier)\".", .root.key("task").key("identifier"))
        }
        var options = options
        options.additionalTaskResultsJSON = document["additionalTaskResults"].flatMap { $0.isNull ? nil : $0 }
        if let results = options.additionalTaskResultsJSON {
            let d = Diagnostics()
            options.additionalTaskResults = ExternalResults(results, at: .root.key("additionalTaskResults"), d)
            guard d.isEmpty else { throw refuse("damaged", "The saved additionalTaskResults are not task results.", .root.key("additionalTaskResults")) }
        }
        if fingerprint != task.fingerprint.value {
            guard options.migrate else {
                throw refuse("taskChanged", "The restoration data was saved on another version of the task \"\(identifier)\"; restore with the option \"migrate\": true to carry its answers over.", .root.key("task").key("fingerprint"))
            }
            return try migrate(document, to: task, options: options, clock: clock)
        }
        return try exact(document, task: task, options: options, clock: clock)
    }

    /// Checks the digest over the document without its `integrity` member (which it removes).
    private static func checkIntegrity(_ document: inout JSONObject, key: String?) throws(StepKitError) {
        guard let integrity = document["integrity"]?.objectValue, let algorithm = integrity["algorithm"]?.stringValue,
              let digest = integrity["digest"]?.stringValue else {
            throw refuse("integrityMissing", "The restoration data carries no integrity check.", .root.key("integrity"))
        }
        document["integrity"] = nil
        let text = JSONWriter.string(.object(document))
        switch algorithm {
        case "HMAC-SHA256":
            guard let key else {
                throw refuse("keyRequired", "The restoration data is signed with a key; restore with the option \"integrityKey\".", .root.key("integrity"))
            }
            guard let expected = Digest.hmacSHA256(text, key: key), Digest.equal(expected, digest) else {
                throw refuse("integrityCheckFailed", "The restoration data failed its integrity check: it was changed, or the key is wrong.", .root.key("integrity"))
            }
        case "SHA-256":
            if key != nil {
                throw refuse("integrityCheckFailed", "The restoration data is not signed, but a key was given: it may have been re-written without the key.", .root.key("integrity"))
            }
            guard Digest.equal(Digest.sha256(text), digest) else {
                throw refuse("integrityCheckFailed", "The restoration data failed its integrity check: it was changed or damaged.", .root.key("integrity"))
            }
        default:
            throw refuse("integrityCheckFailed", "Unknown integrity algorithm \"\(algorithm)\".", .root.key("integrity").key("algorithm"))
        }
    }

    /// The saved run, exactly: every field is checked against the task before anything is built.
    private static func exact(_ d: JSONObject, task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        guard let uuid = d["taskRunUUID"]?.stringValue.flatMap(UUIDText.normalized),
              case .int(let startDate)? = d["startDate"],
              let touched = d["touched"]?.boolValue,
              let pathItems = d["path"]?.arrayValue,
              let savedAnswers = d["answers"]?.objectValue, d["laterAnswers"]?.objectValue != nil else {
            throw refuse("damaged", "The restoration data is missing the run's identity, dates, path or answers.")
        }
        let endDate = try optionalInt(d["endDate"], .root.key("endDate"))
        var finishReason: FinishReason?
        if let reason = d["finishReason"], !reason.isNull {
            guard let r = reason.stringValue.flatMap(FinishReason.init(rawValue:)) else {
                throw refuse("damaged", "Unknown finish reason.", .root.key("finishReason"))
            }
            finishReason = r
        }
        var answers: [Int: JSON] = [:]
        for (id, answer) in savedAnswers.entries {
            let path = JSONPath.root.key("answers").key(id)
            guard let index = task.stepIndex[id], let step = task.step(at: index) else {
                throw refuse("damaged", "The saved answers name a step \"\(id)\" the task does not have.", path)
            }
            answers[index] = try validated(answer, for: step, at: path)
        }
        var laterAnswers: [Int: [JSON]] = [:]
        for (id, list) in (d["laterAnswers"]?.objectValue ?? JSONObject()).entries {
            let path = JSONPath.root.key("laterAnswers").key(id)
            guard let index = task.stepIndex[id], let step = task.step(at: index), let items = list.arrayValue else {
                throw refuse("damaged", "The saved later answers name a step \"\(id)\" the task does not have.", path)
            }
            var kept: [JSON] = []
            for (i, answer) in items.enumerated() { kept.append(try validated(answer, for: step, at: path.index(i))) }
            laterAnswers[index] = kept
        }
        var visits: [Visit] = []
        for (i, item) in pathItems.enumerated() {
            let path = JSONPath.root.key("path").index(i)
            guard let v = item.objectValue, v.keys.allSatisfy(Restoration.visitKeys.contains),
                  let id = v["step"]?.stringValue, let index = task.stepIndex[id], let step = task.step(at: index),
                  case .int(let start)? = v["startDate"], let skipped = v["skipped"]?.boolValue,
                  let modified = v["modified"]?.boolValue, let hidden = v["hiddenItems"]?.arrayValue?.compactMap(\.stringValue) else {
                throw refuse("damaged", "A visit of the saved path is not valid for this task.", path)
            }
            var visit = Visit(stepIndex: index, startDate: start)
            visit.endDate = try optionalInt(v["endDate"], path.key("endDate"))
            visit.skipped = skipped
            visit.modified = modified
            visit.hiddenItems = hidden
            visit.arrival = v["arrival"] ?? .null
            if let active = v["active"] {
                guard step.active != nil else { throw refuse("damaged", "A saved active step is not an active step of this task.", path.key("active")) }
                visit.active = try decodeActive(active, at: path.key("active"))
            }
            if let answer = v["answer"] { visit.answer = try validated(answer, for: step, at: path.key("answer")) }
            visits.append(visit)
        }
        var asyncRuns: [Int: RecorderRun] = [:]
        for (id, value) in (d["asyncActions"]?.objectValue ?? JSONObject()).entries {
            guard let index = task.asyncActions.firstIndex(where: { $0.recorder.identifier == id }) else {
                throw refuse("damaged", "The saved async action \"\(id)\" is not in the task.", .root.key("asyncActions").key(id))
            }
            let run = try decodeRecorder(value, at: .root.key("asyncActions").key(id))
            guard run.identifier == id, run.type == task.asyncActions[index].recorder.type else {
                throw refuse("damaged", "The saved async action \"\(id)\" does not match the task's.", .root.key("asyncActions").key(id))
            }
            asyncRuns[index] = run
        }
        guard let taskSuspended = d["taskSuspended"]?.boolValue else {
            throw refuse("damaged", "The restoration data does not say whether the task is suspended.", .root.key("taskSuspended"))
        }
        if visits.isEmpty && finishReason == nil {
            throw refuse("damaged", "The saved path is empty but the run has not finished.", .root.key("path"))
        }
        let session = Session(task: task, options: options, clock: clock, taskRunUUID: uuid, startDate: startDate, endDate: endDate,
                              finishReason: finishReason, visits: visits, answers: answers, laterAnswers: laterAnswers, touched: touched,
                              taskSuspended: taskSuspended, asyncRuns: asyncRuns)
        // Well-formed is not enough: the run must be one the task allows (keyed or not).
        try checkAllowed(session, savedAnswers: answers)
        return session
    }

    private static func optionalInt(_ value: JSON?, _ path: JSONPath) throws(StepKitError) -> Int64? {
        switch value {
        case nil, .null?: return nil
        case .int(let i)?: return i
        default: throw refuse("damaged", "A date must be milliseconds since 1970 as a whole number.", path)
        }
    }

    /// A saved answer, checked again by the validation `set_answer` uses (`Step.validate`; a
    /// form's confirmations are checked where the run left the step, by the replay in
    /// `Restoration+Replay.swift`).
    private static func validated(_ answer: JSON, for step: Step, at path: JSONPath) throws(StepKitError) -> JSON {
        let checked = step.validate(answer, previous: nil, confirming: .never)
        if let problem = checked.problems.first {
            throw refuse("damaged", "A saved answer does not fit the task: " + problem.message, path)
        }
        return checked.value ?? .null
    }

    // MARK: Migration

    /// Carries a session saved on another version of the task over: answers whose step (and
    /// item) still exist with the same answer type and still fit are kept, the others listed; the
    /// run resumes at the first step that still needs an answer.
    private static func migrate(_ d: JSONObject, to task: Task, options: SessionOptions, clock: Clock) throws(StepKitError) -> Session {
        guard let uuid = d["taskRunUUID"]?.stringValue.flatMap(UUIDText.normalized), case .int(let startDate)? = d["startDate"],
              let savedAnswers = d["answers"]?.objectValue else {
            throw refuse("damaged", "The restoration data is missing the run's identity, dates or answers.")
        }
        var kept: [JSON] = [], dropped: [JSON] = []
        var answers: [Int: JSON] = [:]
        func drop(_ step: String, _ item: String?, _ reason: String) {
            dropped.append(.object(["step": .string(step), "item": .string(item), "reason": .string(reason)]))
        }
        for (id, answer) in savedAnswers.entries {
            guard let index = task.stepIndex[id], let step = task.step(at: index) else {
                drop(id, nil, "The step no longer exists.")
                continue
            }
            switch step.content {
            case .message:
                drop(id, nil, "The step no longer takes an answer.")
            case .question:
                let checked = step.validate(answer, previous: nil, confirming: .never)
                if checked.problems.isEmpty, let value = checked.value {
                    answers[index] = value
                    kept.append(.object(["step": .string(id), "item": .null]))
                } else {
                    drop(id, nil, "The answer no longer fits the question's answer format.")
                }
            case .form(let form):
                guard case .object(let items) = answer else {
                    drop(id, nil, "The step is now a form.")
                    continue
                }
                // Checked as restore and set_answer check a form's answer; each item that fails is
                // dropped alone, and the others kept.
                let valid = step.validate(answer, previous: nil, confirming: .never).value?.objectValue ?? JSONObject()
                var object = JSONObject()
                for (key, _) in items.entries {
                    guard form.item(key) != nil else { drop(id, key, "The form item no longer exists."); continue }
                    guard let v = valid[key] else { drop(id, key, "The answer no longer fits the item's answer format."); continue }
                    object[key] = v
                    kept.append(.object(["step": .string(id), "item": .string(key)]))
                }
                if object.count > 0 { answers[index] = .object(object) }
            }
        }
        // Every option the host gave (output directory, recorder settings, limits, autosave,
        // key, prefill) applies to the migrated run as to any other; only the run's identity
        // comes from the saved data.
        var carriedOptions = options
        carriedOptions.taskRunUUID = uuid
        var session = Session(task: task, options: carriedOptions, clock: clock)
        // The run keeps its start, unless the saved start is later than the migrated run's
        // first visit (a forged or skewed date): a run never starts after it is shown.
        session.startDate = min(startDate, session.startDate)
        for (index, answer) in answers { session.answers[index] = answer }
        // Walk forward over what is already answered (and optional steps the participant had
        // already passed), to the first step that still needs an answer.
        let visited = Set((d["path"]?.arrayValue ?? []).compactMap { $0.objectValue?["step"]?.stringValue })
        var budget = task.steps.count
        while budget > 0, let step = session.currentStep,
              !step.takesAnswers || session.answers[session.current?.stepIndex ?? -1] != nil || (step.optional && visited.contains(step.identifier)),
              session.forwardProblems().isEmpty, session.routeForward()?.step != nil {
            budget -= 1
            do throws(StepKitError) { try session.goForward() } catch { break }
        }
        session.touched = true
        session.restoreReport = .object([
            "migrated": .bool(true),
            "fromFingerprint": d["task"]?.objectValue?["fingerprint"] ?? .null,
            "kept": .array(kept),
            "dropped": .array(dropped),
        ])
        return session
    }
}
