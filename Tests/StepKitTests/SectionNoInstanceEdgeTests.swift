import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A repeating section whose `count` comes out as 0 (`minCount` 0) has no instance, and
/// navigation passes over it (docs/task-format.md, "Repeating sections": `{"skipped": S, "by":
/// "noInstances"}`). The rule graph must hold that move as it holds a skip rule's, or progress
/// and the checker reason about moves the session never makes (issue 31).
@Suite struct SectionNoInstanceEdgeTests {
    /// howMany (0 to 5), section "person" (name, age; minCount 0, count howMany), alone, done.
    static let task = #"""
    {"identifier": "nobody", "steps": [
      {"type": "question", "identifier": "howMany", "question": "How many others live with you?",
       "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 5}},
      {"type": "section", "identifier": "person", "repeat": {"minCount": 0, "maxCount": 5, "count": {"answer": "howMany"}},
       "steps": [
        {"type": "question", "identifier": "name", "question": "Name", "answerFormat": {"type": "text"}},
        {"type": "question", "identifier": "age", "question": "Age", "answerFormat": {"type": "numeric", "style": "integer"}}]},
      {"type": "instruction", "identifier": "alone", "title": "Thank you"},
      {"type": "completion", "identifier": "done"}]}
    """#

    @Test func theGraphListsTheMovePastASectionWithNoInstance() throws {
        let task = try compile(Self.task)
        let edges = (task.routing.json.arrayValue ?? []).compactMap(\.objectValue)
        let passOver = edges.filter { $0["passedOver"] != nil }
        // As a skip rule's pass-over: leaving the section's first step, where navigation enters
        // it, to where leaving the section leads (the step after it), with why and its bounds.
        #expect(passOver.map(JSON.object) == [try json(#"""
            {"from": "name", "to": "alone", "kind": "next", "passedOver": "person", "by": "noInstances",
             "minCount": 0, "maxCount": 5, "count": {"answer": "howMany"}}
            """#)])
        // Its loop is still listed, and the move through the section too.
        #expect(edges.contains { $0["kind"] == .string("nextInstance") && $0["from"] == .string("age") })
        #expect(edges.contains { $0["from"] == .string("age") && $0["to"] == .string("alone") && $0["kind"] == .string("next") })
    }

    @Test func aSectionThatAlwaysHasAnInstanceHasNoSuchMove() throws {
        // minCount 1: never without an instance, so never passed over for want of one.
        let text = Self.task.replacing(#""minCount": 0"#, with: #""minCount": 1"#)
        let task = try compile(text)
        #expect(!(task.routing.json.arrayValue ?? []).contains { $0.objectValue?["passedOver"] != nil })
        let name = try #require(task.stepIndex["name"])
        #expect(!task.routing.skippable(name))
    }

    @Test func theNavigatorsMoveIsAnEdgeAndProgressCountsIt() throws {
        var s = try session(Self.task)
        // From howMany: the fewest still to come pass the section over (alone, done: 2); the
        // most go through one instance of it (name, age, alone, done: 4).
        #expect(s.state["progress"]?.objectValue?["fewestRemaining"] == .int(2))
        #expect(s.state["progress"]?.objectValue?["mostRemaining"] == .int(4))
        try s.setAnswer(.int(0))
        // What the participant will see: alone and done.
        #expect(s.state["progress"]?.objectValue?["total"] == .int(3))
        try s.goForward()
        #expect(s.stepID == "alone")
        let arrival = s.state["navigation"]?.objectValue?["arrival"]?.arrayValue ?? []
        #expect(arrival.contains(try json(#"{"skipped": "person", "by": "noInstances"}"#)), "\(arrival)")
        // The move the navigator made (howMany, then past "person" to alone) is in the graph:
        // entering the section leads on, passed over, to "alone".
        let task = s.task
        let name = try #require(task.stepIndex["name"]), alone = try #require(task.stepIndex["alone"])
        let howMany = try #require(task.stepIndex["howMany"])
        #expect(task.graph.successors[howMany] == [name])
        #expect(task.graph.successors[name].contains(alone))
        // The checker's reachability agrees: "alone" is reached from howMany without "age", and
        // the section's steps may be passed over (the checker never takes their answers as
        // given: `mustBeAnswered`), as the graph's fewest steps do.
        let graph = CheckerGraph(task: task)
        let seen = graph.reach(from: [howMany], over: graph.successors, stoppingAt: { $0 == task.stepIndex["age"] })
        #expect(seen[alone])
        let age = try #require(task.stepIndex["age"])
        #expect(graph.skippable(name) && graph.skippable(age))
    }
}
