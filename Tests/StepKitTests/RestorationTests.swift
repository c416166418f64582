import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private func restore(_ saved: JSON, _ task: Task, options: SessionOptions = SessionOptions(), clock: Clock = .system) throws(StepKitError) -> Session {
    let text = JSONWriter.string(saved)
    let result = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: options, clock: clock) }
    }
    return try result.get()
}

private func refusal(_ saved: JSON, _ task: Task, options: SessionOptions = SessionOptions()) -> String? {
    do throws(StepKitError) {
        _ = try restore(saved, task, options: options)
        return nil
    } catch {
        #expect(error.status == .restore)
        return error.problems.first?.code
    }
}

/// Replaces one value in a saved document, keeping its integrity member as it was.
private func tampered(_ saved: JSON, _ key: String, _ value: JSON) -> JSON {
    guard case .object(var object) = saved else { return saved }
    object[key] = value
    return .object(object)
}

@Suite struct RestorationTests {
    func walked() throws -> (Session, ManualClock) {
        let clock = ManualClock(1_767_225_600_000)
        var s = Session(task: try compile(headache), options: SessionOptions(), clock: clock.clock)
        try s.goForward()
        clock.now += 1000
        try s.setAnswer(try json(#"["headache"]"#))
        try s.goForward()
        try s.setAnswer(.bool(true))
        try s.goForward()
        try s.setAnswer(try json(#"{"age": 44}"#))
        try s.goBackward()
        return (s, clock)
    }

    @Test func restoreGivesBackTheIdenticalSession() throws {
        let (s, clock) = try walked()
        let saved = Restoration.save(s)
        var back = try restore(saved, s.task, clock: clock.clock)
        #expect(back.stateJSON() == s.stateJSON())
        #expect(back.resultJSON() == s.resultJSON())
        #expect(Restoration.save(back) == saved)
        // The back history and the off-path draft survive: forward shows the kept form answer.
        var original = s
        try original.goForward()
        try back.goForward()
        #expect(back.stateJSON() == original.stateJSON())
        #expect(back.stateJSON().objectValue?["answer"] == .object(["age": .int(44)]))
        try back.goBackward()
        try back.goBackward()
        #expect(back.stepID == "symptom")
    }

    @Test func savedTextSurvivesAReparseByteForByte() throws {
        let (s, _) = try walked()
        let text = JSONWriter.string(Restoration.save(s))
        #expect(JSONWriter.string(try json(text)) == text)
        // The text written in one pass is the same document.
        #expect(try Restoration.saveText(s) == text)
        var keyed = SessionOptions()
        keyed.integrityKey = "k"
        let signed = Session(task: s.task, options: keyed)
        #expect(try Restoration.saveText(signed) == JSONWriter.string(Restoration.save(signed)))
    }

    @Test func reformattedDataIsStillChecked() throws {
        let (s, clock) = try walked()
        // A host that re-wrote the document (spaces, another key order inside values) still
        // restores: the check writes the document again when the text is not in its own form.
        let spaced = try Restoration.saveText(s).replacingOccurrences(",\"", ", \"")
        #expect(try restore(try json(spaced), s.task, clock: clock.clock).stateJSON() == s.stateJSON())
        let text = spaced.withCString { p in Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: SessionOptions(), clock: clock.clock) } }
        #expect((try? text.get())?.stateJSON() == s.stateJSON())
        let forged = try Restoration.saveText(s).replacingOccurrences("\"touched\":true", "\"touched\":false")
        let refused = forged.withCString { p in Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: SessionOptions(), clock: clock.clock) } }
        if case .failure(let e) = refused { #expect(e.problems.first?.code == "integrityCheckFailed") } else { Issue.record("forged data restored") }
    }

    @Test func finishedSessionsRestoreFinished() throws {
        var (s, _) = try walked()
        try s.finish(.saved)
        let back = try restore(Restoration.save(s), s.task)
        #expect(back.finishReason == .saved)
        #expect(back.resultJSON() == s.resultJSON())
    }

    @Test func tamperingIsRefusedWithTheRightCode() throws {
        let (s, _) = try walked()
        let saved = Restoration.save(s)
        #expect(refusal(tampered(saved, "touched", .bool(false)), s.task) == "integrityCheckFailed")
        #expect(refusal(tampered(saved, "version", .int(2)), s.task) == "unsupportedVersion")
        #expect(refusal(tampered(saved, "format", .string("x")), s.task) == "notRestorationData")
        #expect(refusal(tampered(saved, "integrity", .null), s.task) == "integrityMissing")
        let text = JSONWriter.string(saved)
        let cut = String(text.prefix(text.count / 2))
        let result = cut.withCString { p in Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: SessionOptions(), clock: .system) } }
        if case .failure(let e) = result { #expect(e.problems.first?.code == "damaged") } else { Issue.record("truncated data restored") }
        let other = try compile(#"{"identifier": "other", "steps": [{"type": "instruction", "identifier": "i"}]}"#)
        #expect(refusal(saved, other) == "differentTask")
        let changed = try compile(headache.replacingOccurrences("Thank you", "Thanks"))
        #expect(refusal(saved, changed) == "taskChanged")
    }

    @Test func hmacNeedsTheKey() throws {
        var options = SessionOptions()
        options.integrityKey = "s3cret"
        var s = Session(task: try compile(headache), options: options)
        try s.goForward()
        let saved = Restoration.save(s)
        #expect(saved.objectValue?["integrity"]?.objectValue?["algorithm"] == .string("HMAC-SHA256"))
        #expect(refusal(saved, s.task) == "keyRequired")
        var wrong = SessionOptions()
        wrong.integrityKey = "guess"
        #expect(refusal(saved, s.task, options: wrong) == "integrityCheckFailed")
        #expect(try restore(saved, s.task, options: options).stepID == "symptom")
        // Unsigned data is refused where a key is expected: it could be a forgery.
        let plain = Restoration.save(Session(task: s.task, options: SessionOptions()))
        #expect(refusal(plain, s.task, options: options) == "integrityCheckFailed")
    }

    @Test func migrationKeepsWhatStillFitsAndReports() throws {
        let (s, _) = try walked()
        let saved = Restoration.save(s)
        // Version 2: severity became a scale; a new required question comes first.
        let v2 = try compile("""
        {"identifier": "headache", "steps": [
          {"type": "instruction", "identifier": "intro"},
          {"type": "question", "identifier": "symptom", "answerFormat": {"type": "textChoice", "style": "singleChoice",
             "textChoices": [{"text": "Headache", "value": "headache"}, {"text": "Dizziness", "value": "dizziness"}]}},
          {"type": "question", "identifier": "severity", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10}},
          {"type": "form", "identifier": "about", "formItems": [
             {"identifier": "age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90}}]},
          {"type": "completion", "identifier": "done"}]}
        """)
        var options = SessionOptions()
        options.migrate = true
        let back = try restore(saved, v2, options: options)
        #expect(back.taskRunUUID == s.taskRunUUID)
        #expect(back.stepID == "severity")
        let report = try #require(back.restoreReport.objectValue)
        #expect(report["dropped"]?.arrayValue?.first?.objectValue?["step"] == .string("severity"))
        #expect(report["kept"]?.arrayValue?.count == 2)
    }

    /// Issue 26: a migration dated every visit at the migration's time, so the response time of
    /// each step (what studies analyse) was lost. The visits it keeps keep their saved dates;
    /// the visit of a step the participant must answer again is new, dated at the migration.
    @Test func migrationKeepsTheVisitDates() throws {
        let t0: Int64 = 1_767_225_600_000
        let clock = ManualClock(t0)
        var s = Session(task: try compile(headache), options: SessionOptions(), clock: clock.clock)
        clock.now = t0 + 5_000
        try s.goForward()                                  // intro: t0 ... t0+5 s
        clock.now = t0 + 65_000
        try s.setAnswer(try json(#"["headache"]"#))
        try s.goForward()                                  // symptom: t0+5 s ... t0+65 s
        clock.now = t0 + 80_000
        let saved = Restoration.save(s)                    // on severity since t0+65 s
        // Version 2 words a question differently: every visit is kept with its dates.
        let v2 = try compile(headache.replacingOccurrences("Does it interfere with your day?", "Does it get in your way?"))
        clock.now = t0 + 3_600_000
        var options = SessionOptions()
        options.migrate = true
        let back = try restore(saved, v2, options: options, clock: clock.clock)
        #expect(back.visited == ["intro", "symptom", "severity"])
        #expect(back.path.map(\.startDate) == [t0, t0 + 5_000, t0 + 65_000])
        #expect(back.path.map(\.endDate) == [t0 + 5_000, t0 + 65_000, nil])
        #expect(back.startDate == t0)
        // The migrated run saves and restores through the replay check, dates included.
        let again = try restore(Restoration.save(back), v2, clock: clock.clock)
        #expect(again.path.map(\.startDate) == back.path.map(\.startDate))
        // Version 3 renames the symptom's values: that answer is dropped, and the symptom is
        // shown again, a new visit at the migration's time; the intro keeps its dates.
        let v3 = try compile(headache.replacingOccurrences(#""value": "headache""#, #""value": "head""#)
                                     .replacingOccurrences(#""contains": "headache""#, #""contains": "head""#))
        let third = try restore(saved, v3, options: options, clock: clock.clock)
        #expect(third.visited == ["intro", "symptom"])
        #expect(third.path.map(\.startDate) == [t0, t0 + 3_600_000])
        #expect(third.path.map(\.endDate) == [t0 + 5_000, nil])
        #expect(third.restoreReport.objectValue?["dropped"]?.arrayValue?.count == 1)
    }

    /// Saved dates later than the migration (a skewed or forged clock) are not carried over:
    /// the walk's visits after them would start before they end, and the migrated run's own
    /// restoration data would be refused (found by fuzz_restore).
    @Test func migrationKeepsNoVisitDateLaterThanItself() throws {
        let t0: Int64 = 1_767_225_600_000, later: Int64 = 9_715_772_669_945
        let clock = ManualClock(later)
        var s = Session(task: try compile(headache), options: SessionOptions(), clock: clock.clock)
        try s.goForward()                                  // intro: ends far in the future
        let saved = Restoration.save(s)
        clock.now = t0
        var options = SessionOptions()
        options.migrate = true
        let v2 = try compile(headache.replacingOccurrences("Thank you", "Thanks"))
        let back = try restore(saved, v2, options: options, clock: clock.clock)
        #expect(back.path.allSatisfy { $0.startDate <= t0 && ($0.endDate ?? t0) <= t0 })
        let again = try restore(Restoration.save(back), v2, clock: clock.clock)
        #expect(again.path.map(\.startDate) == back.path.map(\.startDate))
    }

    @Test func autosaveWritesAtomicallyAndRestores() throws {
        let path = "/tmp/stepkit-swift-autosave-\(getpid()).json"
        defer { unlink(path) }
        let (s, clock) = try walked()
        try Autosave.write(Restoration.save(s), to: path)
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        var buffer = [CChar](repeating: 0, count: 1 << 16)
        let n = read(fd, &buffer, buffer.count - 1)
        close(fd)
        #expect(n > 0)
        let back = try buffer.withUnsafeBufferPointer { p throws(StepKitError) -> Session in
            guard let base = p.baseAddress else { throw StepKitError(.io, code: "x", message: "x") }
            return try Restoration.restore(base, task: s.task, options: SessionOptions(), clock: clock.clock)
        }
        #expect(back.resultJSON() == s.resultJSON())
        #expect(access(path + ".tmp", F_OK) != 0)
        #expect(throws: StepKitError.self) { try Autosave.write(.null, to: "/nonexistent-dir/x.json") }
    }

    @Test func prefillFromADefaultResultAndPersonalData() throws {
        var options = SessionOptions()
        let d = Diagnostics()
        options.prefill.result = ExternalResults(try json("""
        [{"identifier": "headache", "results": [
           {"identifier": "symptom", "results": [{"identifier": "symptom", "type": "choice", "answer": ["dizziness"]}]},
           {"identifier": "about", "results": [{"identifier": "age", "type": "numeric", "answer": 120}]}]}]
        """), at: .root, d)
        options.prefill.taskIdentifier = "headache"
        #expect(d.isEmpty)
        var s = Session(task: try compile(headache), options: options)
        try s.goForward()
        #expect(s.state["answer"] == .array([.string("dizziness")]))
        try s.goForward()
        // 120 does not fit 18...90: ignored.
        #expect(s.stepID == "about")
        #expect(s.state["answer"] == .object(JSONObject()))

        var personal = SessionOptions()
        personal.prefill.personalData = JSONObject(["dateOfBirth": .string("1980-05-01")])
        var p = Session(task: try compile("""
        {"identifier": "t", "steps": [{"type": "question", "identifier": "dob", "answerFormat": {"type": "date", "personalData": "dateOfBirth"}}]}
        """), options: personal)
        #expect(p.state["answer"] == .string("1980-05-01"))
        try p.goForward()
        #expect(p.finishReason == .completed)
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
