import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A section passed over by its skip rule leaves by its own rule (else to the step after it),
/// not by its last step's rule: the rule graph must hold that move, or progress and the checker
/// reason about moves the session never makes (and miss the one it makes).
@Suite struct PassOverTests {
    /// a, section "extra" (s1, s2), b, c, d, done; "extra" is skipped when a is false, and ends
    /// with a step whose rule ends the task; passed over, the section leads to "b". The
    /// binding's graph test reads the same file (bindings/python/tests/test_graph.py).
    static let task = readFile(repositoryRoot + "Tests/fixtures/pass-over.json") ?? ""

    @Test func progressBoundsHoldWhenASectionIsPassedOver() throws {
        var s = try session(PassOverTests.task)
        let progress = s.state["progress"]?.objectValue
        // After "a": shown, s1, s2, done (3); passed over, b, c, d, done (4). The most counts
        // the passed-over section's first step too (an upper bound): 5.
        #expect(progress?["mostRemaining"] == .int(5))
        #expect(progress?["fewestRemaining"] == .int(1))
        try s.setAnswer(.bool(false))
        try s.goForward()
        #expect(s.stepID == "b")
        // From "b" on: c, d, done.
        #expect(s.state["progress"]?.objectValue?["mostRemaining"] == .int(3))
    }

    @Test func theGraphHoldsThePassOverMove() throws {
        let task = try compile(PassOverTests.task)
        let edges = task.routing.json.arrayValue ?? []
        let passOver = edges.compactMap(\.objectValue).filter { $0["passedOver"] != nil }
        #expect(passOver.count == 1)
        #expect(passOver.first?["from"] == .string("s1"))
        #expect(passOver.first?["to"] == .string("b"))
        #expect(passOver.first?["passedOver"] == .string("extra"))
        #expect(passOver.first?["kind"] == .string("next"))
        // Every step is reachable: "b" and "c" only through the pass-over.
        let b = try #require(task.stepIndex["b"]), s1 = try #require(task.stepIndex["s1"])
        #expect(task.graph.successors[s1].contains(b))
    }
}
