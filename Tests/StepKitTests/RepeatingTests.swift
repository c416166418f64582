import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A medications list: how many (a question), then a form with a repeating group whose count
/// is that answer, then a repeating question of allergies.
let medications = """
{"identifier": "meds", "steps": [
  {"type": "question", "identifier": "howMany", "question": "How many medications?", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 50}},
  {"type": "form", "identifier": "list", "formItems": [
    {"identifier": "pharmacy", "text": "Pharmacy", "optional": true, "answerFormat": {"type": "text"}},
    {"identifier": "medication", "text": "Medications", "repeat": {"minCount": 1, "maxCount": 4, "count": {"answer": "howMany"}, "title": "Medication {{index}}: {{name}}"},
     "items": [
      {"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
      {"identifier": "dose", "text": "Dose", "optional": true, "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}}]}]},
  {"type": "question", "identifier": "allergies", "question": "Allergies", "repeat": {"minCount": 2, "maxCount": 3}, "answerFormat": {"type": "text"}},
  {"type": "completion", "identifier": "done"}]}
"""

private func open(_ text: String = medications) throws -> Session {
    Session(task: try compile(text), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556666"), clock: ManualClock(1_000).clock)
}

private func block(_ s: Session, _ name: String) -> JSONObject {
    s.stateJSON().objectValue?["instances"]?.objectValue?[name]?.objectValue ?? JSONObject()
}

private func int(_ o: JSONObject, _ key: String) -> Int64? { if case .int(let i)? = o[key] { return i }; return nil }

@Suite struct RepeatingTests {
    @Test func definitionBoundsAndRefusals() throws {
        #expect(problems(medications).isEmpty)
        let never = medications.replacing(#""minCount": 1, "maxCount": 4"#, with: #""minCount": 5, "maxCount": 4"#)
        #expect(problems(never).map(\.code) == ["boundsNeverMet"])
        let nullCount = medications.replacing(#""count": {"answer": "howMany"}"#, with: #""count": null"#)
        #expect(problems(nullCount).map(\.code) == ["wrongType"])
        let textCount = medications.replacing(#""count": {"answer": "howMany"}"#, with: #""count": "three""#)
        #expect(!problems(textCount).isEmpty)
        let huge = medications.replacing(#""maxCount": 4"#, with: #""maxCount": 1000000"#)
        #expect(problems(huge).map(\.code) == ["outOfRange"])
        // A group inside a group nests only when it repeats (NestedRepeatingTests); a repeating
        // question inside one does (several answers in each instance), without a count of its own.
        let nested = medications.replacing(#"{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}}"#,
                                                      with: #"{"identifier": "name", "items": [{"identifier": "n", "answerFormat": {"type": "text"}}]}"#)
        #expect(problems(nested).map(\.code) == ["unsupportedInGroup"])
        let repeatingQuestion = medications.replacing(#"{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}}"#,
                                                      with: #"{"identifier": "name", "repeat": {"maxCount": 3}, "answerFormat": {"type": "text"}}"#)
        #expect(problems(repeatingQuestion).isEmpty)
        let counted = medications.replacing(#"{"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}}"#,
                                            with: #"{"identifier": "name", "repeat": {"count": 2}, "answerFormat": {"type": "text"}}"#)
        #expect(problems(counted).map(\.code) == ["unsupportedInGroup"])
    }

    @Test func countAddsInstancesAndNeverRemovesAnswers() throws {
        var s = try open()
        try s.setAnswer(try json("3"))
        try s.goForward()
        var b = block(s, "medication")
        #expect(int(b, "count") == 3 && int(b, "expectedCount") == 3 && int(b, "current") == 0)
        #expect(b["canAdd"] == .bool(true) && b["canRemove"] == .bool(false))
        #expect(b["titles"] == (try json(#"["Medication 1: ", "Medication 2: ", "Medication 3: "]"#)) || b["titles"]?.arrayValue?.count == 3)
        try s.setAnswer(try json(#"{"medication": [{"name": "Aspirin"}, {}, {"name": "Metformin", "dose": 500}]}"#))
        b = block(s, "medication")
        #expect(b["titles"]?.arrayValue?.first == .string("Medication 1: Aspirin"))
        // The state written straight into the buffer is the tree's, byte for byte.
        var written = JSONOutput()
        s.writeState(events: [], to: &written)
        var tree = try #require(s.stateJSON().objectValue)
        tree["events"] = .array([])
        #expect(written.finishString() == JSONWriter.string(.object(tree)))
        // Back, lower the count: no instance holding answers goes; the state asks to remove.
        try s.goBackward()
        try s.setAnswer(try json("1"))
        try s.goForward()
        b = block(s, "medication")
        #expect(int(b, "count") == 3 && int(b, "expectedCount") == 1 && int(b, "overCount") == 2)
        #expect(s.stateJSON().objectValue?["answer"]?.objectValue?["medication"]?.arrayValue?.count == 3)
        // Removing the middle one: its answers go, the later one moves up, with an event.
        _ = s.events.take()
        try s.removeInstance("medication", at: 1)
        #expect(s.events.take().contains { $0.objectValue?["type"] == .string("instanceRemoved") })
        let answer = s.stateJSON().objectValue?["answer"]?.objectValue?["medication"]
        #expect(answer == (try json(#"[{"name": "Aspirin"}, {"name": "Metformin", "dose": 500}]"#)))
    }

    @Test func addMoveRemoveAndTheirRefusals() throws {
        var s = try open()
        try s.setAnswer(try json("0"))
        try s.goForward()
        #expect(int(block(s, "medication"), "count") == 1)   // minCount
        try refuses(&s, "tooFewInstances") { s throws(StepKitError) in try s.removeInstance("medication", at: 0) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.removeInstance("medication", at: 3) }
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in try s.enterInstance("medication", at: -1) }
        try refuses(&s, "unknownBlock") { s throws(StepKitError) in try s.addInstance("pharmacy") }
        // An answer for instance 3 when there is 1; for instance 7, past maxCount.
        try refuses(&s, "instanceOutOfRange") { s throws(StepKitError) in
            try s.setAnswer(try! JSONParser.parse(#"{"medication": [{}, {}, {"name": "X"}]}"#))
        }
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in
            try s.setAnswer(try! JSONParser.parse(#"{"medication": [{}, {}, {}, {}, {}, {}, {"name": "X"}]}"#))
        }
        for n in 2...4 {
            try s.addInstance(nil)
            #expect(int(block(s, "medication"), "count") == Int64(n))
            #expect(int(block(s, "medication"), "current") == Int64(n - 1))
        }
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in try s.addInstance("medication") }
        try s.enterInstance("medication", at: 1)
        #expect(int(block(s, "medication"), "current") == 1)
        // Added instances are required like the first: each needs its name.
        #expect(s.forwardProblems().map(\.path.description) == ["medication[0].name", "medication[1].name", "medication[2].name", "medication[3].name"])
        try s.setAnswer(try json(#"{"medication": [{"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D", "dose": 1}]}"#))
        #expect(s.forwardProblems().isEmpty)
        // Outside a block.
        var first = try open()
        try refuses(&first, "noRepeatingBlock") { s throws(StepKitError) in try s.addInstance(nil) }
        try refuses(&first, "noRepeatingBlock") { s throws(StepKitError) in try s.enterInstance(nil, at: 0) }
    }

    @Test func countOutOfBoundsIsRefused() throws {
        var s = try open()
        // The count's question allows 50, the block 4: an answer that would need 5 instances.
        try refuses(&s, "countOutOfRange") { s throws(StepKitError) in try s.setAnswer(try! JSONParser.parse("5")) }
        let negative = medications.replacing(#""minimum": 0, "maximum": 50"#, with: #""minimum": -5, "maximum": 50"#)
            .replacing(#""identifier": "howMany","#, with: #""identifier": "howMany", "optional": true,"#)
        var t = try open(negative)
        try refuses(&t, "countOutOfRange") { s throws(StepKitError) in try s.setAnswer(try! JSONParser.parse("-1")) }
        // Unanswered (null): no instance added beyond minCount.
        try t.skip()
        #expect(block(t, "medication")["count"] == .int(1) && block(t, "medication")["expectedCount"] == .null)
    }

    @Test func repeatingQuestionNeedsMinCountAnswersAndResultsNestPerInstance() throws {
        var s = try open()
        try s.setAnswer(try json("2"))
        try s.goForward()
        try s.setAnswer(try json(#"{"medication": [{"name": "Aspirin", "dose": 100}, {"name": "Ibuprofen"}]}"#))
        try s.goForward()
        #expect(s.forwardProblems().map(\.code) == ["answerRequired"])
        try s.setAnswer(try json(#"["peanuts"]"#))
        #expect(s.forwardProblems().map(\.code) == ["answerRequired"])
        try s.setAnswer(try json(#"["peanuts", "pollen"]"#))
        #expect(s.forwardProblems().isEmpty)
        try refuses(&s, "tooManyInstances") { s throws(StepKitError) in try s.setAnswer(try! JSONParser.parse(#"["a", "b", "c", "d"]"#)) }
        // A repeating question's list may grow by its answer, up to maxCount; a shorter one
        // removes nothing.
        try s.setAnswer(try json(#"["peanuts", "pollen", "latex"]"#))
        try s.setAnswer(try json(#"["nuts"]"#))
        #expect(s.answers[2] == (try json(#"["nuts", "pollen", "latex"]"#)))
        #expect(block(s, "allergies")["count"] == .int(3) && block(s, "allergies")["canAdd"] == .bool(false))
        try s.removeInstance(nil, at: 2)
        #expect(s.answers[2] == (try json(#"["nuts", "pollen"]"#)))
        try refuses(&s, "tooFewInstances") { s throws(StepKitError) in try s.removeInstance("allergies", at: 0) }
        try s.goForward()
        try s.goForward()
        let results = try #require(s.resultJSON().objectValue?["results"]?.arrayValue)
        let group = try #require(results[1].objectValue?["results"]?.arrayValue?[1].objectValue)
        #expect(group["type"] == .string("group"))
        let instances = try #require(group["instances"]?.arrayValue)
        #expect(instances.count == 2)
        #expect(instances[1].objectValue?["index"] == .int(1))
        let second = try #require(instances[1].objectValue?["results"]?.arrayValue)
        #expect(second.map { $0.objectValue?["identifier"] } == [.string("name"), .string("dose")])
        #expect(second[0].objectValue?["answer"] == .string("Ibuprofen") && second[1].objectValue?["answer"] == .null)
        let allergies = try #require(results[2].objectValue?["results"]?.arrayValue?.first?.objectValue)
        #expect(allergies["instances"]?.arrayValue?.compactMap { $0.objectValue?["answer"]?.stringValue } == ["nuts", "pollen"])
        // The result written straight into the buffer is the tree's, byte for byte.
        var out = JSONOutput()
        s.writeResult(to: &out)
        #expect(out.finishString() == JSONWriter.string(s.resultJSON()))
    }

    @Test func restorationIsExactAndRefusesInstancesTheBoundsDoNotAllow() throws {
        var s = try open()
        try s.setAnswer(try json("2"))
        try s.goForward()
        try s.setAnswer(try json(#"{"medication": [{"name": "A"}, {"name": "B"}]}"#))
        try s.addInstance(nil)
        try s.enterInstance("medication", at: 1)
        let text = try Restoration.saveText(s)
        let task = s.task
        let back = try Restoration.restore(text: text, task: task, clock: ManualClock(1_000).clock)
        #expect(try Restoration.saveText(back) == text)
        #expect(back.stateJSON().objectValue?["instances"] == s.stateJSON().objectValue?["instances"])
        // Five instances where maxCount is 4: refused; and a cursor past the instances.
        var doc = try #require(try json(text).objectValue)
        doc["integrity"] = nil
        var answers = try #require(doc["answers"]?.objectValue)
        answers["list"] = try json(#"{"medication": [{"name": "A"}, {}, {}, {}, {}]}"#)
        doc["answers"] = .object(answers)
        #expect(refusalCode(try Restoration.resignedText(doc), task) == "damaged")
        var cursor = try #require(try json(text).objectValue)
        cursor["integrity"] = nil
        cursor["instances"] = try json(#"{"list": {"medication": 3}}"#)
        #expect(refusalCode(try Restoration.resignedText(cursor), task) == "damaged")
        // The same documents unchanged restore: the refusals are for the instances alone.
        var same = try #require(try json(text).objectValue)
        same["integrity"] = nil
        #expect(refusalCode(try Restoration.resignedText(same), task) == nil)
    }

    @Test func migrationCarriesInstancesOverItemByItem() throws {
        var s = try open()
        try s.setAnswer(try json("3"))
        try s.goForward()
        try s.setAnswer(try json(#"{"medication": [{"name": "A", "dose": 1}, {"name": "B"}, {"name": "C", "dose": 3}]}"#))
        let text = try Restoration.saveText(s)
        // Version 2: no dose, at most 2 medications, and a new optional item in the group.
        let v2 = medications.replacing(#""minCount": 1, "maxCount": 4"#, with: #""minCount": 1, "maxCount": 2"#)
            .replacing(#"{"identifier": "dose", "text": "Dose", "optional": true, "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}}"#,
                       with: #"{"identifier": "form", "optional": true, "answerFormat": {"type": "text"}}"#)
            .replacing(#""maximum": 50"#, with: #""maximum": 2"#)
        let migrated = try Restoration.restore(text: text, task: try compile(v2), options: .migrating)
        let dropped = migrated.restoreReport.objectValue?["dropped"]?.arrayValue?.compactMap { $0.objectValue?["item"]?.stringValue } ?? []
        #expect(dropped == ["medication[0].dose", "medication[2]"])
        #expect(migrated.answers[1] == (try json(#"{"medication": [{"name": "A"}, {"name": "B"}]}"#)))
    }
}

/// FHIR `repeats` on groups and questions (issue 31): the published min/max-occurs and
/// repeated-group forms beside the repository (`../shared/fhir/q`; skipped when absent).
@Suite struct RepeatingFHIRTests {
    static func published(_ name: String) -> JSON? {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        let path = parts.joined(separator: "/") + "/../shared/fhir/q/" + name
        guard let text = readFile(path) else {
            print("skipped: \(path) is absent (the published FHIR forms are not beside the repository)")
            return nil
        }
        return try? JSONParser.parse(text)
    }

    @Test func minAndMaxOccursBecomeTheGroupsBounds() throws {
        guard let q = RepeatingFHIRTests.published("lhc_min_max_occurs.json") else { return }
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        let codes = report.entries.map(\.code)
        #expect(!codes.contains("repeatingGroup"))
        // Items 1.1 and 1.3 repeat as multiple choices: their occurs bound the options selected
        // (InstanceFHIRTests.minAndMaxOccursOnRepeatingChoices).
        #expect(report.entries.filter { $0.code == "unsupportedExtension" }.isEmpty)
        guard case .form(let form)? = task.steps.first?.content, let group = form.items.first?.format.rules as? RepeatingFormat else {
            Issue.record("the group is not a repeating group")
            return
        }
        #expect(group.bounds.minCount == 2 && group.bounds.maxCount == 3)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["1"]?.objectValue?["count"] == .int(2))
        try s.setAnswer(try json(#"{"1": [{"1.1": ["Apple"], "1.2": "a"}, {"1.2": "c"}]}"#))
        try s.addInstance(nil)
        #expect(throws: StepKitError.self) { try s.addInstance(nil) }  // maxOccurs 3
        try s.setAnswer(try json(#"{"1": [{}, {}, {"1.2": "z"}]}"#))
        let response = s.fhirResponse(try #require(task.fhir))
        let items = try #require(response.objectValue?["item"]?.arrayValue)
        // One response item per repetition, in order, each with its own answers.
        #expect(items.map { $0.objectValue?["linkId"] } == [.string("1"), .string("1"), .string("1")])
        let first = try #require(items[0].objectValue?["item"]?.arrayValue)
        #expect(first.map { $0.objectValue?["linkId"] } == [.string("1.1"), .string("1.2")])
        #expect(first[1].objectValue?["answer"] == (try json(#"[{"valueString": "a"}]"#)))
        #expect(items[1].objectValue?["item"]?.arrayValue?.first?.objectValue?["answer"] == (try json(#"[{"valueString": "c"}]"#)))
        #expect(items[2].objectValue?["item"]?.arrayValue?.first?.objectValue?["answer"] == (try json(#"[{"valueString": "z"}]"#)))
    }

    @Test func theAndroidCatalogsRepeatedGroupLoops() throws {
        guard let q = RepeatingFHIRTests.published("afhir_repeated_group.json") else { return }
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(!report.entries.map(\.code).contains("repeatingGroup"))
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        let block = try #require(s.stateJSON().objectValue?["instances"]?.objectValue?["1"]?.objectValue)
        #expect(block["count"] == .int(0) && block["canAdd"] == .bool(true))
        try s.addInstance("1")
        try s.addInstance("1")
        try s.setAnswer(try json(#"{"1": [{"1-1": "2024-01-02"}, {"1-1": "2025-03-04"}]}"#))
        try s.removeInstance("1", at: 0)
        let response = s.fhirResponse(try #require(task.fhir))
        let items = try #require(response.objectValue?["item"]?.arrayValue)
        #expect(items.count == 1)
        #expect(items[0].objectValue?["item"]?.arrayValue?.first?.objectValue?["answer"] == (try json(#"[{"valueDate": "2025-03-04"}]"#)))
    }

    @Test func aRepeatingQuestionRepeatsItsAnswers() throws {
        let q = try json(#"""
        {"resourceType": "Questionnaire", "status": "active", "item": [
          {"linkId": "allergy", "text": "Allergies", "type": "string", "repeats": true, "required": true,
           "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-maxOccurs", "valueInteger": 2}]}]}
        """#)
        let (task, report, _) = try FHIRImporter.compile(q, options: FHIRImportOptions())
        #expect(report.entries.isEmpty)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_000).clock)
        #expect(s.forwardProblems().map(\.code) == ["answerRequired"])
        try s.setAnswer(try json(#"["nuts", "pollen"]"#))
        #expect(throws: StepKitError.self) { try s.setAnswer(try json(#"["a", "b", "c"]"#)) }
        let response = s.fhirResponse(try #require(task.fhir))
        #expect(response.objectValue?["item"]?.arrayValue?.first?.objectValue?["answer"] == (try json(#"[{"valueString": "nuts"}, {"valueString": "pollen"}]"#)))
    }
}
