import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A screening with a review before completion. The rule (from the definition, not the engine):
/// a participant who does not smoke goes from `smoker` straight to `exercise`; one who smokes
/// answers `cigarettes` first.
let reviewedTask = """
{"identifier": "habits", "steps": [
  {"type": "instruction", "identifier": "intro", "title": "Your habits"},
  {"type": "question", "identifier": "smoker", "title": "Do you smoke?", "answerFormat": {"type": "boolean"}},
  {"type": "question", "identifier": "cigarettes", "title": "Cigarettes a day", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "unit": "per day"}},
  {"type": "question", "identifier": "exercise", "title": "How often do you exercise?",
   "answerFormat": {"type": "textChoice", "style": "singleChoice",
     "textChoices": [{"text": "Never", "value": "never"}, {"text": "Weekly", "value": "weekly"}, {"text": "Daily", "value": "daily"}]}},
  {"type": "review", "identifier": "review", "title": "Check your answers"},
  {"type": "completion", "identifier": "done", "title": "Thank you"}],
 "navigationRules": {
   "smoker": {"type": "predicate", "branches": [{"when": {"result": "smoker", "equals": false}, "destination": "exercise"}]}}}
"""

/// A review entry's answers as (identifier, displayText).
private func listed(_ state: JSONObject) -> [String: [String]] {
    var out: [String: [String]] = [:]
    for entry in state["review"]?.objectValue?["steps"]?.arrayValue ?? [] {
        guard let o = entry.objectValue, let step = o["step"]?.stringValue else { continue }
        out[step] = (o["answers"]?.arrayValue ?? []).map { $0.objectValue?["displayText"]?.stringValue ?? "-" }
    }
    return out
}

private func reviewedSteps(_ state: JSONObject) -> [String] {
    (state["review"]?.objectValue?["steps"]?.arrayValue ?? []).compactMap { $0.objectValue?["step"]?.stringValue }
}

/// The buffer writers (`writeState`, `writeResult`) write what the trees hold, byte for byte.
private func expectWrittenAsTheTrees(_ s: Session, _ context: String) {
    var result = JSONOutput()
    s.writeResult(to: &result)
    #expect(String(decoding: result.finishBytes(), as: UTF8.self) == JSONWriter.string(s.resultJSON()), "result: \(context)")
    let events = s.pendingEvents
    var state = JSONOutput()
    s.writeState(events: events, to: &state)
    var tree = s.stateJSON().objectValue ?? JSONObject()
    tree["events"] = .array(events)
    #expect(String(decoding: state.finishBytes(), as: UTF8.self) == JSONWriter.string(.object(tree)), "state: \(context)")
}

private func resultSteps(_ s: Session) -> [String] {
    (s.resultJSON().objectValue?["results"]?.arrayValue ?? []).compactMap { $0.objectValue?["identifier"]?.stringValue }
}

private func restored(_ s: Session) throws -> Session {
    let text = try Restoration.saveText(s)
    return try text.withCString { pointer throws(StepKitError) in
        try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: ManualClock(1_767_225_600_000).clock)
    }
}

@Suite struct ReviewStepTests {
    /// smoker yes, 10 a day, weekly: the review, with display texts.
    private func atReview() throws -> Session {
        var s = try session(reviewedTask)
        try s.goForward()
        try s.setAnswer(.bool(true)); try s.goForward()
        try s.setAnswer(.int(10)); try s.goForward()
        try s.setAnswer(.array([.string("weekly")])); try s.goForward()
        #expect(s.stepID == "review")
        return s
    }

    @Test func listsThePathWithDisplayTexts() throws {
        let s = try atReview()
        #expect(reviewedSteps(s.state) == ["smoker", "cigarettes", "exercise"])
        #expect(listed(s.state) == ["smoker": ["Yes"], "cigarettes": ["10 per day"], "exercise": ["Weekly"]])
        let first = try #require(s.state["review"]?.objectValue?["steps"]?.arrayValue?.first?.objectValue)
        #expect(first["displayTitle"] == .string("Do you smoke?"))
        #expect(first["answers"]?.arrayValue?.first?.objectValue?["answer"] == .bool(true))
        // Nothing to answer on a review: forward is allowed, and no other state carries a review.
        #expect(s.state["navigation"]?.objectValue?["canGoForward"] == .bool(true))
        var other = try session(reviewedTask)
        #expect(other.state["review"] == nil)
        try other.goForward()
        #expect(other.state["review"] == nil)
    }

    /// The edit that changes the branch: by the rule, a non-smoker goes from `smoker` to
    /// `exercise`, so `cigarettes` leaves the path and its answer is dropped, with an event.
    @Test func anEditThatChangesTheBranchDropsTheAnswersLeftOffThePath() throws {
        var s = try atReview()
        expectWrittenAsTheTrees(s, "at the review")
        try s.editFromReview("smoker")
        #expect(s.stepID == "smoker")
        #expect(s.state["returnsToReview"] == .string("review"))
        expectWrittenAsTheTrees(s, "editing")
        #expect(s.state["answer"] == .bool(true))
        try s.setAnswer(.bool(false))
        _ = s.takeEvents()
        try s.goForward()
        // `exercise` was answered and is on the new path: passed over, back at the review.
        #expect(s.stepID == "review")
        #expect(s.state["returnsToReview"] == nil)
        #expect(reviewedSteps(s.state) == ["smoker", "exercise"])
        #expect(listed(s.state) == ["smoker": ["No"], "exercise": ["Weekly"]])
        let dropped = s.takeEvents().filter { $0.objectValue?["type"] == .string("answerDropped") }
        #expect(dropped.map { $0.objectValue?["step"] } == [.string("cigarettes")])
        #expect(s.answers[s.task.stepIndex["cigarettes"] ?? -1] == nil)
        #expect(s.visited == ["intro", "smoker", "exercise", "review"])
        try s.goForward()
        try s.goForward()
        #expect(s.isFinished)
        #expect(resultSteps(s) == ["intro", "smoker", "exercise", "review", "done"])
        // The saved data holds no answer of the dropped step, and restores to the same run.
        let saved = try json(try Restoration.saveText(s))
        #expect(saved.objectValue?["answers"]?.objectValue?["cigarettes"] == nil)
        #expect(try restored(s).resultJSON() == s.resultJSON())
    }

    /// Back on the branch a smoker takes: `cigarettes` was never answered, so the edit stops
    /// there, then passes over `exercise` back to the review.
    @Test func anEditOntoANewBranchAsksItsQuestionsThenReturns() throws {
        var s = try session(reviewedTask)
        try s.goForward()
        try s.setAnswer(.bool(false)); try s.goForward()
        try s.setAnswer(.array([.string("daily")])); try s.goForward()
        #expect(reviewedSteps(s.state) == ["smoker", "exercise"])
        try s.editFromReview("smoker")
        try s.setAnswer(.bool(true)); try s.goForward()
        #expect(s.stepID == "cigarettes")
        #expect(s.state["returnsToReview"] == .string("review"))
        // Saved and restored in the middle of the edit, the return to the review goes on.
        var back = try restored(s)
        #expect(back.state["returnsToReview"] == .string("review"))
        for var run in [s, back] {
            try run.setAnswer(.int(3)); try run.goForward()
            #expect(run.stepID == "review")
            #expect(listed(run.state) == ["smoker": ["Yes"], "cigarettes": ["3 per day"], "exercise": ["Daily"]])
        }
        back = try restored(s)
        #expect(back.stateJSON() == s.stateJSON())
    }

    @Test func anEditThatKeepsTheBranchReturnsStraightToTheReview() throws {
        var s = try atReview()
        try s.editFromReview("exercise")
        try s.setAnswer(.array([.string("daily")]))
        _ = s.takeEvents()
        try s.goForward()
        #expect(s.stepID == "review")
        #expect(listed(s.state) == ["smoker": ["Yes"], "cigarettes": ["10 per day"], "exercise": ["Daily"]])
        #expect(!s.takeEvents().contains { $0.objectValue?["type"] == .string("answerDropped") })
    }

    @Test func refusedEditsChangeNothing() throws {
        var s = try atReview()
        let before = s.stateJSON()
        let saved = try Restoration.saveText(s)
        for id in ["intro", "done", "review", "nope"] {
            #expect(throws: StepKitError.self) { try s.editFromReview(id) }
        }
        #expect(s.stateJSON() == before)
        #expect(try Restoration.saveText(s) == saved)
        var notReview = try session(reviewedTask)
        try notReview.goForward()
        do {
            try notReview.editFromReview("smoker")
            Issue.record("an edit from a step that is not a review was accepted")
        } catch {
            #expect(error.status == .state)
            #expect(error.problems.first?.code == "notReview")
        }
    }

    @Test func damagedReviewReturnIsRefused() throws {
        var s = try atReview()
        try s.editFromReview("smoker")
        var document = try #require(try json(try Restoration.saveText(s)).objectValue)
        #expect(document["reviewReturn"]?.objectValue?["review"] == .string("review"))
        document["integrity"] = nil
        document["reviewReturn"] = .object(["review": .string("smoker"), "edited": .string("smoker"), "offPath": .array([])])
        let text = JSONWriter.string(.object(document))
        #expect(throws: StepKitError.self) {
            _ = try text.withCString { pointer throws(StepKitError) in
                try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: .system)
            }
        }
    }

    @Test func standaloneReviewOfASavedAndAFinishedRun() throws {
        var s = try atReview()
        let saved = try Restoration.saveText(s)
        let fromSaved = try TextBytes.with(saved) { (text: TextBytes) throws(StepKitError) in
            try StandaloneReview.review(text, task: s.task, options: SessionOptions()) { () throws(StepKitError) in try JSONParser.parse(saved) }
        }
        #expect(fromSaved.objectValue?["source"] == .string("restorationData"))
        #expect(listed(JSONObject(["review": fromSaved])) == ["smoker": ["Yes"], "cigarettes": ["10 per day"], "exercise": ["Weekly"]])
        try s.goForward(); try s.goForward()
        let resultText = JSONWriter.string(s.resultJSON())
        let fromResult = try TextBytes.with(resultText) { (text: TextBytes) throws(StepKitError) in
            try StandaloneReview.review(text, task: s.task, options: SessionOptions()) { () throws(StepKitError) in try JSONParser.parse(resultText) }
        }
        #expect(fromResult.objectValue?["source"] == .string("result"))
        #expect(listed(JSONObject(["review": fromResult])) == ["smoker": ["Yes"], "cigarettes": ["10 per day"], "exercise": ["Weekly"]])
        #expect(throws: StepKitError.self) {
            _ = try TextBytes.with("[1]") { (text: TextBytes) throws(StepKitError) in
                try StandaloneReview.review(text, task: s.task, options: SessionOptions()) { () throws(StepKitError) in try JSONParser.parse("[1]") }
            }
        }
    }

    @Test func checkerFindsAReviewWithNothingToReview() throws {
        let empty = """
        {"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}, {"type": "review", "identifier": "r"},
          {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]}
        """
        #expect(try findings(empty).contains(Finding(severity: "warning", code: "nothingToReview", path: "steps[1]")))
        #expect(try !findings(reviewedTask).contains { $0.code == "nothingToReview" })
    }
}

/// A page (ResearchKit's `ORKPageStep`): age, whether one smokes, and packs only for a smoker.
let pagedTask = """
{"identifier": "paged", "steps": [
  {"type": "page", "identifier": "about", "title": "About you", "steps": [
    {"type": "instruction", "identifier": "note", "title": "A few questions", "text": "All on one page."},
    {"type": "question", "identifier": "age", "question": "Your age", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 18}},
    {"type": "question", "identifier": "smokes", "title": "Do you smoke?", "answerFormat": {"type": "boolean"}},
    {"type": "question", "identifier": "packs", "title": "Packs a week", "answerFormat": {"type": "numeric", "style": "integer"},
     "visibleWhen": {"result": {"step": "about", "item": "smokes"}, "equals": true}}]},
  {"type": "review", "identifier": "review"},
  {"type": "completion", "identifier": "done"}]}
"""

@Suite struct PageStepTests {
    @Test func subStepsTogetherWithOneValidationAndPageResults() throws {
        var s = try session(pagedTask)
        #expect(s.state["step"]?.objectValue?["formItems"]?.arrayValue?.count == 4)
        // One combined validation: age and smokes are required together.
        try s.setAnswer(try json(#"{"smokes": false}"#))
        #expect(throws: StepKitError.self) { try s.goForward() }
        #expect(s.state["visibleItems"] == .array([.string("age"), .string("smokes")]))
        // The page follows its rules: a smoker is asked for packs, which is then required.
        try s.setAnswer(try json(#"{"age": 40, "smokes": true}"#))
        #expect(s.state["visibleItems"] == .array([.string("age"), .string("smokes"), .string("packs")]))
        #expect(throws: StepKitError.self) { try s.goForward() }
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"{"age": 12, "smokes": false}"#)) }
        try s.setAnswer(try json(#"{"age": 40, "smokes": false}"#))
        try s.goForward()
        #expect(s.stepID == "review")
        #expect(listed(s.state) == ["about": ["40", "No"]])
        let entry = try #require(s.state["review"]?.objectValue?["steps"]?.arrayValue?.first?.objectValue)
        #expect(entry["answers"]?.arrayValue?.map { $0.objectValue?["identifier"] } == [.string("about.age"), .string("about.smokes")])
        try s.goForward(); try s.goForward()
        expectWrittenAsTheTrees(s, "a page's results")
        let page = try #require(s.resultJSON().objectValue?["results"]?.arrayValue?.first?.objectValue)
        #expect(page["identifier"] == .string("about"))
        #expect(page["results"]?.arrayValue?.map { $0.objectValue?["identifier"] } == [.string("about.age"), .string("about.smokes")])
        #expect(page["results"]?.arrayValue?.map { $0.objectValue?["answer"] } == [.int(40), .bool(false)])
        // A submitted result with page results verifies.
        let report = try Verification.verify(s.resultJSON(), task: s.task, options: VerifyOptions())
        #expect(report.objectValue?["verified"] == .bool(true), "\(JSONWriter.string(report))")
        // ... and one that names a page result otherwise does not.
        var bad = try #require(s.resultJSON().objectValue)
        var results = try #require(bad["results"]?.arrayValue)
        var first = try #require(results[0].objectValue)
        var items = try #require(first["results"]?.arrayValue)
        var age = try #require(items[0].objectValue)
        age["identifier"] = .string("age")
        items[0] = .object(age); first["results"] = .array(items); results[0] = .object(first); bad["results"] = .array(results)
        let refused = try Verification.verify(.object(bad), task: s.task, options: VerifyOptions())
        #expect(refused.objectValue?["verified"] == .bool(false))
    }

    @Test func definitionsThatAreNoPage() throws {
        func codes(_ steps: String) -> [String] {
            problems(#"{"identifier": "t", "steps": [{"type": "page", "identifier": "p", "steps": \#(steps)}]}"#).map(\.code)
        }
        #expect(codes("[]").contains("emptyPage"))
        #expect(codes(#"[{"type": "form", "identifier": "f", "formItems": []}]"#).contains("unknownStepType"))
        #expect(codes(#"[{"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}, "colour": 1}]"#).contains("unknownKey"))
        #expect(codes(#"[{"type": "instruction", "identifier": "i", "answerFormat": {"type": "boolean"}}]"#).contains("unknownKey"))
        #expect(codes(#"[{"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}, {"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]"#).contains("duplicateIdentifier"))
        #expect(codes(#"[{"type": "question", "identifier": "q", "answerFormat": {"type": "boolean"}}]"#).isEmpty)
        // An unknown type lists review and page among those there are; none is reserved now.
        let unknown = problems(#"{"identifier": "t", "steps": [{"type": "chart", "identifier": "x"}]}"#).first?.message ?? ""
        #expect(unknown.contains("review, page") && !unknown.contains("not supported yet"))
    }

    @Test func aPageSavesAndRestores() throws {
        var s = try session(pagedTask)
        try s.setAnswer(try json(#"{"age": 40, "smokes": true, "packs": 2}"#))
        let back = try restored(s)
        #expect(back.state["answer"] == s.state["answer"])
        #expect(back.resultJSON().objectValue?["results"] == s.resultJSON().objectValue?["results"])
    }
}
