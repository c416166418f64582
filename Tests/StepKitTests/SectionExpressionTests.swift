import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Expressions over repeating sections of steps (docs/expressions.md, "Repeating blocks: scope"),
/// on the householdExample example (`examples/tasks/household.json`: a section `person` asked once per
/// member, its count the answer to `howMany`). Every expected value is worked out by hand from
/// the answers the test gives.
private let householdExample = readFile(repositoryRoot + "examples/tasks/household.json") ?? ""

private func open(_ text: String = householdExample) throws -> Session {
    Session(task: try compile(text), options: SessionOptions(taskRunUUID: "0A2B3C4D-1111-4222-8333-444455556688"), clock: ManualClock(1_000).clock)
}

private func calc(_ s: Session, _ name: String) -> JSON? { s.calculationsJSON().objectValue?[name] }
private func stepID(_ s: Session) -> String? { s.currentStep?.identifier }

private func answer(_ s: inout Session, _ text: String) throws {
    try s.setAnswer(try json(text))
    try s.goForward()
}

/// One member: name, age, relation, and whether they go to school when the skip rule (age 18 or
/// more) does not pass over that step.
private func member(_ s: inout Session, _ name: String, _ age: Int, _ relation: String, school: Bool? = nil) throws {
    try answer(&s, "\"\(name)\"")
    try answer(&s, String(age))
    try answer(&s, "[\"\(relation)\"]")
    if let school {
        #expect(stepID(s) == "school")
        try answer(&s, school ? "true" : "false")
    }
}

/// The householdExample example with calculations `calculations` added.
private func variant(_ calculations: String) -> String {
    householdExample.replacing(#""calculations": {"#, with: #""calculations": {"# + calculations + ", ")
}

private func codes(_ text: String) -> [String] {
    // (A calculation refused leaves the pipes naming it unknown too.)
    problems(text).map(\.code).filter { $0 != "unknownPlaceholder" && $0 != "unknownCalculation" }
}

@Suite struct SectionExpressionTests {
    /// The householdExample walked: each aggregate over the section, after each member.
    @Test func aggregatesAndIndexedReadsOverASection() throws {
        #expect(problems(householdExample).isEmpty)
        var s = try open()
        // Before the section is reached it has no instance.
        #expect(calc(s, "people") == .int(0) && calc(s, "oldest") == .null && calc(s, "respondent") == .null)
        try s.goForward()
        try answer(&s, "4")
        // In the first instance: four instances (the count), none answered.
        #expect(stepID(s) == "name")
        #expect(calc(s, "people") == .int(4) && calc(s, "children") == .int(0) && calc(s, "adults") == .int(0))
        try s.setAnswer(try json(#""Maria""#))
        // The live answer of the current step is read in its instance.
        #expect(calc(s, "respondent") == .string("Maria"))
        try s.goForward()
        try answer(&s, "41")
        try answer(&s, #"["self"]"#)
        // 41: the skip rule passes over "school" in this instance, so the next is the second member.
        #expect(stepID(s) == "name")
        #expect(calc(s, "adults") == .int(1) && calc(s, "oldest") == .int(41))
        try member(&s, "Jon", 43, "partner")
        try member(&s, "Lea", 9, "child", school: true)
        try member(&s, "Tom", 16, "child", school: false)
        #expect(stepID(s) == "summary")
        // 41, 43, 9, 16: two under 18, two adults, one at school, the oldest 43.
        let shown = s.stateJSON().objectValue?["step"]?.objectValue
        #expect(shown?["calculations"] == (try json(#"{"people": 4, "children": 2, "adults": 2, "inSchool": 1, "oldest": 43}"#)))
        #expect(shown?["text"] == .string("4 people live here: 2 under 18 and 2 adults. 1 go to school or nursery; the oldest is 43."))
        try s.goForward()
        #expect(s.stateJSON().objectValue?["step"]?.objectValue?["text"] == .string("Thank you, Maria."))
        try s.goForward()
        #expect(s.resultJSON().objectValue?["calculations"] == (try json(
            #"{"people": 4, "children": 2, "adults": 2, "inSchool": 1, "oldest": 43, "respondent": "Maria"}"#)))
    }

    /// Inside an instance a read means that instance: the skip rule of "school" reads the age of
    /// the member being asked about (the trap of Android FHIR SDK #726: never the first one's).
    /// The last member (index -1) and a member by index read the instance named.
    @Test func readsInsideAnInstanceAndAtAnIndex() throws {
        let text = variant(#""last": {"answer": {"section": "person", "step": "name", "index": -1}}, "second": {"answer": {"section": "person", "step": "age", "index": 1}}"#)
        #expect(problems(text).isEmpty)
        var s = try open(text)
        try s.goForward()
        try answer(&s, "3")
        try member(&s, "Ada", 12, "child", school: true)
        // The second and last members are not answered yet: null.
        #expect(calc(s, "second") == .null && calc(s, "last") == .null)
        try member(&s, "Bo", 70, "parent")
        #expect(calc(s, "second") == .int(70))
        try member(&s, "Cy", 5, "child", school: false)
        #expect(calc(s, "last") == .string("Cy") && calc(s, "children") == .int(2))
    }

    /// An instance's answers are read once its visits are on the path: going back to an earlier
    /// instance leaves the later ones unread until navigation walks them again (as going back
    /// leaves any step's answer unread), and an answer changed there is read at once.
    @Test func goingBackIntoAnInstance() throws {
        var s = try open()
        try s.goForward()
        try answer(&s, "3")
        try member(&s, "Maria", 41, "self")
        try member(&s, "Lea", 9, "child", school: true)
        try answer(&s, #""Tom""#)
        #expect(calc(s, "children") == .int(1) && calc(s, "people") == .int(3))
        try s.enterInstance("person", at: 1)
        #expect(stepID(s) == "name" && calc(s, "respondent") == .string("Maria"))
        try s.goForward()
        try s.setAnswer(try json("19"))
        // Lea is 19 now (the live answer); Tom's name is off the path, no age read for him.
        #expect(calc(s, "children") == .int(0) && calc(s, "adults") == .int(2) && calc(s, "people") == .int(3))
        try s.goForward()
        try answer(&s, #"["child"]"#)
        // 19: "school" passed over in her instance; Tom's instance again, his name kept.
        #expect(stepID(s) == "name" && s.stateJSON().objectValue?["answer"] == .string("Tom"))
    }

    /// A per-instance calculation over a section: one value per member, read in an aggregate.
    @Test func perInstanceCalculations() throws {
        let text = variant(#""minor": {"forEach": {"section": "person"}, "value": {"<": [{"answer": "age"}, 18]}}, "minors": {"count": {"over": {"section": "person"}, "where": {"calc": "minor"}}}, "grown": {"-": [{"calc": "people"}, {"calc": "minors"}]}"#)
        #expect(problems(text).isEmpty)
        var s = try open(text)
        try s.goForward()
        try answer(&s, "2")
        try member(&s, "Ann", 30, "self")
        try member(&s, "Ben", 3, "child", school: true)
        #expect(calc(s, "minor") == (try json("[false, true]")) && calc(s, "minors") == .int(1) && calc(s, "grown") == .int(1))
    }

    /// What the scope refuses when the task compiles: a read of a section's step where no
    /// instance of it is meant, and the ways to name a section wrongly.
    @Test func scopeRefusals() throws {
        let age = #"{"answer": "age"}"#
        // From a calculation (outside every instance), a navigation rule of a step after the
        // section, the section's own skip rule (it runs before the section is entered) and its count.
        #expect(codes(variant(#""bad": \#(age)"#)) == ["outsideInstance"])
        let summaryRule = householdExample.replacing(#""skipRules": {"#, with: #""navigationRules": {"summary": {"type": "predicate", "branches": [{"when": {"result": "age", "minimum": 18}, "destination": "done"}]}}, "skipRules": {"#)
        #expect(codes(summaryRule) == ["outsideInstance"])
        let sectionSkip = householdExample.replacing(#""skipRules": {"#, with: #""skipRules": {"person": {"result": "name", "answered": true}, "#)
        #expect(codes(sectionSkip) == ["outsideInstance"])
        let selfCount = householdExample.replacing(#""count": {"answer": "howMany"}"#, with: #""count": {"answer": "age"}"#)
        #expect(codes(selfCount) == ["outsideInstance"])
        // A count that reads the section's instances would depend on itself.
        let countsItself = householdExample.replacing(#""count": {"answer": "howMany"}"#, with: #""count": {"count": {"over": {"section": "person"}}}"#)
        #expect(codes(countsItself) == ["countReadsInstances"])
        // Inside an aggregate over another block: a second section of pets.
        let summaryStep = "    {\n      \"type\": \"instruction\",\n      \"identifier\": \"summary\","
        let pets = householdExample.replacing(summaryStep, with: #"""
            {"type": "section", "identifier": "pet", "repeat": {"minCount": 1, "maxCount": 5}, "steps": [
              {"type": "question", "identifier": "species", "question": "Which animal?", "answerFormat": {"type": "text"}}]},
            {"type": "section", "identifier": "plain", "steps": [{"type": "instruction", "identifier": "note", "text": "Note"}]},
            """# + "\n" + summaryStep)
        #expect(problems(pets).isEmpty)
        let petsCalc = { (c: String) in pets.replacing(#""calculations": {"#, with: #""calculations": {"# + c + ", ") }
        #expect(codes(petsCalc(#""bad": {"count": {"over": {"section": "pet"}, "where": {"<": [\#(age), 18]}}}"#)) == ["otherInstance"])
        // Both in scope: fine (a pet per person, say).
        #expect(codes(petsCalc(#""ok": {"count": {"over": {"section": "pet"}, "where": {"any": {"over": {"section": "person"}, "of": {"<": [\#(age), 18]}}}}}"#)).isEmpty)
        // Naming a section wrongly.
        #expect(codes(petsCalc(#""bad": {"count": {"over": {"section": "nope"}}}"#)) == ["unknownBlock"])
        #expect(codes(petsCalc(#""bad": {"count": {"over": {"section": "plain"}}}"#)) == ["notABlock"])
        #expect(codes(petsCalc(#""bad": {"count": {"over": {"section": "person", "step": "age"}}}"#)) == ["unknownKey"])
        #expect(codes(petsCalc(#""bad": {"answer": {"section": "person", "step": "howMany", "index": 0}}"#)) == ["unknownStep"])
        #expect(codes(petsCalc(#""bad": {"answer": {"section": "person", "step": "age", "index": 1000}}"#)) == ["outOfRange"])
        #expect(codes(petsCalc(#""bad": {"answer": {"section": "person", "step": "age", "item": "x", "index": 0}}"#)) == ["unknownItem"])
        #expect(codes(petsCalc(#""bad": {"answer": {"section": "person", "index": 0}}"#)) == ["missingKey"])
        #expect(codes(petsCalc(#""bad": {"sum": {"over": {"section": "person"}, "of": {"answer": "name"}}}"#)) == ["wrongType"])
        // Cost: nested aggregates over two sections of up to 1,000 instances each.
        let wide = pets.replacing(#""minCount": 1, "maxCount": 12,"#, with: #""minCount": 1,"#)
            .replacing(#""minCount": 1, "maxCount": 5}"#, with: #""minCount": 1}"#)
            .replacing(#""calculations": {"#, with: #""calculations": {"nested": {"sum": {"over": {"section": "pet"}, "of": {"count": {"over": {"section": "person"}, "where": {"answered": "name"}}}}}, "#)
        #expect(codes(wide) == ["expressionTooCostly"])
    }

    /// The checker's findings apply to sections: none on the example; an index past `maxCount`,
    /// an aggregate reading nothing of the instance, and a section no path reaches.
    @Test func checkerFindings() throws {
        let found = try findings(householdExample)
        #expect(found.isEmpty, "\(found.map(\.description))")
        let watched = ["aggregateOverNothing", "indexNeverExists", "aggregateIgnoresInstance"]
        func warned(_ text: String) throws -> [String] { try findings(text).filter { watched.contains($0.code) }.map(\.description) }
        let indexed = householdExample.replacing(#""calculations": {"#, with: #""calculations": {"thirteenth": {"answer": {"section": "person", "step": "age", "index": 12}}, "twelfth": {"answer": {"section": "person", "step": "age", "index": 11}}, "#)
        #expect(try warned(indexed) == ["warning indexNeverExists @ calculations.thirteenth"])
        let ignoring = householdExample.replacing(#""calculations": {"#, with: #""calculations": {"big": {"count": {"over": {"section": "person"}, "where": {">": [{"answer": "howMany"}, 2]}}}, "#)
        #expect(try warned(ignoring) == ["warning aggregateIgnoresInstance @ calculations.big"])
        let never = householdExample.replacing(#""skipRules": {"#, with: #""navigationRules": {"howMany": {"type": "direct", "destination": "summary"}}, "skipRules": {"#)
        let over = try warned(never)
        // people, children, adults, inSchool, oldest: five aggregates over a section never entered.
        #expect(over.count == 5 && over.contains("warning aggregateOverNothing @ calculations.children"), "\(over)")
    }

    /// The rule graph lists the section's loop (its last step back to its first, with the
    /// bounds) after that step's own move; the checker and progress do not follow it: a rule of
    /// "name" reading "age" still reads a step not answered yet in a new instance, and progress
    /// stays bounded.
    @Test func theRuleGraphHasTheLoop() throws {
        let task = try compile(householdExample)
        let edges = task.routing.json.arrayValue ?? []
        let leaving = edges.filter { $0.objectValue?["from"] == .string("school") }
        #expect(leaving == [
            try json(#"{"from": "school", "to": "summary", "kind": "next"}"#),
            try json(#"{"from": "school", "to": "name", "kind": "nextInstance", "section": "person", "minCount": 1, "maxCount": 12}"#),
        ])
        #expect(edges.filter { $0.objectValue?["kind"] == .string("nextInstance") }.count == 1)
        let early = householdExample.replacing(#""skipRules": {"#, with: #""skipRules": {"name": {"result": "age", "minimum": 18}, "#)
        let earlyFound = try findings(early).map(\.description)
        #expect(earlyFound.contains("warning readsUnansweredStep @ skipRules.name"), "\(earlyFound)")
        let s = try open()
        #expect(s.stateJSON().objectValue?["progress"]?.objectValue?["mostRemaining"]?.numericValue != nil)
    }

    /// A review step after the section, and its edit into the instance named (the engine's
    /// `editFromReview(_:instance:)`): the second member's age changed,
    /// forward goes straight back to the review over the steps it left (each instance's answers
    /// kept), and the result nests the new answer in that instance alone.
    @Test func reviewEditsAnAnswerOfOneInstance() throws {
        let summaryStep = "    {\n      \"type\": \"instruction\",\n      \"identifier\": \"summary\","
        let text = householdExample.replacing(summaryStep, with: #"{"type": "review", "identifier": "check"},"# + "\n" + summaryStep)
        #expect(problems(text).isEmpty)
        var s = try open(text)
        try s.goForward()
        try answer(&s, "3")
        try member(&s, "Maria", 41, "self")
        try member(&s, "Lea", 9, "child", school: true)
        try member(&s, "Tom", 16, "child", school: false)
        #expect(stepID(s) == "check")
        // The review lists each instance's steps (the first member's school passed over: an adult).
        let entries = s.stateJSON().objectValue?["review"]?.objectValue?["steps"]?.arrayValue ?? []
        #expect(entries.compactMap { $0.objectValue?["step"]?.stringValue }
                == ["howMany", "name", "age", "relation", "name", "age", "relation", "school", "name", "age", "relation", "school"])
        let p1 = "Person 1: Maria", p2 = "Person 2: Lea", p3 = "Person 3: Tom"
        #expect(entries.map { $0.objectValue?["instanceTitle"]?.stringValue ?? "-" } == ["-", p1, p1, p1, p2, p2, p2, p2, p3, p3, p3, p3])
        #expect(entries.map { $0.objectValue?["instance"]?.numericValue ?? -1 } == [-1, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
        try s.editFromReview("age", instance: 1)
        #expect(stepID(s) == "age" && s.stateJSON().objectValue?["answer"] == .int(9))
        // An edit going on restores as it is.
        let saved = try Restoration.saveText(s)
        let restored = try saved.withCString { try Restoration.restore($0, task: s.task, options: SessionOptions(), clock: ManualClock(1_000).clock) }
        #expect(restored.stateJSON() == s.stateJSON())
        #expect(s.stateJSON().objectValue?["instances"]?.objectValue?["person"]?.objectValue?["current"] == .int(1))
        try s.setAnswer(try json("19"))
        try s.goForward()
        // Straight back: Lea's relation, then (19: school passed over) Tom's steps, all answered.
        #expect(stepID(s) == "check")
        try s.goForward()
        #expect(calc(s, "children") == .int(1) && calc(s, "adults") == .int(2))
        try s.goForward()
        try s.goForward()
        let person = s.resultJSON().objectValue?["results"]?.arrayValue?.first { $0.objectValue?["identifier"] == .string("person") }
        let instances = person?.objectValue?["instances"]?.arrayValue ?? []
        let answered = instances.map { i in
            (i.objectValue?["results"]?.arrayValue ?? []).map { r in
                r.objectValue?["identifier"]?.stringValue.map { $0 + "=" + JSONWriter.string(r.objectValue?["results"]?.arrayValue?.first?.objectValue?["answer"] ?? .null) } ?? ""
            }
        }
        #expect(answered == [["name=\"Maria\"", "age=41", "relation=[\"self\"]"],
                             ["name=\"Lea\"", "age=19", "relation=[\"child\"]"],
                             ["name=\"Tom\"", "age=16", "relation=[\"child\"]", "school=false"]], "\(answered)")
        // An instance the review does not list is refused, changing nothing.
        var t = try open(text)
        try t.goForward()
        try answer(&t, "1")
        try member(&t, "Maria", 41, "self")
        let before = t.stateJSON()
        #expect(throws: StepKitError.self) { try t.editFromReview("age", instance: 3) }
        #expect(t.stateJSON() == before)
    }

    /// Saved and restored mid-walk, the values are the same (derived from the path's answers).
    @Test func restoredSessionsReadTheSameValues() throws {
        var s = try open()
        try s.goForward()
        try answer(&s, "2")
        try member(&s, "Maria", 41, "self")
        try answer(&s, #""Lea""#)
        try s.setAnswer(try json("9"))
        let text = try Restoration.saveText(s)
        let restored = try text.withCString { pointer in
            try Restoration.restore(pointer, task: s.task, options: SessionOptions(), clock: .system)
        }
        #expect(calc(s, "children") == .int(1) && calc(s, "adults") == .int(1) && calc(s, "oldest") == .int(41))
        #expect(restored.calculationsJSON() == s.calculationsJSON())
    }
}
