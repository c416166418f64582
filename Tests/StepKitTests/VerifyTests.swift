import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Verifying a submission (`Verify/`, docs/verify.md): a result the engine wrote verifies clean,
/// and each kind of edit to it is reported with its code at the place it was made.
@Suite struct VerifyTests {
    /// The headache task: intro, symptom, severity, [pain, onset, aura] (headache only; aura
    /// skipped when pain ≤ 3), about (skipped when severity is false), done.
    func headache() throws -> Task {
        try compile(try #require(readFile(InstrumentTests.examples + "headache.json")))
    }

    /// Walks `task` with `answers` (by step) one minute a step from 2026-01-01, and returns the result.
    func walk(_ task: Task, _ answers: String) throws -> JSON {
        let given = try #require(try json(answers).objectValue)
        let clock = ManualClock(1_767_225_600_000)
        var s = Session(task: task, options: SessionOptions(), clock: clock.clock)
        var moves = 0
        while !s.isFinished, let step = s.currentStep, moves < 100 {
            moves += 1
            clock.now += 60_000
            if let answer = given[step.identifier] { try s.setAnswer(answer) }
            if given[step.identifier] == nil && step.takesAnswers && step.optional { try s.skip() } else { try s.goForward() }
        }
        #expect(s.finishReason == .completed)
        return s.resultJSON()
    }

    let headacheAnswers = #"{"symptom": ["headache"], "severity": true, "pain": 8, "onset": "07:30", "aura": true, "about": {"age": 42, "email": "ann@example.org"}}"#

    func verify(_ task: Task, _ submission: JSON, _ options: String = "null") throws -> (codes: [String], paths: [String], report: JSONObject) {
        let report = try #require(try Verification.verify(submission, task: task, options: VerifyOptions.parse(json(options))).objectValue)
        let list = report["divergences"]?.arrayValue ?? []
        return (list.compactMap { $0.objectValue?["code"]?.stringValue }, list.compactMap { $0.objectValue?["path"]?.stringValue }, report)
    }

    /// `result` with `change` applied to its JSON text form of the path `results`.
    func edited(_ result: JSON, _ change: (inout JSONObject) -> Void) throws -> JSON {
        var o = try #require(result.objectValue)
        change(&o)
        return .object(o)
    }

    @Test func aResultTheEngineWroteVerifiesCleanAndIsRecomputedAsItWas() throws {
        let task = try headache()
        let result = try walk(task, headacheAnswers)
        let (codes, _, report) = try verify(task, result)
        #expect(codes == [])
        #expect(report["verified"] == .bool(true))
        #expect(report["result"]?.sameValue(as: result) == true)
    }

    @Test func anotherTaskIsReportedAlone() throws {
        let task = try headache()
        let result = try edited(try walk(task, headacheAnswers)) { $0["identifier"] = .string("migraine") }
        let (codes, paths, report) = try verify(task, result)
        #expect(codes == ["otherTask"])
        #expect(paths == ["identifier"])
        #expect(report["result"] == .null)
    }

    @Test func anotherVersionIsReported() throws {
        let task = try headache()
        let result = try edited(try walk(task, headacheAnswers)) { $0["taskFingerprint"] = .string("sha256:0000") }
        #expect(try verify(task, result).codes == ["otherVersion"])
        let own = try edited(try walk(task, headacheAnswers)) { $0["taskFingerprint"] = .string(try! task.fingerprint.value()) }
        #expect(try verify(task, own).codes == [])
    }

    /// results: [intro, symptom, severity, headacheDetails{pain, onset, aura}, about, done].
    func steps(_ o: JSONObject) -> [JSON] { o["results"]?.arrayValue ?? [] }

    @Test func aMissingStepAndARepeatedStepAreReported() throws {
        let task = try headache()
        let result = try walk(task, headacheAnswers)
        // Without "severity" (index 2): navigation shows it, the submission lacks it.
        let dropped = try edited(result) { o in var r = steps(o); r.remove(at: 2); o["results"] = .array(r) }
        let first = try verify(task, dropped, #"{"ignore": ["dates"]}"#)
        // Reported where the submission goes on instead: the first step of the section after it.
        #expect(first.codes == ["missingStep"])
        #expect(first.paths == ["results[2].results[0]"])
        // "symptom" twice: navigation shows it once.
        let repeated = try edited(result) { o in var r = steps(o); r.insert(r[1], at: 2); o["results"] = .array(r) }
        let second = try verify(task, repeated, #"{"ignore": ["dates"]}"#)
        #expect(second.codes == ["repeatedStep"])
        #expect(second.paths == ["results[2]"])
    }

    @Test func aReorderedPathIsReported() throws {
        let task = try headache()
        let result = try walk(task, headacheAnswers)
        let swapped = try edited(result) { o in var r = steps(o); r.swapAt(1, 2); o["results"] = .array(r) }
        let (codes, paths, _) = try verify(task, swapped, #"{"ignore": ["dates"]}"#)
        #expect(codes == ["reorderedStep"])
        #expect(paths == ["results[1]"])
    }

    @Test func aStepNavigationWouldNotShowIsReported() throws {
        let task = try headache()
        // Dizziness: navigation goes from symptom to about; the headache section is not shown.
        let dizzy = try walk(task, #"{"symptom": ["dizziness"], "severity": true, "about": {"age": 42}}"#)
        let withPain = try walk(task, headacheAnswers)
        let added = try edited(dizzy) { o in var r = steps(o); r.insert(steps(withPain.objectValue ?? JSONObject())[3], at: 3); o["results"] = .array(r) }
        let (codes, paths, _) = try verify(task, added, #"{"ignore": ["dates"]}"#)
        #expect(codes == ["unexpectedStep", "unexpectedStep", "unexpectedStep"])
        #expect(paths == ["results[3].results[0]", "results[3].results[1]", "results[3].results[2]"])
    }

    /// The answer of the question step at `results[index]` replaced by `answer`.
    func withAnswer(_ result: JSON, step index: Int, _ answer: JSON) throws -> JSON {
        try edited(result) { o in
            var r = steps(o)
            guard case .object(var s) = r[index], var qs = s["results"]?.arrayValue, case .object(var q) = qs[0] else { return }
            q["answer"] = answer
            qs[0] = .object(q)
            s["results"] = .array(qs)
            r[index] = .object(s)
            o["results"] = .array(r)
        }
    }

    @Test func refusedAndWrongTypeAnswersAndMissingRequiredOnesAreReported() throws {
        let task = try headache()
        let result = try walk(task, headacheAnswers)
        // "severity" is a boolean: a string is the wrong type.
        let wrong = try verify(task, try withAnswer(result, step: 2, .string("yes")))
        #expect(wrong.codes.first == "wrongType")
        #expect(wrong.paths.first == "results[2].results[0].answer")
        // A symptom no choice has.
        let refused = try verify(task, try withAnswer(result, step: 1, .array([.string("fever")])))
        #expect(refused.codes.first == "answerRefused")
        #expect(refused.paths.first == "results[1].results[0].answer")
        // "severity" is required.
        let missing = try verify(task, try withAnswer(result, step: 2, .null))
        #expect(missing.codes.first == "requiredAnswerMissing")
        #expect(missing.paths.first == "results[2].results[0].answer")
    }

    @Test func datesOutOfOrderUnknownIdentifiersAndFieldsAreReported() throws {
        let task = try headache()
        let result = try walk(task, headacheAnswers)
        let early = try edited(result) { o in o["endDate"] = .string("2020-01-01T00:00:00.000Z") }
        #expect(try verify(task, early).codes == ["datesOutOfOrder"])
        #expect(try verify(task, early, #"{"ignore": ["dates"]}"#).codes == [])
        let extra = try edited(result) { o in o["device"] = .string("phone") }
        #expect(try verify(task, extra).codes == ["unknownField"])
        #expect(try verify(task, extra, #"{"unknownFields": "ignore"}"#).codes == [])
        let unknown = try edited(result) { o in var r = steps(o); r.append(.object(["identifier": .string("bonus"), "results": .array([])])); o["results"] = .array(r) }
        #expect(try verify(task, unknown).codes == ["unknownIdentifier"])
    }

    /// A task with a calculation and an item its rules hide.
    let scored = #"""
    {"identifier": "scored", "steps": [
      {"type": "form", "identifier": "f", "formItems": [
        {"identifier": "a", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 10}},
        {"identifier": "why", "optional": true, "visibleWhen": {"result": {"step": "f", "item": "a"}, "minimum": 5}, "answerFormat": {"type": "text"}}]}],
     "calculations": {"double": {"*": [{"answer": {"step": "f", "item": "a"}}, 2]}}}
    """#

    @Test func aLyingCalculationAndAnAnswerOnAHiddenItemAreReported() throws {
        let task = try compile(scored)
        let result = try walk(task, #"{"f": {"a": 7, "why": "because"}}"#)
        #expect(try verify(task, result).codes == [])
        let lying = try edited(result) { o in o["calculations"] = .object(["double": .int(99)]) }
        let lie = try verify(task, lying)
        #expect(lie.codes == ["calculationMismatch"])
        #expect(lie.paths == ["calculations.double"])
        #expect(lie.report["result"]?.objectValue?["calculations"]?.objectValue?["double"]?.numericValue == 14)
        // "why" is shown only when a ≥ 5: with a = 2 its answer is not the participant's.
        let low = try walk(task, #"{"f": {"a": 2}}"#)
        let hidden = try edited(low) { o in
            var r = steps(o)
            guard case .object(var s) = r[0], var qs = s["results"]?.arrayValue else { return }
            qs.append(.object(["identifier": .string("why"), "type": .string("text"), "answer": .string("sneaked in")]))
            s["results"] = .array(qs)
            r[0] = .object(s)
            o["results"] = .array(r)
        }
        let h = try verify(task, hidden)
        #expect(h.codes == ["disabledItem"])
        #expect(h.paths == ["results[0].results[1].answer"])
    }

    /// A QuestionnaireResponse "in-progress" does not claim its required answers; "completed" does.
    @Test func aResponseInProgressMayLackRequiredAnswers() throws {
        let q = try json(#"{"resourceType": "Questionnaire", "url": "http://example.org/q", "status": "draft", "item": [{"linkId": "age", "type": "integer", "text": "Age", "required": true}]}"#)
        let task = try FHIRImporter.compile(q, options: FHIRImportOptions()).task
        let inProgress = try json(#"{"resourceType": "QuestionnaireResponse", "questionnaire": "http://example.org/q", "status": "in-progress"}"#)
        #expect(try verify(task, inProgress).codes == [])
        let completed = try json(#"{"resourceType": "QuestionnaireResponse", "questionnaire": "http://example.org/q", "status": "completed"}"#)
        #expect(try verify(task, completed).codes == ["requiredAnswerMissing"])
        #expect(try verify(task, completed, #"{"allowIncomplete": true}"#).codes == [])
    }

    // MARK: Repeating blocks

    /// `value` with the member at `path` (keys, and digits for indices) set to `new` (nil: removed).
    func setting(_ value: JSON, _ path: ArraySlice<String>, _ new: JSON?) -> JSON {
        guard let head = path.first else { return new ?? .null }
        switch value {
        case .object(var o):
            let changed = new == nil && path.count == 1 ? nil : setting(o[head] ?? .null, path.dropFirst(), new)
            o[head] = changed
            return .object(o)
        case .array(var a):
            guard let i = Int(head), a.indices.contains(i) else { return value }
            a[i] = setting(a[i], path.dropFirst(), new)
            return .array(a)
        default:
            return value
        }
    }

    func setting(_ value: JSON, _ path: String, _ new: JSON?) -> JSON {
        setting(value, path.replacing("[", with: ".").replacing("]", with: "").split(separator: ".").map(String.init)[...], new)
    }

    /// RepeatingTests' medications list walked with three medications (two from the count,
    /// one added) and two allergies: results [howMany, list{pharmacy, medication}, allergies, done].
    func walkedMedications() throws -> (Task, JSON) {
        let task = try compile(medications)
        let clock = ManualClock(1_767_225_600_000)
        var s = Session(task: task, options: SessionOptions(), clock: clock.clock)
        try s.setAnswer(try json("2"))
        try s.goForward()
        clock.now += 60_000
        try s.addInstance("medication")
        try s.setAnswer(try json(#"{"pharmacy": "Corner", "medication": [{"name": "Aspirin", "dose": 100}, {"name": "Metformin"}, {"name": "Ibuprofen", "dose": 400}]}"#))
        try s.goForward()
        clock.now += 60_000
        try s.setAnswer(try json(#"["nuts", "pollen"]"#))
        try s.goForward()
        try s.goForward()
        #expect(s.finishReason == .completed)
        return (task, s.resultJSON())
    }

    @Test func aResultWithRepeatingBlocksVerifiesCleanAndItsEditsDoNot() throws {
        let (task, result) = try walkedMedications()
        let block = "results[1].results[1]"
        #expect(setting(result, block + ".instances[2].results[0].answer", nil) != result, "the helper edits what it names")
        let clean = try verify(task, result)
        #expect(clean.codes == [])
        #expect(clean.report["result"]?.sameValue(as: result) == true)

        // An instance's answer the item refuses: reported where it is, the rest of the block kept.
        let refused = try verify(task, setting(result, block + ".instances[1].results[1].answer", .int(-5)))
        #expect(refused.codes == ["answerRefused"])
        #expect(refused.paths == [block + ".instances[1].results[1].answer"])
        let own = refused.report["result"] ?? .null
        #expect(setting(own, "results[1].results[1].instances[1].results[1].answer", .int(-5)).sameValue(as: setting(result, block + ".instances[1].results[1].answer", .int(-5))))

        // A required answer missing in one instance: reported in that instance.
        let missing = try verify(task, setting(result, block + ".instances[1].results[0].answer", .null))
        #expect(missing.codes == ["requiredAnswerMissing"])
        #expect(missing.paths == [block + ".instances[1].results[0].answer"])

        // Instances past maxCount (4): each reported, the ones within it replayed.
        var instances = try #require(result.objectValue?["results"]?.arrayValue?[1].objectValue?["results"]?.arrayValue?[1].objectValue?["instances"]?.arrayValue)
        instances += [instances[0], instances[1]]
        let tooMany = try verify(task, setting(result, block + ".instances", .array(instances)))
        #expect(tooMany.codes == ["answerRefused"])
        #expect(tooMany.paths == [block + ".instances[4]"])
        #expect(tooMany.report["divergences"]?.arrayValue?.first?.objectValue?["reason"] == .string("tooManyInstances"))
        let kept = tooMany.report["result"]?.objectValue?["results"]?.arrayValue?[1].objectValue?["results"]?.arrayValue?[1].objectValue?["instances"]?.arrayValue
        #expect(kept?.count == 4)

        // A repeating question: an answer past its maxCount (3), and one of the wrong type.
        var allergies = try #require(result.objectValue?["results"]?.arrayValue?[2].objectValue?["results"]?.arrayValue?[0].objectValue?["instances"]?.arrayValue)
        allergies += [allergies[0], allergies[1]]
        let fourth = try verify(task, setting(result, "results[2].results[0].instances", .array(allergies)))
        #expect(fourth.codes == ["answerRefused"])
        #expect(fourth.paths == ["results[2].results[0].instances[3].answer"])
        let wrong = try verify(task, setting(result, "results[2].results[0].instances[1].answer", .int(7)))
        #expect(wrong.codes == ["wrongType"])
        #expect(wrong.paths == ["results[2].results[0].instances[1].answer"])

        // The block's shape: an item the group does not have, a member it does not have.
        let unknown = try verify(task, setting(result, block + ".instances[0].results[0].identifier", .string("colour")))
        #expect(unknown.codes.first == "unknownIdentifier")
        #expect(unknown.paths.first == block + ".instances[0].results[0].identifier")
        let extra = try verify(task, setting(result, block + ".instances[0].note", .string("x")))
        #expect(extra.codes == ["unknownField"])
        #expect(extra.paths == [block + ".instances[0].note"])
    }

    /// A QuestionnaireResponse with a repeating group (one item per repetition) and a repeating
    /// question (its answers repeated) verifies; an edited repetition does not.
    @Test func aResponseWithRepetitionsVerifiesAndItsEditsDoNot() throws {
        let q = try json(#"""
            {"resourceType": "Questionnaire", "url": "http://example.org/kids", "status": "draft", "item": [
              {"linkId": "child", "type": "group", "text": "Child", "repeats": true, "required": true,
               "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/questionnaire-maxOccurs", "valueInteger": 3}],
               "item": [{"linkId": "name", "type": "string", "text": "Name", "required": true},
                        {"linkId": "age", "type": "integer", "text": "Age"}]},
              {"linkId": "phone", "type": "string", "text": "Phone", "repeats": true}]}
            """#)
        let task = try FHIRImporter.compile(q, options: FHIRImportOptions()).task
        let response = try json(#"""
            {"resourceType": "QuestionnaireResponse", "questionnaire": "http://example.org/kids", "status": "completed", "item": [
              {"linkId": "child", "text": "Child", "item": [{"linkId": "name", "text": "Name", "answer": [{"valueString": "Ann"}]},
                                                            {"linkId": "age", "text": "Age", "answer": [{"valueInteger": 7}]}]},
              {"linkId": "child", "text": "Child", "item": [{"linkId": "name", "text": "Name", "answer": [{"valueString": "Bo"}]}]},
              {"linkId": "phone", "text": "Phone", "answer": [{"valueString": "555-1"}, {"valueString": "555-2"}]}]}
            """#)
        let clean = try verify(task, response)
        #expect(clean.codes == [])
        #expect(clean.report["questionnaireResponse"]?.objectValue?["item"]?.sameValue(as: response.objectValue?["item"] ?? .null) == true)
        let wrong = try verify(task, setting(response, "item[1].item[0].answer[0]", try json(#"{"valueInteger": 3}"#)))
        #expect(wrong.codes.first == "wrongType")
        #expect(wrong.paths.first == "item[1].item[0].answer")
        var items = try #require(response.objectValue?["item"]?.arrayValue)
        items.insert(contentsOf: [items[0], items[1]], at: 2)
        let tooMany = try verify(task, setting(response, "item", .array(items)))
        #expect(tooMany.codes == ["answerRefused"])
        #expect(tooMany.paths == ["item[3]"])
        let missing = try verify(task, setting(response, "item[1].item", .array([])))
        #expect(missing.codes == ["requiredAnswerMissing"])
        #expect(missing.paths == ["item[1]"])
        // A great many repetitions: read in one pass, each past maxCount reported up to the
        // report's limit.
        let flood = try verify(task, setting(response, "item", .array([JSON](repeating: items[0], count: 20_000))))
        #expect(flood.codes.count == Divergences.limit && flood.report["truncated"] == .bool(true))
        #expect(flood.paths.first == "item[3]" && Set(flood.codes) == ["answerRefused"])
    }

    @Test func badSubmissionsAreErrorsThatChangeNothing() throws {
        let task = try headache()
        #expect(throws: StepKitError.self) { try Verification.verify(.array([]), task: task, options: VerifyOptions()) }
        #expect(throws: StepKitError.self) { try VerifyOptions.parse(json(#"{"ignore": ["everything"]}"#)) }
        #expect(throws: StepKitError.self) { try VerifyOptions.parse(json(#"{"strict": true}"#)) }
    }
}
