import StepKitBase

/// Writing restoration data: the session as versioned JSON text, signed (see
/// `Restoration+Integrity.swift`).
extension Restoration {
    /// The restoration data as text, written once: the document is dumped without its integrity
    /// member, digested, and the member is appended to the same text (it is the last key, and
    /// this is exactly how the document writes itself). The path is dumped visit by visit, and
    /// `visits` keeps each visit's text for the next save (a session's handle keeps one), so
    /// an autosave re-encodes only the visits that changed.
    static func saveText(_ s: Session, visits: SavedVisitTexts = SavedVisitTexts()) throws(StepKitError) -> String {
        try signedSaveText(s, visits: visits).text
    }

    /// `saveText` and its digest (the head of an autosave journal's chain of records).
    static func signedSaveText(_ s: Session, visits: SavedVisitTexts = SavedVisitTexts()) throws(StepKitError) -> (text: String, digest: String) {
        var bytes = Array(JSONWriter.string(.object(try contents(s, pathPlaceholder: true))).utf8)
        // `,"path":null` first appears where the placeholder is: a `"` inside a string is escaped.
        let marker = Array(",\"path\":null".utf8)
        if let at = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) {
            bytes.replaceSubrange(at..<(at + marker.count), with: Array((",\"path\":" + visits.pathText(of: s)).utf8))
        } else {
            bytes = Array(JSONWriter.string(.object(try contents(s))).utf8)
        }
        let (algorithm, digest) = try sign(String(decoding: bytes, as: UTF8.self), key: s.options.integrityKey)
        if bytes.last == 0x7D { bytes.removeLast() }  // the closing brace
        let text = String(decoding: bytes, as: UTF8.self) + integrityHead(algorithm) + digest + integrityEnd
        return (text, digest)
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
        v["arrival"] = visit.arrival.json(in: s.task)
        if let active = visit.active { v["active"] = encode(active, at: s.now) }
        // In a task with time limits, the time a visit that was left counted toward them; the
        // current visit's is the document's `timing.step` (the time at the save), so its text
        // does not change as time passes. Other tasks count time by their dates.
        if visit.endDate != nil, !s.task.rules.timeLimits.isEmpty { v["timeSpent"] = .int(visit.spent) }
        // A repeating section's step past its first instance (`Restoration+StepBlocks`).
        if visit.instance != 0 { v["instance"] = .int(Int64(visit.instance)) }
        return .object(v)
    }

    /// Everything but the integrity member (with `pathPlaceholder`, the path is null, to be
    /// written in its place).
    static func contents(_ s: Session, pathPlaceholder: Bool = false) throws(StepKitError) -> JSONObject {
        var document = JSONObject()
        document["format"] = .string(format)
        document["version"] = .int(version)
        document["task"] = .object(["identifier": .string(s.task.identifier), "fingerprint": .string(try s.task.fingerprint.value())])
        document["taskRunUUID"] = .string(s.taskRunUUID)
        for key in ["startDate", "endDate", "finishReason", "touched"] { document[key] = member(key, of: s) }
        document["path"] = pathPlaceholder ? .null : .array(s.path.map { encode($0, in: s) })
        var answers = JSONObject()
        for (index, answer) in s.answers.latest {
            if let step = s.task.step(at: index) { answers[step.identifier] = answer }
        }
        document["answers"] = .object(answers)
        var later = JSONObject()
        for (index, list) in s.answers.later {
            if let step = s.task.step(at: index), !list.isEmpty { later[step.identifier] = .array(list) }
        }
        document["laterAnswers"] = .object(later)
        for key in ["taskSuspended", "asyncActions", "additionalTaskResults", "randomization", "timing"] { document[key] = member(key, of: s) }
        if s.showsLanguage { document["language"] = member("language", of: s) }
        // Which instance each repeating block is in, when one is past its first.
        if !s.instancesCursor.isEmpty { document["instances"] = member("instances", of: s) }
        // Repeating sections' instances, once one has made any (`Restoration+StepBlocks`).
        if !s.stepInstances.isEmpty { document["stepInstances"] = member("stepInstances", of: s) }
        // Only during an edit from a review step, so other saves read as before.
        if s.reviewReturn != nil { document["reviewReturn"] = member("reviewReturn", of: s) }
        document["audit"] = try auditMember(of: s)
        return document
    }

    /// The members of the document an autosave journal record may set whole (`change`): all
    /// but the format, the task, the run's identity, the path and the answers.
    static let wholeMembers: [String] = ["startDate", "endDate", "finishReason", "touched", "taskSuspended", "asyncActions", "additionalTaskResults", "language",
                                         "randomization", "timing", "instances", "stepInstances", "reviewReturn"]

    /// One of `wholeMembers` as saved.
    static func member(_ key: String, of s: Session) -> JSON {
        switch key {
        case "startDate": return .int(s.startDate)
        case "endDate": return s.endDate.map { .int($0) } ?? .null
        case "finishReason": return .string(s.finishReason?.rawValue)
        case "touched": return .bool(s.touched)
        case "taskSuspended": return .bool(s.actions.taskSuspended)
        case "asyncActions":
            var asyncRuns = JSONObject()
            for (_, run) in s.actions.runs { asyncRuns[run.identifier] = encode(run) }
            return .object(asyncRuns)
        case "additionalTaskResults": return s.external.given ?? .null
        case "language": return s.showsLanguage ? s.language.json : .null
        case "instances": return s.instancesCursor.json(in: s.task)
        case "stepInstances": return stepInstancesJSON(s)
        case "randomization":
            // The seed and the order of every list the task shuffles, which restore recomputes
            // from the seed and compares (docs/randomization.md).
            guard let seed = s.seed else { return .null }
            return .object(["seed": .int(Int64(seed)), "orders": .object(Randomization.orders(of: s.task, seed: seed))])
        case "timing":
            // The time counted so far, at the save: restore counts on from exactly this. Only a
            // task with time limits keeps it (then, as with a running active step, a save reads
            // the clock); any other's time is counted by its dates.
            guard !s.task.rules.timeLimits.isEmpty else { return .null }
            let time = s.now
            return .object(["task": .int(s.taskTimeSpent(at: time)), "step": .int(s.stepTimeSpent(at: time))])
        case "reviewReturn": return s.reviewReturn?.json(in: s.task) ?? .null
        default: return .null
        }
    }
}
