import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A session's parts keep their invariants (`Session._checkInvariants`, in the style of
/// swift-collections) after every operation: a seeded walk drives sessions through every
/// mutating entry point — answers valid and not, moves forward and back through a loop, skips,
/// active-step operations, ticks, samples, new clocks, finishing, save and restore — and checks
/// the invariants after each call; a rejected call must leave the saved session exactly as it
/// was. The walk is a fixed sequence (a seeded generator), so it is the same on every run.
@Suite struct SessionInvariantTests {
    static let task = """
    {"identifier": "inv", "steps": [
      {"type": "instruction", "identifier": "intro", "title": "Welcome"},
      {"type": "question", "identifier": "name", "answerFormat": {"type": "text"}},
      {"type": "question", "identifier": "more", "answerFormat": {"type": "boolean"}},
      {"type": "form", "identifier": "f", "optional": true, "formItems": [
        {"identifier": "pregnant", "answerFormat": {"type": "boolean"}},
        {"identifier": "weeks", "answerFormat": {"type": "numeric", "style": "integer"},
         "visibleWhen": {"result": {"step": "f", "item": "pregnant"}, "equals": true}}]},
      {"type": "active", "identifier": "walking", "stepDuration": 10, "shouldStartTimerAutomatically": true,
       "shouldContinueOnFinish": true, "shouldSpeakRemainingTimeAtHalfway": true,
       "recorderConfigurations": [{"type": "pedometer", "identifier": "pedometer"}]},
      {"type": "question", "identifier": "again", "optional": true, "answerFormat": {"type": "boolean"}},
      {"type": "completion", "identifier": "done"}],
     "navigationRules": {"more": {"type": "predicate", "branches": [{"when": {"result": "more", "equals": true}, "destination": "name"}]}},
     "asyncActions": [{"type": "location", "identifier": "gps", "startStepIdentifier": "name", "stopStepIdentifier": "again"}]}
    """

    typealias Generator = SeededGenerator

    /// What the walk did, so the test knows it reached every kind of call.
    struct Tally {
        var done: [String: Int] = [:]
        var refused: [String: Int] = [:]
        var loops = 0
        var finished = 0
    }

    /// An answer the current step takes (or, with `valid` false, one it refuses).
    func answer(for step: String, valid: Bool, _ g: inout Generator) throws -> JSON {
        switch (step, valid) {
        case ("name", true): return .string(["ada", "grace", "edsger"][g.next(3)])
        case ("more", true), ("again", true): return .bool(g.next(2) == 0)
        case ("f", true):
            return g.next(2) == 0 ? try json(#"{"pregnant": false}"#) : try json(#"{"pregnant": true, "weeks": \#(g.next(40))}"#)
        case ("f", false): return try json(#"{"weeks": "twelve"}"#)
        default: return .string("not an answer this step takes")
        }
    }

    /// The session as saved: what a rejected call must leave exactly as it was.
    func saved(_ s: Session) throws -> String { try Restoration.saveText(s) }

    func restore(_ text: String, _ s: Session, clock: ManualClock) throws -> Session {
        let result = text.withCString { p in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(p, task: s.task, options: s.options, clock: clock.clock) }
        }
        return try result.get()
    }

    func walk(seed: UInt64, calls: Int) throws -> Tally {
        var g = Generator(state: seed)
        var tally = Tally()
        var clock = ManualClock(1_767_225_600_000)
        var options = SessionOptions()
        options.outputDirectory = temporaryDirectory()
        options.continueOnRecorderFailure = true
        let task = try compile(SessionInvariantTests.task)
        var s = Session(task: task, options: options, clock: clock.clock)
        s._checkInvariants()
        for _ in 0..<calls {
            if s.isFinished {
                tally.finished += 1
                s = Session(task: task, options: options, clock: clock.clock)
                s._checkInvariants()
            }
            let step = s.currentStep?.identifier ?? ""
            let name: String
            var call: (inout Session) throws(StepKitError) -> Void
            switch g.next(15) {
            case 0, 1, 2:
                let value = try answer(for: step, valid: true, &g)
                name = "setAnswer"
                call = { (s: inout Session) throws(StepKitError) in try s.setAnswer(value) }
            case 3:
                let value = try answer(for: step, valid: false, &g)
                name = "setAnswer"
                call = { (s: inout Session) throws(StepKitError) in try s.setAnswer(value) }
            case 4, 5, 6:
                name = "goForward"
                call = { (s: inout Session) throws(StepKitError) in try s.goForward() }
            case 7:
                name = "goBackward"
                call = { (s: inout Session) throws(StepKitError) in try s.goBackward() }
            case 8:
                name = "skip"
                call = { (s: inout Session) throws(StepKitError) in try s.skip() }
            case 9:
                let operation = Session.ActiveOperation.allCases[g.next(Session.ActiveOperation.allCases.count)]
                name = "active." + operation.rawValue
                call = { (s: inout Session) throws(StepKitError) in try s.activeOperation(operation) }
            case 10:
                clock.now += Int64(1 + g.next(6_000))
                name = "tick"
                call = { (s: inout Session) throws(StepKitError) in s.tick() }
            case 11:
                let recorder = g.next(2) == 0 ? "pedometer" : "gps"
                name = "record"
                call = { (s: inout Session) throws(StepKitError) in try s.record(recorder, .object(["steps": .int(3)])) }
            case 12:
                clock = ManualClock(clock.now + Int64(g.next(1_000)))
                let next = clock.clock
                name = "setClock"
                call = { (s: inout Session) throws(StepKitError) in s.setClock(next) }
            case 13:
                let reason: FinishReason = g.next(4) == 0 ? .discarded : .saved
                name = g.next(5) == 0 ? "finish" : "saveAndRestore"
                if name == "finish" {
                    call = { (s: inout Session) throws(StepKitError) in try s.finish(reason) }
                } else {
                    let restored = try restore(try saved(s), s, clock: clock)
                    call = { (s: inout Session) throws(StepKitError) in s = restored }
                }
            default:
                clock.now += Int64(g.next(2_000))
                name = "goForward"
                call = { (s: inout Session) throws(StepKitError) in try s.goForward() }
            }
            // Taken once the clock has moved for the call: an active step's saved time is read then.
            let before = try saved(s)
            let events = s.pendingEvents
            do throws(StepKitError) {
                try call(&s)
                tally.done[name, default: 0] += 1
            } catch {
                tally.refused[name, default: 0] += 1
                // A rejected call changes nothing: the saved session and the queued events are
                // as they were.
                #expect(try saved(s) == before, "\(name) was refused but changed the session")
                #expect(s.pendingEvents == events, "\(name) was refused but queued events")
            }
            s._checkInvariants()
            if Set(s.path.map(\.stepIndex)).count < s.path.count { tally.loops += 1 }
            _ = s.takeEvents()
            s._checkInvariants()
        }
        return tally
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everyCallKeepsTheParts(seed: UInt64) throws {
        let tally = try walk(seed: seed, calls: 400)
        // The walk reached every kind of call, accepted and refused, went round the loop and
        // finished runs: the invariants were checked on all of it.
        for name in ["setAnswer", "goForward", "goBackward", "tick", "setClock", "saveAndRestore"] {
            #expect(tally.done[name, default: 0] > 0, "seed \(seed): no \(name) was accepted")
        }
        for name in ["setAnswer", "goForward", "skip"] {
            #expect(tally.refused[name, default: 0] > 0, "seed \(seed): no \(name) was refused")
        }
        #expect(tally.loops > 0, "seed \(seed): the walk never went round the loop")
        #expect(tally.finished > 0, "seed \(seed): no run finished")
        #expect(tally.done.keys.contains { $0.hasPrefix("active.") }, "seed \(seed): no active-step operation was accepted")
    }

    /// Through the handle too: every call the C functions make goes through `SessionHandle.call`.
    @Test func callsThroughTheHandleKeepTheParts() throws {
        var options = SessionOptions()
        options.continueOnRecorderFailure = true
        let handle = try SessionHandle(Session(task: try compile(SessionInvariantTests.task), options: options,
                                               clock: ManualClock(1_767_225_600_000).clock), options: options)
        let calls: [JSON?] = [nil, .string("ada"), nil, .bool(true), nil, .null, nil]
        for (i, answer) in calls.enumerated() {
            _ = try handle.call(wantsState: i % 2 == 0) { (s: inout Session) throws(StepKitError) in
                switch answer {
                case nil: try s.goForward()
                case .null?: try s.goBackward()
                case let value?: try s.setAnswer(value)
                }
            }
            handle.store.read { $0._checkInvariants() }
        }
        // name, more (true), name again: the loop is on the path.
        handle.store.read { s in #expect(s.path.map(\.stepIndex) == [0, 1, 2, 1]) }
    }

    #if DEBUG
    /// The checks fail when a part breaks its invariant (a debug build stops the process).
    @Test func aBrokenPartFailsItsCheck() async {
        await #expect(processExitsWith: .failure) {
            let clock = RunClock(restoring: .system, startDate: 10, endDate: 5, finishReason: .saved, touched: true)
            clock._checkInvariants()
        }
        await #expect(processExitsWith: .failure) {
            var answers = AnswerStore()
            answers[3] = .bool(true)
            answers._checkInvariants(stepCount: 2)
        }
        await #expect(processExitsWith: .failure) {
            let clock = RunClock(restoring: .system, startDate: 10, endDate: nil, finishReason: .saved, touched: true)
            clock._checkInvariants()
        }
        // A visit replaced in place by one of another step: the index would point at the wrong step.
        await #expect(processExitsWith: .failure) {
            var path = VisitPath()
            path.push(Visit(stepIndex: 0, startDate: 0))
            path[0] = Visit(stepIndex: 1, startDate: 0)
        }
        await #expect(processExitsWith: .failure) {
            var actions = AsyncActions()
            actions[action: 0] = RecorderRun(identifier: "gps", type: "location")
            actions._checkInvariants(actions: [])
        }
    }
    #endif
}
