import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A section that shuffles its steps (one pinned), between two steps; its rule ends the block by
/// going to `done` (so `after` is shown only by a jump).
let shuffledSectionTask = """
{"identifier": "blocks", "steps": [
  {"type": "instruction", "identifier": "intro"},
  {"type": "section", "identifier": "block", "shuffleSteps": true, "steps": [
     {"type": "question", "identifier": "q1", "answerFormat": {"type": "boolean"}},
     {"type": "question", "identifier": "q2", "answerFormat": {"type": "boolean"}},
     {"type": "instruction", "identifier": "pause", "pinned": true},
     {"type": "question", "identifier": "q3", "answerFormat": {"type": "boolean"}},
     {"type": "question", "identifier": "q4", "answerFormat": {"type": "boolean"}}]},
  {"type": "instruction", "identifier": "after"},
  {"type": "completion", "identifier": "done"}],
 "navigationRules": {"block": {"type": "direct", "destination": "done"}}}
"""

@Suite struct ShuffledStepsTests {
    static let blockSteps = ["q1", "q2", "pause", "q3", "q4"]

    /// The block's order as docs/randomization.md defines it: stream `block#steps`, the pinned
    /// `pause` (third) in place.
    static func blockOrder(_ seed: UInt64) -> [String] {
        PCG32.order(count: 5, pinned: [2], seed: seed, name: "block#steps").map { blockSteps[$0] }
    }

    /// Walks forward (answering every question `true`) and lists the steps shown.
    func walk(_ s: inout Session) throws -> [String] {
        var shown: [String] = []
        while !s.isFinished, let step = s.currentStep, shown.count < 20 {
            shown.append(step.identifier)
            if step.takesAnswers { try s.setAnswer(.bool(true)) }
            try s.goForward()
        }
        return shown
    }

    @Test(arguments: [0, 1, 7, 12345, 9_007_199_254_740_991] as [UInt64])
    func theStepsAreShownInTheSeededOrderAndTheSectionRuleAppliesAfterTheLastShown(seed: UInt64) throws {
        let task = try compile(shuffledSectionTask)
        #expect(task.rules.shuffles)
        var s = openSession(task, seed: seed)
        let order = Self.blockOrder(seed)
        #expect(order[2] == "pause")
        // The section's rule (to `done`) applies when the step shown last is left, whichever it is.
        #expect(try walk(&s) == ["intro"] + order + ["done"])
        let result = s.resultJSON().objectValue?["randomization"]?.objectValue
        #expect(result?["seed"] == .int(Int64(seed)))
        #expect(result?["orders"]?.objectValue?["block"] == .object(["steps": .array(order.map { .string($0) })]))
    }

    @Test func someSeedsGiveOrdersOtherThanTheDefinitions() throws {
        let orders = Set((0..<30).map { Self.blockOrder(UInt64($0)) })
        #expect(orders.count > 1)
        #expect(orders.allSatisfy { $0[2] == "pause" && Set($0) == Set(Self.blockSteps) })
    }

    @Test func saveAndRestoreKeepTheOrderAndRestoreRefusesAnotherOne() throws {
        let task = try compile(shuffledSectionTask)
        let clock = ManualClock(1_767_225_600_000)
        var s = openSession(task, seed: 4242, clock: clock)
        try s.goForward()
        try s.setAnswer(.bool(false))
        try s.goForward()
        let text = try Restoration.saveText(s)
        var restored = try text.withCString { p in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) }
        #expect(restored.stepOrder == s.stepOrder)
        #expect(restored.stateJSON().objectValue?["step"] == s.stateJSON().objectValue?["step"])
        let order = Self.blockOrder(4242)
        #expect(try walk(&restored) == Array(order.dropFirst()) + ["done"])

        // The saved order edited (two steps swapped): not what the seed gives.
        var document = try Restoration.contents(s)
        var randomization = try #require(document["randomization"]?.objectValue)
        var orders = try #require(randomization["orders"]?.objectValue)
        #expect(orders["block"] == .object(["steps": .array(order.map { .string($0) })]))
        var edited = order
        edited.swapAt(0, 1)
        orders["block"] = .object(["steps": .array(edited.map { .string($0) })])
        randomization["orders"] = .object(orders)
        document["randomization"] = .object(randomization)
        let (algorithm, digest) = try Restoration.sign(JSONWriter.string(.object(document)), key: nil)
        document["integrity"] = .object(["algorithm": .string(algorithm), "digest": .string(digest)])
        let refused = JSONWriter.string(.object(document)).withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) }
        }
        guard case .failure(let error) = refused else { Issue.record("restored an order the seed does not give"); return }
        #expect(error.status == .restore)
        #expect(error.problems.first?.code == "orderMismatch")
        #expect(error.problems.first?.path.description == "randomization.orders.block")
    }

    /// A rule naming a step inside the shuffled section goes to that step; the steps after it
    /// in the run's order follow, and the section's rule applies after the last one.
    @Test func aDestinationNamingAStepInsideGoesThereAndContinuesInTheRunsOrder() throws {
        let text = shuffledSectionTask.replacing(#""navigationRules": {"#, with: #""navigationRules": {"intro": {"type": "direct", "destination": "q3"}, "#)
        let task = try compile(text)
        // The checker says what that means, at the destination.
        #expect(try findings(text).contains(Finding(severity: "warning", code: "destinationInShuffledSection", path: "navigationRules.intro.destination")))
        #expect(!(try findings(shuffledSectionTask)).contains { $0.code == "destinationInShuffledSection" })
        for seed: UInt64 in [3, 11, 2024] {
            var s = openSession(task, seed: seed)
            let order = Self.blockOrder(seed)
            let from = try #require(order.firstIndex(of: "q3"))
            #expect(try walk(&s) == ["intro"] + order[from...] + ["done"])
        }
    }

    /// A section whose skip rule holds is left as a whole: from the step at its last position.
    @Test func aSkippedShuffledSectionIsLeftByItsRule() throws {
        let text = shuffledSectionTask.replacing(#""navigationRules": {"#, with: #""skipRules": {"block": {"always": true}}, "navigationRules": {"#)
        let task = try compile(text)
        var s = openSession(task, seed: 9)
        #expect(try walk(&s) == ["intro", "done"])
    }

    /// The graph lists every move some order makes: from a movable step, each other movable
    /// step and the pinned one may follow, and the section's rule applies (it may be last).
    @Test func theGraphListsTheMovesOfEveryOrder() throws {
        let task = try compile(shuffledSectionTask)
        let index = { (id: String) in task.stepIndex[id]! }
        let fromQ1 = Set(task.routing.edges(leaving: index("q1")).map(\.target))
        #expect(fromQ1 == Set(["q2", "q3", "q4", "pause", "done"].map { Optional(index($0)) }))
        let fromPause = Set(task.routing.edges(leaving: index("pause")).map(\.target))
        #expect(fromPause == Set(["q1", "q2", "q3", "q4"].map { Optional(index($0)) }))
        let fromIntro = Set(task.routing.edges(leaving: index("intro")).map(\.target))
        #expect(fromIntro == Set(["q1", "q2", "q3", "q4"].map { Optional(index($0)) }))
        // Every step is reachable, so the checker finds no unreachable step.
        #expect(!(try findings(shuffledSectionTask)).contains { $0.code == "unreachableStep" && $0.path.contains("steps[1]") })
    }

    @Test func aShuffledSectionHoldsStepsOnly() throws {
        let nested = """
        {"identifier": "n", "steps": [{"type": "section", "identifier": "outer", "shuffleSteps": true, "steps": [
          {"type": "instruction", "identifier": "a"},
          {"type": "section", "identifier": "inner", "steps": [{"type": "instruction", "identifier": "b"}]}]}]}
        """
        let found = problems(nested)
        #expect(found.map(\.code) == ["sectionInShuffledSection"])
        #expect(found.first?.path.description == "steps[0].steps[1]")
    }

    /// `shuffleSteps` and a step's `pinned` are booleans: anything else is a definition error
    /// at its place, and no task is made.
    @Test func shuffleStepsAndPinnedOfTheWrongTypeAreRefused() throws {
        let wrongShuffle = shuffledSectionTask.replacing(#""shuffleSteps": true"#, with: #""shuffleSteps": "yes""#)
        #expect(problems(wrongShuffle).map(\.path.description) == ["steps[1].shuffleSteps"])
        let wrongPinned = shuffledSectionTask.replacing(#""pinned": true"#, with: #""pinned": 1"#)
        #expect(problems(wrongPinned).map(\.path.description) == ["steps[1].steps[2].pinned"])
    }

    /// Verify replays a submitted result with its seed, and checks the orders it records.
    @Test func verifyChecksTheRecordedOrders() throws {
        let task = try compile(shuffledSectionTask)
        var s = openSession(task, seed: 777)
        _ = try walk(&s)
        let result = try #require(s.resultJSON().objectValue)
        func divergences(_ submission: JSONObject) throws -> [String] {
            let report = try Verification.verify(.object(submission), task: task, options: VerifyOptions())
            return report.objectValue?["divergences"]?.arrayValue?.compactMap { $0.objectValue?["code"]?.stringValue } ?? ["?"]
        }
        #expect(try divergences(result) == [])

        var edited = result
        var randomization = try #require(result["randomization"]?.objectValue)
        var orders = try #require(randomization["orders"]?.objectValue)
        var order = Self.blockOrder(777)
        order.swapAt(0, 4)
        orders["block"] = .object(["steps": .array(order.map { .string($0) })])
        randomization["orders"] = .object(orders)
        edited["randomization"] = .object(randomization)
        #expect(try divergences(edited) == ["orderMismatch"])

        var without = result
        without["randomization"] = nil
        #expect(try divergences(without).contains("orderMismatch"))

        var extra = result
        orders = try #require(result["randomization"]?.objectValue?["orders"]?.objectValue)
        orders["intro"] = .object(["steps": .array([])])
        randomization["orders"] = .object(orders)
        extra["randomization"] = .object(randomization)
        #expect(try divergences(extra) == ["orderMismatch"])
    }
}
