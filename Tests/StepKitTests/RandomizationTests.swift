import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A task with a shuffled choice list (one pinned choice), a form whose items are shuffled,
/// and an unshuffled question.
let shuffledTask = """
{"identifier": "order", "steps": [
  {"type": "question", "identifier": "fruit", "question": "Fruit?",
   "answerFormat": {"type": "textChoice", "style": "multipleChoice", "shuffle": true, "textChoices": [
     {"text": "Apple", "value": "a"}, {"text": "Banana", "value": "b"}, {"text": "Cherry", "value": "c"},
     {"text": "Date", "value": "d"}, {"text": "Elderberry", "value": "e"},
     {"text": "None of the above", "value": "none", "exclusive": true, "pinned": true}]}},
  {"type": "form", "identifier": "about", "shuffleItems": true, "formItems": [
     {"sectionTitle": "You"},
     {"identifier": "x", "text": "X", "answerFormat": {"type": "boolean"}},
     {"identifier": "y", "text": "Y", "answerFormat": {"type": "boolean"}},
     {"identifier": "z", "text": "Z", "answerFormat": {"type": "boolean"}},
     {"identifier": "last", "text": "Last", "pinned": true, "answerFormat": {"type": "boolean"}}]},
  {"type": "question", "identifier": "plain", "answerFormat": {"type": "boolean"}}]}
"""

func openSession(_ task: Task, seed: UInt64?, clock: ManualClock = ManualClock(1_767_225_600_000)) -> Session {
    var options = SessionOptions()
    options.seed = seed
    return Session(task: task, options: options, clock: clock.clock)
}

@Suite struct RandomizationTests {
    /// PCG32's published reference output: pcg32-demo (pcg-c-basic) seeds with initstate 42,
    /// initseq 54 and prints these six numbers first.
    @Test func pcg32ReferenceOutput() {
        var g = PCG32(seed: 42, sequence: 54)
        let outputs = (0..<6).map { _ in g.next() }
        #expect(outputs == [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e])
    }

    /// FNV-1a 64's published test vectors name the streams.
    @Test func streamNamesAreFNV1a64() {
        #expect(PCG32.sequence(named: "") == 0xcbf29ce484222325)
        #expect(PCG32.sequence(named: "a") == 0xaf63dc4c8601ec8c)
        #expect(PCG32.sequence(named: "foobar") == 0x85944171f73967e8)
    }

    /// The bounded draw rejects the outputs below 2^32 mod bound (no modulo bias): with bound 3,
    /// 2^32 mod 3 = 1, so only output 0 is drawn again.
    @Test func boundedDrawStaysBelowTheBound() {
        var g = PCG32(seed: 7, sequence: 1)
        for bound: UInt32 in [1, 2, 3, 5, 6, 100, 0x8000_0001] {
            for _ in 0..<50 { #expect(g.next(below: bound) < bound) }
        }
    }

    @Test func shuffleIsAPermutationAndKeepsPinnedEntries() {
        for seed: UInt64 in [0, 1, 42, 1 << 40] {
            let order = PCG32.order(count: 6, pinned: [5, 0], seed: seed, name: "q")
            #expect(order.sorted() == [0, 1, 2, 3, 4, 5])
            #expect(order[0] == 0 && order[5] == 5)
        }
        // Some seed gives an order other than the definition's (the list is shuffled at all).
        let orders = Set((0..<20).map { PCG32.order(count: 5, pinned: [], seed: UInt64($0), name: "q") })
        #expect(orders.count > 1)
    }

    @Test func stateShowsTheSeededOrderAndAcceptsAnyChoice() throws {
        let task = try compile(shuffledTask)
        let s = openSession(task, seed: 12345)
        let state = s.stateJSON().objectValue!
        let shown = state["step"]?.objectValue?["answerFormat"]?.objectValue?["textChoices"]?.arrayValue?.compactMap { $0.objectValue?["value"] } ?? []
        let expected = PCG32.order(count: 6, pinned: [5], seed: 12345, name: "fruit").map { ["a", "b", "c", "d", "e", "none"][$0] }
        #expect(shown == expected.map { JSON.string($0) })
        #expect(state["order"] == .object(["choices": .array(expected.map { .string($0) })]))
        #expect(state["seed"] == .int(12345))
        #expect(shown.last == .string("none"))
        // The same seed gives the same order in another session.
        let again = openSession(task, seed: 12345).stateJSON().objectValue?["order"]
        #expect(again == state["order"])
    }

    @Test func formItemsAreShuffledAroundHeadersAndPinnedItems() throws {
        let task = try compile(shuffledTask)
        var s = openSession(task, seed: 99)
        try s.setAnswer(json(#"["a"]"#))
        try s.goForward()
        let state = s.stateJSON().objectValue!
        let ids = state["step"]?.objectValue?["formItems"]?.arrayValue?.map { $0.objectValue?["identifier"] ?? .null } ?? []
        let definition: [JSON] = [.null, .string("x"), .string("y"), .string("z"), .string("last")]
        let order = PCG32.order(count: 5, pinned: [0, 4], seed: 99, name: "about#items")
        #expect(ids == order.map { definition[$0] })
        #expect(ids.first == .null && ids.last == .string("last"))
        #expect(state["order"]?.objectValue?["items"] == .array(ids))
    }

    @Test func aDrawnSeedIsKeptAndRestoreGivesTheSameOrder() throws {
        let task = try compile(shuffledTask)
        let clock = ManualClock(1_767_225_600_000)
        let s = openSession(task, seed: nil, clock: clock)
        let seed = try #require(s.seed)
        #expect(seed <= Randomization.maximumSeed)
        let text = try Restoration.saveText(s)
        let restored = try text.withCString { p in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) }
        #expect(restored.seed == seed)
        #expect(restored.stateJSON().objectValue?["step"] == s.stateJSON().objectValue?["step"])
        let result = restored.resultJSON().objectValue?["randomization"]?.objectValue
        #expect(result?["seed"] == .int(Int64(seed)))
        #expect(result?["orders"]?.objectValue?["fruit"] == s.stateJSON().objectValue?["order"])
    }

    @Test func restoreRefusesAnOrderTheSeedDoesNotGive() throws {
        let task = try compile(shuffledTask)
        let clock = ManualClock(1_767_225_600_000)
        let s = openSession(task, seed: 5, clock: clock)
        var document = try Restoration.contents(s)
        // Another seed with the orders of seed 5: the orders are not what the seed gives.
        var randomization = document["randomization"]!.objectValue!
        randomization["seed"] = .int(6)
        document["randomization"] = .object(randomization)
        let (algorithm, digest) = try Restoration.sign(JSONWriter.string(.object(document)), key: nil)
        document["integrity"] = .object(["algorithm": .string(algorithm), "digest": .string(digest)])
        let text = JSONWriter.string(.object(document))
        let refused = text.withCString { p in Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: task, options: SessionOptions(), clock: clock.clock) } }
        guard case .failure(let error) = refused else { Issue.record("restored an order the seed does not give"); return }
        #expect(error.status == .restore)
        #expect(error.problems.first?.code == "orderMismatch")
    }

    /// Data saved on a version that shuffled nothing migrates to one that shuffles: the run
    /// draws its seed then. Without "migrate", data of a shuffling task with no seed is damaged.
    @Test func aMigratedRunFromAVersionWithoutShufflingDrawsASeed() throws {
        let old = try compile(shuffledTask.replacing(#""shuffle": true, "#, with: "").replacing(#""shuffleItems": true, "#, with: ""))
        #expect(!old.rules.shuffles)
        let clock = ManualClock(1_767_225_600_000)
        let s = openSession(old, seed: nil, clock: clock)
        #expect(s.seed == nil)
        let text = try Restoration.saveText(s)
        let new = try compile(shuffledTask)
        var options = SessionOptions()
        options.migrate = true
        let migrated = try text.withCString { p in try Restoration.restore(p, task: new, options: options, clock: clock.clock) }
        #expect(migrated.seed != nil)
        #expect(migrated.stateJSON().objectValue?["order"]?.objectValue?["choices"] != nil)
    }

    @Test(arguments: [#""7""#, "1.5", "-1", "9007199254740992", "true"])
    func aSeedThatIsNotAWholeNumberInRangeIsRefused(_ seed: String) throws {
        let options = try json(#"{"seed": "# + seed + "}")
        let refused = Result { () throws(StepKitError) -> SessionOptions in try SessionOptions.parse(options) }
        guard case .failure(let error) = refused else { Issue.record("accepted seed \(seed)"); return }
        #expect(error.status == .invalidArgument)
        #expect(error.problems.first?.path.description == "seed")
    }

    @Test func theLargestSeedIsAccepted() throws {
        let options = try SessionOptions.parse(try json(#"{"seed": 9007199254740991}"#))
        #expect(options.seed == 9007199254740991)
    }
}
