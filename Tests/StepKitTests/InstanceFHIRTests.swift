import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// FHIR repeating groups whose items have conditions (issue 31): each condition holds per
/// repetition. The expectations are the FHIR R4 specification's, not the engine's:
/// `Questionnaire.item.enableWhen.question` means "the nearest question occurrence reachable by
/// tracing first the ancestor axis and then the preceding axis and then the following axis", so
/// - inside a repetition, a sibling's answer is that same repetition's (ancestor axis);
/// - after the group, the nearest preceding occurrence is the last repetition's;
/// and a disabled item has no answer in the QuestionnaireResponse (R4, "Questionnaire
/// Responses": "Questions that are not enabled ... SHALL NOT have answers").
@Suite struct InstanceFHIRTests {
    static let children = #"""
    {"resourceType": "Questionnaire", "status": "active", "url": "http://example.org/q/children", "item": [
      {"linkId": "child", "type": "group", "text": "Child", "repeats": true, "item": [
        {"linkId": "name", "type": "string", "text": "Name"},
        {"linkId": "age", "type": "integer", "text": "Age"},
        {"linkId": "school", "type": "string", "text": "School", "enableWhen": [{"question": "age", "operator": ">=", "answerInteger": 5}]}]},
      {"linkId": "teen", "type": "boolean", "text": "Is your youngest listed child a teenager?",
       "enableWhen": [{"question": "age", "operator": ">", "answerInteger": 12}]},
      {"linkId": "end", "type": "string", "text": "Anything else?"}]}
    """#

    @Test func conditionsHoldPerRepetitionAndAfterTheGroupReadTheLast() throws {
        let (task, report, _) = try FHIRImporter.compile(try json(InstanceFHIRTests.children), options: FHIRImportOptions())
        #expect(!report.entries.map(\.code).contains("repeatingGroup"), "\(report.entries.map(\.code))")
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("child")
        try s.addInstance("child")
        // The first child is 7 (school asked), the second 3 (school not asked: the answer the
        // host sent for it is not the participant's).
        try s.setAnswer(try json(#"{"child": [{"name": "Ada", "age": 7, "school": "Hill"}, {"name": "Bo", "age": 3, "school": "none"}]}"#))
        let hidden = s.stateJSON().objectValue?["instances"]?.objectValue?["child"]?.objectValue?["hidden"]
        #expect(hidden == (try json(#"[[], ["school"]]"#)))
        let response = s.fhirResponse(try #require(task.fhir))
        let reps = try #require(response.objectValue?["item"]?.arrayValue)
        let linkIds = { (k: Int) in reps[k].objectValue?["item"]?.arrayValue?.compactMap { $0.objectValue?["linkId"]?.stringValue } ?? [] }
        #expect(reps.count == 2 && linkIds(0) == ["name", "age", "school"] && linkIds(1) == ["name", "age"])
        // After the group: the last repetition's age (3) is not over 12, so "teen" is not asked.
        try s.goForward()
        #expect(s.currentStep?.identifier == "end")
        // Back: the last child is now 13; the first is 7.
        try s.goBackward()
        try s.setAnswer(try json(#"{"child": [{}, {"age": 13}]}"#))
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["child"]?.objectValue?["hidden"] == (try json(#"[[], []]"#)))
        try s.goForward()
        #expect(s.currentStep?.identifier == "teen")
    }

    /// The published forms still import their repeating groups (no "repeatingGroup" entry).
    @Test func publishedFormsStillRepeat() throws {
        for name in ["lhc_min_max_occurs.json", "afhir_repeated_group.json"] {
            guard let q = RepeatingFHIRTests.published(name) else { return }
            let (_, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
            #expect(!report.entries.map(\.code).contains("repeatingGroup"))
        }
    }

    /// questionnaire-minOccurs/maxOccurs on a repeating choice bound how many answers it has
    /// (FHIR R4 extension definitions: "the minimum number of answers for a question"): items
    /// 1.1 and 1.3 of LHC-Forms' test form take 2 or 3 options, in each repetition of group 1
    /// (itself 2 to 3 repetitions). Checked when the task would complete, like required.
    @Test func minAndMaxOccursOnRepeatingChoices() throws {
        guard let q = RepeatingFHIRTests.published("lhc_min_max_occurs.json") else { return }
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(!report.entries.map(\.code).contains("unsupportedExtension"))
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        func problems(_ answer: String) throws -> [String] {
            try s.setAnswer(try json(answer))
            return s.forwardProblems().filter { $0.code == "validationFailed" }.map(\.message)
        }
        let good = #"{"1.1": ["Apple", "Pear"], "1.2": "x", "1.3": ["Apple", "Orange", "Peach"]}"#
        // Two repetitions (minOccurs 2), each with 2 and 3 options: nothing wrong.
        #expect(try problems(#"{"1": [\#(good), \#(good)]}"#).isEmpty)
        // One option in the second repetition's 1.1: too few; four in the first's 1.3: too many.
        let few = try problems(#"{"1": [{}, {"1.1": ["Apple"]}]}"#)
        #expect(few.count == 1 && few[0].contains("from 2 to 3 options") && few[0].contains("Choose your fruits"), "\(few)")
        let many = try problems(#"{"1": [{"1.3": ["Apple", "Orange", "Peach", "Pear"]}, {"1.1": ["Apple", "Pear"]}]}"#)
        #expect(many.count == 1 && many[0].contains("checkboxes for fruits"), "\(many)")
    }

    /// A group's variable reads its repetition's items, and its items' enableWhenExpression reads
    /// the variable (SDC: a variable on an item is evaluated in that item's context; Smart
    /// Forms and the Android SDK read `item` there as the group's children): per repetition.
    @Test func aGroupsVariableIsEvaluatedPerRepetition() throws {
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "person", "type": "group", "repeats": true,
           "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/variable",
                          "valueExpression": {"name": "senior", "language": "text/fhirpath", "expression": "item.where(linkId='age').answer.value >= 65"}}],
           "item": [
            {"linkId": "age", "type": "integer", "text": "Age"},
            {"linkId": "pension", "type": "boolean", "text": "Do you receive a pension?",
             "extension": [{"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-enableWhenExpression",
                            "valueExpression": {"language": "text/fhirpath", "expression": "%senior"}}]}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(!report.entries.map(\.code).contains("repeatingGroup"), "\(report.entries.map(\.code))")
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        for _ in 0..<3 { try s.addInstance("person") }
        // 70: asked; 30: not; unanswered: not (empty is not true).
        try s.setAnswer(try json(#"{"person": [{"age": 70}, {"age": 30}]}"#))
        let hidden = s.stateJSON().objectValue?["instances"]?.objectValue?["person"]?.objectValue?["hidden"]
        #expect(hidden == (try json(#"[[], ["pension"], ["pension"]]"#)))
    }

    /// A group inside a repeating group (not repeating itself) is part of each repetition: its
    /// enableWhen, read in the same repetition, disables it and its items there, and the
    /// response nests it inside that repetition (R4: a disabled group and its descendants have
    /// no answers).
    @Test func aGroupInsideARepetitionIsPartOfIt() throws {
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "med", "type": "group", "text": "Medication", "repeats": true, "item": [
            {"linkId": "drug", "type": "string", "text": "Drug"},
            {"linkId": "taking", "type": "boolean", "text": "Still taking it?"},
            {"linkId": "stop", "type": "group", "text": "Stopped", "enableWhen": [{"question": "taking", "operator": "=", "answerBoolean": false}], "item": [
              {"linkId": "stopDate", "type": "date", "text": "When did you stop?"},
              {"linkId": "why", "type": "string", "text": "Why?"}]}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(!report.entries.map(\.code).contains("repeatingGroup"), "\(report.entries.map(\.code))")
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        try s.addInstance("med")
        try s.addInstance("med")
        try s.setAnswer(try json(#"{"med": [{"drug": "A", "taking": true, "stopDate": "2025-01-01"}, {"drug": "B", "taking": false, "stopDate": "2025-02-03"}]}"#))
        let hidden = s.stateJSON().objectValue?["instances"]?.objectValue?["med"]?.objectValue?["hidden"]
        #expect(hidden == (try json(#"[["stopDate", "why"], []]"#)))
        let layout = try #require(task.fhir)
        let reps = try #require(s.fhirResponse(layout).objectValue?["item"]?.arrayValue)
        let linkIds = { (k: Int) in reps[k].objectValue?["item"]?.arrayValue?.compactMap { $0.objectValue?["linkId"]?.stringValue } ?? [] }
        #expect(reps.count == 2 && linkIds(0) == ["drug", "taking"] && linkIds(1) == ["drug", "taking", "stop"])
        let stop = reps[1].objectValue?["item"]?.arrayValue?.last?.objectValue?["item"]?.arrayValue
        #expect(stop == (try json(#"[{"linkId": "stopDate", "text": "When did you stop?", "answer": [{"valueDate": "2025-02-03"}]}]"#)).arrayValue)
    }
}
