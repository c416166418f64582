import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Issue 32's gaps in filtered choices: a required list that offers nothing, and the removal of
/// selections no longer offered after prefill, a language switch and a restore.
@Suite struct ChoiceGapsTests {
    /// `owned` optional: left unanswered, the required `favourite` (its chosen choices) offers none.
    static let ownedOptional = filteredTask.replacing(#""identifier": "owned", "answerFormat""#, with: #""identifier": "owned", "optional": true, "answerFormat""#)

    func removals(_ s: inout Session) -> [JSON] {
        s.events.take().filter { $0.objectValue?["type"] == .string("choicesRemoved") }
    }

    @Test func aRequiredQuestionWhoseListOffersNothingCanBeLeft() throws {
        var s = openSession(try compile(Self.ownedOptional), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        try s.skip()  // owned: nothing chosen
        #expect(s.currentStep?.identifier == "favourite")
        let shown = s.stateJSON().objectValue?["step"]?.objectValue?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue
        #expect(shown == [])
        // No choice to give: the required question does not hold the participant back.
        #expect(s.forwardProblems().isEmpty)
        try s.goForward()
        #expect(s.currentStep?.identifier == "wanted")
        #expect(s.answers[2] == nil)

        // With a choice offered it is required again.
        var t = openSession(try compile(Self.ownedOptional), seed: nil)
        try t.setAnswer(.int(30)); try t.goForward()
        try t.setAnswer(json(#"["cat"]"#)); try t.goForward()
        #expect(t.forwardProblems().map(\.code) == ["answerRequired"])
        #expect(throws: StepKitError.self) { try t.goForward() }
    }

    /// At completion (`requiredAnswersChecked: "atCompletion"`) too.
    @Test func aListThatOffersNothingIsNotMissingAtCompletion() throws {
        let text = Self.ownedOptional.replacing(#"{"identifier": "pets", "steps""#, with: #"{"identifier": "pets", "requiredAnswersChecked": "atCompletion", "steps""#)
        var s = openSession(try compile(text), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        try s.skip(); try s.goForward(); try s.goForward()
        #expect(s.finishReason == .completed)
    }

    @Test func theCheckerWarnsRatherThanRefuses() throws {
        let found = try findings(Self.ownedOptional).filter { $0.code == "choicesMayRunOut" }
        #expect(found.map(\.severity) == ["warning", "warning"])
    }

    /// A prefilled selection that the list does not offer now is removed, with an event.
    @Test func prefillRemovesASelectionNotOffered() throws {
        var options = SessionOptions()
        let d = Diagnostics()
        options.prefill.result = ExternalResults(try json("""
        [{"identifier": "pets", "results": [
           {"identifier": "owned", "results": [{"identifier": "owned", "type": "choice", "answer": ["dog", "horse"]}]}]}]
        """), at: .root, d)
        options.prefill.taskIdentifier = "pets"
        #expect(d.isEmpty)
        var s = Session(task: try compile(filteredTask), options: options, clock: ManualClock(1_767_225_600_000).clock)
        _ = s.events.take()
        try s.setAnswer(.int(12))  // under 18: "horse" is not offered
        try s.goForward()
        #expect(s.currentStep?.identifier == "owned")
        #expect(s.answers[1] == .array([.string("dog")]))
        let removed = removals(&s)
        #expect(removed.count == 1)
        #expect(removed.first?.objectValue?["step"] == .string("owned"))
        #expect(removed.first?.objectValue?["values"] == .array([.string("horse")]))
    }

    /// Answers carried over to a version whose list no longer offers a selection: removed, with
    /// an event, when the run is restored.
    @Test func aMigratedRestoreRemovesASelectionNoLongerOffered() throws {
        let old = try compile(filteredTask.replacing(#", "visibleWhen": {"result": "age", "minimum": 18}"#, with: ""))
        let clock = ManualClock(1_767_225_600_000)
        var s = Session(task: old, options: SessionOptions(), clock: clock.clock)
        try s.setAnswer(.int(12)); try s.goForward()
        try s.setAnswer(json(#"["dog", "horse"]"#))
        #expect(s.answers[1] == .array([.string("dog"), .string("horse")]))
        let text = try Restoration.saveText(s)
        var options = SessionOptions()
        options.migrate = true
        var restored = try text.withCString { p in try Restoration.restore(p, task: try compile(filteredTask), options: options, clock: clock.clock) }
        #expect(restored.answers[1] == .array([.string("dog")]))
        let removed = removals(&restored)
        #expect(removed.count == 1)
        #expect(removed.first?.objectValue?["values"] == .array([.string("horse")]))

        // The same version restores exactly: nothing to remove.
        var same = try text.withCString { p in try Restoration.restore(p, task: old, options: SessionOptions(), clock: clock.clock) }
        #expect(same.answers[1] == .array([.string("dog"), .string("horse")]))
        #expect(removals(&same).isEmpty)
    }

    /// A switch of language keeps every selection: what a list offers depends on answers, not
    /// on texts (the switch checks all the same and finds nothing to remove).
    @Test func aLanguageSwitchKeepsTheSelectionsOffered() throws {
        var s = openSession(try compile(filteredTask), seed: nil)
        try s.setAnswer(.int(30)); try s.goForward()
        try s.setAnswer(json(#"["dog", "horse"]"#))
        _ = s.events.take()
        try s.setLanguage("de")
        #expect(s.answers[1] == .array([.string("dog"), .string("horse")]))
        #expect(removals(&s).isEmpty)
    }
}
