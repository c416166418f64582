import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

private let screener = """
{"identifier": "v", "steps": [
  {"type": "form", "identifier": "f", "formItems": [
    {"identifier": "smokes", "text": "Do you smoke?", "answerFormat": {"type": "boolean"}},
    {"sectionTitle": "Smoking", "visibleWhen": {"result": {"step": "f", "item": "smokes"}, "equals": true}},
    {"identifier": "perDay", "text": "How many a day?", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 100}},
    {"identifier": "since", "text": "Since when?", "optional": true, "answerFormat": {"type": "numeric", "style": "integer"},
     "visibleWhen": {"result": {"step": "f", "item": "perDay"}, "minimum": 10}},
    {"sectionTitle": "Everyone"},
    {"identifier": "sleep", "text": "Hours of sleep", "answerFormat": {"type": "numeric", "style": "integer"}}]},
  {"type": "section", "identifier": "smoking", "visibleWhen": {"result": {"step": "f", "item": "smokes"}, "equals": true}, "steps": [
    {"type": "question", "identifier": "quit", "answerFormat": {"type": "boolean"}}]},
  {"type": "completion", "identifier": "done"}]}
"""

private func restore(_ saved: JSON, _ task: Task) throws(StepKitError) -> Session {
    let text = JSONWriter.string(saved)
    let result = text.withCString { pointer in
        Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: SessionOptions(), clock: .system) }
    }
    return try result.get()
}

/// `visibleWhen` on a form section header hides the items up to the next header; on a section
/// step it skips the section while it does not hold (issue 13).
@Suite struct SectionVisibilityTests {
    func open() throws -> Session {
        Session(task: try compile(screener), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_767_225_600_000).clock)
    }

    func visible(_ s: Session) -> [String] {
        s.stateJSON().objectValue?["visibleItems"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    @Test func aHeaderHidesItsItemsUpToTheNextHeader() throws {
        var s = try open()
        #expect(visible(s) == ["smokes", "sleep"])
        try s.setAnswer(try json(#"{"smokes": false, "perDay": 20, "sleep": 7}"#))
        #expect(visible(s) == ["smokes", "sleep"])
        // The hidden required item does not block going forward, and is left out of the result.
        #expect(s.forwardProblems().isEmpty)
        try s.setAnswer(try json(#"{"smokes": true}"#))
        // The header shows its items; an item's own visibleWhen still applies.
        #expect(visible(s) == ["smokes", "perDay", "since", "sleep"])
        try s.setAnswer(try json(#"{"perDay": 5}"#))
        #expect(visible(s) == ["smokes", "perDay", "sleep"])
        try s.setAnswer(try json(#"{"smokes": false}"#))
        try s.goForward()
        // The section's visibleWhen does not hold: it is passed over, and the arrival says why.
        let arrival = s.stateJSON().objectValue?["navigation"]?.objectValue?["arrival"]
        #expect(s.currentStep?.identifier == "done")
        #expect(arrival == .array([.object(["skipped": .string("smoking"), "by": .string("visibleWhen")])]))
        try s.goForward()
        let result = try #require(s.resultJSON().objectValue?["results"]?.arrayValue?.first?.objectValue)
        let answered = result["results"]?.arrayValue?.compactMap { $0.objectValue?["identifier"]?.stringValue }
        #expect(answered?.contains("perDay") == false)
        #expect(answered?.contains("sleep") == true)
        // Restore replays the same decisions.
        let saved = Restoration.save(s)
        let back = try restore(saved, s.task)
        #expect(Restoration.save(back) == saved)
    }

    @Test func aShownSectionIsWalkedAndRestores() throws {
        var s = try open()
        try s.setAnswer(try json(#"{"smokes": true, "sleep": 7}"#))
        #expect(!s.forwardProblems().isEmpty)
        #expect(s.forwardProblems().map(\.item) == ["perDay"])
        try s.setAnswer(try json(#"{"perDay": 12}"#))
        try s.goForward()
        #expect(s.currentStep?.identifier == "quit")
        let saved = Restoration.save(s)
        let back = try restore(saved, s.task)
        #expect(back.currentStep?.identifier == "quit")
        #expect(Restoration.save(back) == saved)
        try s.setAnswer(.bool(true))
        try s.goForward()
        try s.goForward()
        #expect(s.finishReason == .completed)
    }

    @Test func compileErrorsAndCheckerFindings() throws {
        let bad = problems("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "f", "formItems": [
            {"sectionTitle": "S", "visibleWhen": {"result": "nothing", "answered": true}},
            {"identifier": "a", "answerFormat": {"type": "boolean"}}]},
          {"type": "section", "identifier": "s", "visibleWhen": {"result": {"step": "f", "item": "a"}, "equals": 3}, "steps": [
            {"type": "instruction", "identifier": "i"}]}]}
        """)
        #expect(bad.map(\.path.description) == ["steps[0].formItems[0].visibleWhen.result", "steps[1].visibleWhen.equals"])
        let found = try findings("""
        {"identifier": "t", "steps": [
          {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "a", "answerFormat": {"type": "boolean"}},
            {"sectionTitle": "Never", "visibleWhen": {"always": false}},
            {"identifier": "b", "answerFormat": {"type": "boolean"}}]},
          {"type": "section", "identifier": "s", "visibleWhen": {"always": false}, "steps": [
            {"type": "instruction", "identifier": "i"}]},
          {"type": "completion", "identifier": "done"}]}
        """)
        #expect(found.contains(Finding(severity: "warning", code: "requiredItemHidden", path: "steps[0].formItems[1].visibleWhen")))
        #expect(found.contains(Finding(severity: "warning", code: "sectionAlwaysHidden", path: "steps[1].visibleWhen")))
    }
}
