import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private let sleepDiary = """
{"identifier": "diary", "steps": [
  {"type": "form", "identifier": "night", "formItems": [
    {"identifier": "inBed", "text": "Hours in bed", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 24}},
    {"identifier": "asleep", "text": "Hours asleep", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 24}}],
   "validations": [{"when": {"all": [{"result": {"step": "night", "item": "asleep"}, "minimum": 9}, {"result": {"step": "night", "item": "inBed"}, "maximum": 8}]},
                    "message": "You cannot sleep longer than you were in bed."}]},
  {"type": "question", "identifier": "nap", "optional": true, "answerFormat": {"type": "boolean"}},
  {"type": "completion", "identifier": "done"}],
 "validations": [{"when": {"not": {"result": "nap", "answered": true}}, "message": "Tell us whether you napped before you finish."}]}
"""

private func restore(_ saved: JSON, _ task: Task) throws(StepKitError) -> Session {
    let text = JSONWriter.string(saved)
    let result = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: SessionOptions(), clock: .system) }
    }
    return try result.get()
}

/// `validations` on a form step and on the task (issue 13): `when` describes the problem.
@Suite struct ValidationTests {
    func open() throws -> Session {
        Session(task: try compile(sleepDiary), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_767_225_600_000).clock)
    }

    @Test func aFormValidationRefusesForward() throws {
        var s = try open()
        try s.setAnswer(try json(#"{"inBed": 7, "asleep": 10}"#))
        #expect(s.forwardProblems().map(\.code) == ["validationFailed"])
        #expect(s.forwardProblems().first?.message == "You cannot sleep longer than you were in bed.")
        let state = try #require(s.stateJSON().objectValue)
        #expect(state["navigation"]?.objectValue?["canGoForward"] == .bool(false))
        let before = Restoration.save(s)
        do throws(StepKitError) {
            try s.goForward()
            Issue.record("went forward")
        } catch {
            #expect(error.status == .state)
            #expect(error.problems.map(\.code) == ["validationFailed"])
        }
        #expect(Restoration.save(s) == before)
        try s.setAnswer(try json(#"{"asleep": 6}"#))
        try s.goForward()
        #expect(s.currentStep?.identifier == "nap")
    }

    @Test func aTaskValidationIsCheckedBeforeCompletion() throws {
        var s = try open()
        try s.setAnswer(try json(#"{"inBed": 8, "asleep": 7}"#))
        try s.goForward()
        // Not yet at the end: the task's validation does not apply.
        #expect(s.forwardProblems().isEmpty)
        try s.skip()
        #expect(s.currentStep?.identifier == "done")
        #expect(s.forwardProblems().map(\.message) == ["Tell us whether you napped before you finish."])
        #expect(throws: StepKitError.self) { try s.finish(.completed) }
        #expect(!s.isFinished)
        try s.goBackward()
        try s.setAnswer(.bool(false))
        try s.goForward()
        try s.goForward()
        #expect(s.finishReason == .completed)
        // The replay of a restore applies the same rule: the saved run is allowed.
        let saved = Restoration.save(s)
        #expect(Restoration.save(try restore(saved, s.task)) == saved)
    }

    @Test func aForgedRunPastAFormValidationIsRefused() throws {
        var s = try open()
        try s.setAnswer(try json(#"{"inBed": 8, "asleep": 7}"#))
        try s.goForward()
        guard case .object(var document) = Restoration.save(s) else { Issue.record("no document"); return }
        #expect(Restoration.save(try restore(.object(document), s.task)) == .object(document))
        // The saved answer of the form, changed to one its validation refuses, and signed again.
        let forged = try json(#"{"inBed": 7, "asleep": 10}"#)
        document["integrity"] = nil
        let text = JSONWriter.string(.object(document)).replacingAll(#"{"inBed":8,"asleep":7}"#, with: JSONWriter.string(forged))
        guard case .object(var changed) = try json(text) else { Issue.record("no document"); return }
        let (algorithm, digest) = try Restoration.sign(JSONWriter.string(.object(changed)), key: nil)
        changed["integrity"] = .object(JSONObject(["algorithm": .string(algorithm), "digest": .string(digest)]))
        #expect(text != JSONWriter.string(.object(document)))
        do throws(StepKitError) {
            _ = try restore(.object(changed), s.task)
            Issue.record("forged run restored")
        } catch {
            #expect(error.problems.first?.code == "notAllowed")
            #expect(error.problems.first?.message.contains("You cannot sleep longer than you were in bed.") == true)
        }
    }

    @Test func definitionErrors() {
        let found = problems("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "f", "formItems": [{"identifier": "a", "answerFormat": {"type": "boolean"}}],
           "validations": [{"when": {"result": "nothing", "answered": true}, "message": "m"}, {"when": {"always": true}}, 3]},
          {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}, "validations": []}],
         "validations": {"when": {"always": true}, "message": "m"}}
        """)
        #expect(found.map(\.path.description) == ["steps[1].validations", "steps[0].validations[0].when.result",
                                                   "steps[0].validations[1].message", "steps[0].validations[2]", "validations"])
    }
}

private extension String {
    /// Every occurrence of `target` replaced (the tests use no Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        let t = Array(target.utf8), bytes = Array(utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + t.count <= bytes.count, Array(bytes[i..<(i + t.count)]) == t {
                out += Array(replacement.utf8)
                i += t.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
