import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A review step over repeating blocks (docs/task-format.md, "Review steps"): every instance's
/// answers listed, titled, in order, and an edit into one chosen instance
/// (`editFromReview(_:block:instance:)`, stepkit_session_review_edit_instance). The medications
/// example (a repeating group on a form) and the household example (a repeating section) each
/// get a review step before their last steps; the expected lists are written from the answers
/// the test gives and the examples' texts.
private let medicationsReview = (readFile(repositoryRoot + "examples/tasks/medications.json") ?? "").replacing(
    "    {\n      \"type\": \"completion\",\n      \"identifier\": \"done\",",
    with: "    {\"type\": \"review\", \"identifier\": \"check\"},\n    {\n      \"type\": \"completion\",\n      \"identifier\": \"done\",")
private let householdReview = (readFile(repositoryRoot + "examples/tasks/household.json") ?? "").replacing(
    "    {\n      \"type\": \"instruction\",\n      \"identifier\": \"summary\",",
    with: "    {\"type\": \"review\", \"identifier\": \"check\"},\n    {\n      \"type\": \"instruction\",\n      \"identifier\": \"summary\",")

private func open(_ text: String) throws -> Session {
    Session(task: try compile(text), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556699"), clock: ManualClock(1_000).clock)
}

private func answer(_ s: inout Session, _ text: String) throws {
    try s.setAnswer(try json(text))
    try s.goForward()
}

private func stepID(_ s: Session) -> String? { s.currentStep?.identifier }

private func review(_ s: Session) -> [JSONObject] {
    (s.stateJSON().objectValue?["review"]?.objectValue?["steps"]?.arrayValue ?? []).compactMap(\.objectValue)
}

/// The refusal `body` throws: its status and code, the session's state and saved data unchanged.
private func refused(_ s: inout Session, _ status: Status, _ code: String, _ body: (inout Session) throws(StepKitError) -> Void) throws {
    let state = s.stateJSON()
    let saved = try Restoration.saveText(s)
    do {
        try body(&s)
        Issue.record("not refused: \(code)")
    } catch {
        #expect(error.status == status && error.problems.first?.code == code, "\(error.problems)")
    }
    #expect(s.stateJSON() == state)
    #expect(try Restoration.saveText(s) == saved)
}

/// The medications walked to the review with two medications.
private func medicationsAtReview() throws -> Session {
    #expect(problems(medicationsReview).isEmpty)
    var s = try open(medicationsReview)
    try s.goForward()
    try answer(&s, "true")
    try answer(&s, "2")
    #expect(stepID(s) == "medication")
    try answer(&s, #"{"medications": [{"name": "Aspirin", "dose": 100, "frequency": ["daily"]},"#
                 + #" {"name": "Ibuprofen", "dose": 400, "frequency": ["asNeeded"], "reason": "headache"}], "sideEffects": false}"#)
    try answer(&s, "1")
    #expect(stepID(s) == "check")
    return s
}

@Suite struct ReviewInstanceTests {
    /// A form's repeating group: each instance's items, titled, as the participant reads them.
    @Test func aReviewListsEachInstanceOfAGroup() throws {
        let s = try medicationsAtReview()
        let entry = review(s).first { $0["step"] == .string("medication") }
        let answers = (entry?["answers"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(answers.map { $0["identifier"]?.stringValue ?? "" } == [
            "medications[0].name", "medications[0].dose", "medications[0].frequency", "medications[0].reason",
            "medications[1].name", "medications[1].dose", "medications[1].frequency", "medications[1].reason",
            "sideEffects"])
        #expect(answers.map { $0["displayText"]?.stringValue ?? "-" } == [
            "Aspirin", "100 mg", "Every day", "-", "Ibuprofen", "400 mg", "Only when needed", "headache", "No"])
        #expect(answers.map { $0["instanceTitle"]?.stringValue ?? "-" } == [
            "Medication 1: Aspirin", "Medication 1: Aspirin", "Medication 1: Aspirin", "Medication 1: Aspirin",
            "Medication 2: Ibuprofen", "Medication 2: Ibuprofen", "Medication 2: Ibuprofen", "Medication 2: Ibuprofen", "-"])
        #expect(answers.map { $0["block"]?.stringValue ?? "-" } == Array(repeating: "medications", count: 8) + ["-"])
        #expect(answers.map { $0["instance"]?.numericValue ?? -1 } == [0, 0, 0, 0, 1, 1, 1, 1, -1])
        // Steps without repeating blocks are listed as before: no instance members.
        let howMany = review(s).first { $0["step"] == .string("howMany") }
        #expect(howMany?.keys.sorted() == ["answers", "displayTitle", "skipped", "step", "type"])
    }

    /// An edit into the second medication: the form again, in that instance; the new dose, and
    /// forward goes straight back to the review (missed doses still answered), the first
    /// medication untouched. Saved and restored mid-edit, it is the same.
    @Test func anEditIntoOneInstanceOfAGroup() throws {
        var s = try medicationsAtReview()
        try s.editFromReview("medication", instance: 1)
        #expect(stepID(s) == "medication")
        let state = s.stateJSON().objectValue
        #expect(state?["instances"]?.objectValue?["medications"]?.objectValue?["current"] == .int(1))
        #expect(state?["returnsToReview"] == .string("check"))
        let saved = try Restoration.saveText(s)
        let restored = try saved.withCString { try Restoration.restore($0, task: s.task, options: SessionOptions(), clock: ManualClock(1_000).clock) }
        #expect(restored.stateJSON() == s.stateJSON())
        try answer(&s, #"{"medications": [{}, {"dose": 200}]}"#)
        #expect(stepID(s) == "check")
        let texts = (review(s).first { $0["step"] == .string("medication") }?["answers"]?.arrayValue ?? []).compactMap { $0.objectValue?["displayText"]?.stringValue }
        #expect(texts == ["Aspirin", "100 mg", "Every day", "Ibuprofen", "200 mg", "Only when needed", "headache", "No"])
        // Another block name, with the step's only block named: the same edit.
        try s.editFromReview("medication", block: "medications", instance: 0)
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["medications"]?.objectValue?["current"] == .int(0))
    }

    /// Each bad edit is refused with its own error and changes nothing.
    @Test func badEditsIntoInstancesAreRefused() throws {
        var s = try medicationsAtReview()
        try refused(&s, .invalidArgument, "instanceOutOfRange") { (s: inout Session) throws(StepKitError) in try s.editFromReview("medication", instance: 2) }
        try refused(&s, .invalidArgument, "instanceOutOfRange") { (s: inout Session) throws(StepKitError) in try s.editFromReview("medication", instance: -1) }
        try refused(&s, .invalidArgument, "unknownBlock") { (s: inout Session) throws(StepKitError) in try s.editFromReview("medication", block: "doses", instance: 0) }
        try refused(&s, .state, "noRepeatingBlock") { (s: inout Session) throws(StepKitError) in try s.editFromReview("howMany", instance: 0) }
        try refused(&s, .state, "notReviewed") { (s: inout Session) throws(StepKitError) in try s.editFromReview("done", instance: 0) }
        try refused(&s, .state, "notReviewed") { (s: inout Session) throws(StepKitError) in try s.editFromReview("nothing", instance: 0) }
        // Not on a review step.
        try s.editFromReview("howMany")
        try refused(&s, .state, "notReview") { (s: inout Session) throws(StepKitError) in try s.editFromReview("medication", instance: 0) }

        // A repeating section: an instance past its count, a step navigation passed over in
        // that instance (the first member, an adult, is asked no school question), another block.
        var h = try open(householdReview)
        try h.goForward()
        try answer(&h, "2")
        for (name, age, relation) in [("Maria", "41", "self"), ("Lea", "9", "child")] {
            try answer(&h, "\"\(name)\"")
            try answer(&h, age)
            try answer(&h, "[\"\(relation)\"]")
        }
        try answer(&h, "true")
        #expect(stepID(h) == "check")
        try refused(&h, .invalidArgument, "instanceOutOfRange") { (s: inout Session) throws(StepKitError) in try s.editFromReview("age", instance: 2) }
        try refused(&h, .state, "notReviewed") { (s: inout Session) throws(StepKitError) in try s.editFromReview("school", instance: 0) }
        try refused(&h, .invalidArgument, "unknownBlock") { (s: inout Session) throws(StepKitError) in try s.editFromReview("age", block: "medications", instance: 0) }
        try h.editFromReview("school", block: "person", instance: 1)
        #expect(stepID(h) == "school" && h.stateJSON().objectValue?["answer"] == .bool(true))
    }

    /// The read-only review of a result names each section step's instance (a result has no
    /// titles: null).
    @Test func theReviewOfAResultNamesInstances() throws {
        var h = try open(householdReview)
        try h.goForward()
        try answer(&h, "1")
        try answer(&h, #""Maria""#)
        try answer(&h, "41")
        try answer(&h, #"["self"]"#)
        try h.goForward()
        try h.goForward()
        try h.goForward()
        #expect(h.isFinished)
        let result = JSONWriter.string(h.resultJSON())
        let out = try result.withCString { text in
            try StandaloneReview.review(TextBytes(cString: text), task: h.task, options: SessionOptions()) { () throws(StepKitError) in try JSONParser.parse(result) }
        }
        let steps = (out.objectValue?["steps"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(steps.map { $0["step"]?.stringValue ?? "" } == ["howMany", "name", "age", "relation"])
        #expect(steps.map { $0["section"]?.stringValue ?? "-" } == ["-", "person", "person", "person"])
        #expect(steps.map { $0["instance"]?.numericValue ?? -1 } == [-1, 0, 0, 0])
    }

    /// A repeating question step and a form with two repeating blocks: the question's answers
    /// listed one per instance (`allergy[k]`, titled), an edit into its second answer; a form
    /// with two blocks needs the block named (`blockRequired`), and each is entered by name.
    @Test func repeatingQuestionsAndSeveralBlocks() throws {
        let text = #"""
        {"identifier": "r", "steps": [
          {"type": "question", "identifier": "allergy", "question": "Allergy",
           "repeat": {"maxCount": 4, "title": "Allergy {{index}}: {{allergy}}"}, "answerFormat": {"type": "text"}},
          {"type": "form", "identifier": "both", "formItems": [
            {"identifier": "kids", "text": "Child", "repeat": {"minCount": 1, "maxCount": 3},
             "items": [{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}}]},
            {"identifier": "pets", "text": "Pet", "repeat": {"minCount": 2, "maxCount": 3},
             "items": [{"identifier": "kind", "text": "Kind", "answerFormat": {"type": "text"}}]}]},
          {"type": "review", "identifier": "check"},
          {"type": "completion", "identifier": "done"}]}
        """#
        #expect(problems(text).isEmpty, "\(problems(text))")
        var s = try open(text)
        try s.addInstance(nil)
        try answer(&s, #"["nuts", "pollen"]"#)
        try answer(&s, #"{"kids": [{"name": "Ann"}], "pets": [{"kind": "cat"}, {"kind": "dog"}]}"#)
        #expect(stepID(s) == "check")
        let allergy = (review(s).first { $0["step"] == .string("allergy") }?["answers"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(allergy.map { $0["identifier"]?.stringValue ?? "" } == ["allergy[0]", "allergy[1]"])
        #expect(allergy.map { $0["instanceTitle"]?.stringValue ?? "" } == ["Allergy 1: nuts", "Allergy 2: pollen"])
        #expect(allergy.map { $0["displayText"]?.stringValue ?? "" } == ["nuts", "pollen"])
        let both = (review(s).first { $0["step"] == .string("both") }?["answers"]?.arrayValue ?? []).compactMap(\.objectValue)
        #expect(both.map { $0["identifier"]?.stringValue ?? "" } == ["kids[0].name", "pets[0].kind", "pets[1].kind"])
        #expect(both.map { $0["instanceTitle"] ?? .int(-1) } == [.null, .null, .null])
        try refused(&s, .invalidArgument, "blockRequired") { (s: inout Session) throws(StepKitError) in try s.editFromReview("both", instance: 0) }
        try refused(&s, .invalidArgument, "instanceOutOfRange") { (s: inout Session) throws(StepKitError) in try s.editFromReview("both", block: "kids", instance: 1) }
        try s.editFromReview("both", block: "pets", instance: 1)
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["pets"]?.objectValue?["current"] == .int(1))
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["kids"]?.objectValue?["current"] == .int(0))
        try s.goForward()
        #expect(stepID(s) == "check")
        try s.editFromReview("allergy", instance: 1)
        #expect(stepID(s) == "allergy")
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["allergy"]?.objectValue?["current"] == .int(1))
    }
}
