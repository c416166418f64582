import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The result and the state written straight to text (`Session.writeResult`,
/// `Session.writeState`) must be, byte for byte, what `JSONWriter` makes of the value trees
/// (`resultJSON`, `stateJSON`) that the engine built before issue 36 and that stay as the oracle:
/// compared after every call of a seeded random walk over every example task, the benchmark
/// survey and tasks made to reach what the examples do not (sections in sections, strings to
/// escape, reals, hidden form items, skipped steps, randomization).
@Suite struct ResultWriterTests {
    static let root = repositoryRoot

    /// The example tasks (`examples/tasks/*.json` with their `.answers.json`) and the survey.
    static func definitions() -> [(name: String, task: String, answers: String?)] {
        var names: [String] = []
        if let dir = opendir(root + "examples/tasks") {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".json") && !name.hasSuffix(".answers.json") { names.append(String(name.dropLast(5))) }
            }
            closedir(dir)
        }
        var found: [(String, String, String?)] = names.sorted().compactMap { name in
            readFile(root + "examples/tasks/\(name).json").map { (name, $0, readFile(root + "examples/tasks/\(name).answers.json")) }
        }
        if let survey = readFile(root + "benchmarks/survey.json") { found.append(("survey", survey, nil)) }
        found.append(("made", made, madeAnswers))
        found.append(("repeating", repeating, repeatingAnswers))
        return found
    }

    /// What the examples may not reach: sections in sections (one after another, and left and
    /// entered again), identifiers and answers to escape, reals of every precision, a form with a
    /// hidden item, an optional step to skip, units.
    static let made = #"""
    {"identifier": "made \"quoted\"\n\t\u0001 é 😀", "steps": [
      {"type": "instruction", "identifier": "intro", "title": "Start"},
      {"type": "section", "identifier": "outer", "steps": [
        {"type": "section", "identifier": "in\\ner", "steps": [
          {"type": "question", "identifier": "weight", "answerFormat": {"type": "numeric", "style": "decimal", "unit": "kg \"metric\""}},
          {"type": "question", "identifier": "note", "optional": true, "answerFormat": {"type": "text"}}]},
        {"type": "form", "identifier": "f", "optional": true, "formItems": [
          {"identifier": "pregnant", "answerFormat": {"type": "boolean"}},
          {"identifier": "weeks", "answerFormat": {"type": "numeric", "style": "integer"},
           "visibleWhen": {"result": {"step": "f", "item": "pregnant"}, "equals": true}},
          {"identifier": "ratio", "answerFormat": {"type": "numeric", "style": "decimal"}}]}]},
      {"type": "section", "identifier": "second", "steps": [
        {"type": "question", "identifier": "pick", "answerFormat": {"type": "textChoice", "style": "multipleChoice",
         "textChoices": [{"text": "A", "value": "a"}, {"text": "B \"b\"", "value": 2.5}, {"text": "C", "value": "c\u0007"}]}}]},
      {"type": "question", "identifier": "again", "optional": true, "answerFormat": {"type": "boolean"}},
      {"type": "completion", "identifier": "done"}],
     "navigationRules": {"again": {"type": "predicate", "branches": [{"when": {"result": "again", "equals": true}, "destination": "weight"}]}}}
    """#
    static let madeAnswers = #"""
    {"weight": 0.1, "note": "line\nbreak \"and\" \\ tab\t é 😀 \u001f", "f": {"pregnant": true, "weeks": 12, "ratio": 1e-7},
     "pick": ["a", 2.5, "c\u0007"], "again": true}
    """#

    /// Repeating blocks (issue 31): a group whose count is an answer, and a repeating question
    /// (the task `RepeatingTests` walks).
    static let repeating = medications
    static let repeatingAnswers = #"""
    {"howMany": 2, "list": {"pharmacy": "Main \"St\"", "medication": [{"name": "aspirin", "dose": 0.5}, {"name": "ibuprofen"}]},
     "allergies": ["pollen", "cats\n"]}
    """#

    /// An answers file's answer for the current step: its entry, or in a repeating section the
    /// entry of the instance the participant is in (`{"section": [{"step": answer}, ...]}`,
    /// examples/tasks/README.md).
    static func fileAnswer(_ given: JSONObject, _ s: Session) -> JSON? {
        guard let index = s.currentIndex, let step = s.currentStep?.identifier else { return nil }
        if let n = s.task.rules.blockOfStep[index], let block = s.stepBlock(n), case .array(let list)? = given[block.identifier] {
            return list[ifPresent: s.currentInstance(n)]?.objectValue?[step]
        }
        return given[step]
    }

    /// The writers' text against the trees' text, both for the session as it is.
    func compare(_ s: Session, _ context: @autoclosure () -> String) {
        var result = JSONOutput()
        s.writeResult(to: &result)
        let written = String(decoding: result.finishBytes(), as: UTF8.self)
        #expect(written == JSONWriter.string(s.resultJSON()), "result: \(context())")
        // The state, with the events still queued as a call would hand them out.
        let events = s.pendingEvents
        var state = JSONOutput()
        s.writeState(events: events, to: &state)
        var tree = s.stateJSON().objectValue ?? JSONObject()
        tree["events"] = .array(events)
        #expect(String(decoding: state.finishBytes(), as: UTF8.self) == JSONWriter.string(.object(tree)), "state: \(context())")
    }

    typealias Generator = SeededGenerator

    /// A random walk of `calls` calls: answers from the answer file (or a wrong one), forward,
    /// back, skip, the clock moved by odd milliseconds, now and then finishing and starting again.
    func walk(_ name: String, _ text: String, _ answers: String?, seed: UInt64, calls: Int) throws -> Int {
        let task = try compile(text)
        let given = try answers.map { try #require(try json($0).objectValue) } ?? JSONObject()
        var g = Generator(state: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        let clock = ManualClock(1_767_225_600_000 + Int64(seed) * 7_919)
        var options = SessionOptions()
        options.seed = seed % 2 == 0 ? seed : nil
        // Messages in English, in a shipped catalogue, and asked in a language with none.
        options.language = [nil, "de", "es", "fr-CA"][Int(seed % 4)]
        var s = Session(task: task, options: options, clock: clock.clock)
        var compared = 0
        for call in 0..<calls {
            if s.isFinished {
                compare(s, "\(name) seed \(seed) call \(call) (finished)")
                compared += 1
                s = Session(task: task, options: options, clock: clock.clock)
            }
            clock.now += Int64(g.next(90_000))
            let step = s.currentStep?.identifier ?? ""
            switch g.next(10) {
            case 0, 1, 2, 3:
                if let answer = ResultWriterTests.fileAnswer(given, s) { _ = try? s.setAnswer(answer) } else { _ = try? s.setAnswer(.string("?")) }
            case 4: _ = try? s.setAnswer(.double(Double(g.next(1_000_000)) / 7))
            case 5, 6, 7: _ = try? s.goForward()
            case 8: _ = try? s.goBackward()
            default:
                switch g.next(12) {
                case 0: _ = try? s.finish(.discarded)
                case 1: _ = try? s.addInstance(nil)
                case 2: _ = try? s.removeInstance(nil, at: 0)
                default: _ = try? s.skip()
                }
            }
            compare(s, "\(name) seed \(seed) call \(call) at \(step)")
            compared += 1
        }
        return compared
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func resultWrittenAsTheTreeWrites(seed: UInt64) throws {
        let definitions = ResultWriterTests.definitions()
        // Every example (ten or more), the survey and the made task: the walk reached them all.
        #expect(definitions.count >= 13)
        for (name, task, answers) in definitions {
            let compared = try walk(name, task, answers, seed: seed, calls: 60)
            #expect(compared >= 60, "\(name)")
        }
    }

    /// Each example walked to its end with its answers, result compared at every step.
    @Test func resultOfEveryCompletedExample() throws {
        for (name, text, answers) in ResultWriterTests.definitions() {
            let task = try compile(text)
            let given = try answers.map { try #require(try json($0).objectValue) } ?? JSONObject()
            let clock = ManualClock(1_767_225_600_123)
            var s = Session(task: task, options: SessionOptions(), clock: clock.clock)
            var steps = 0
            while !s.isFinished, let step = s.currentStep?.identifier, steps < 200 {
                steps += 1
                clock.now += 1_234
                if let answer = ResultWriterTests.fileAnswer(given, s) { _ = try? s.setAnswer(answer) }
                compare(s, "\(name) at \(step)")
                if (try? s.goForward()) == nil { _ = try? s.skip() }
            }
            compare(s, "\(name) at the end")
        }
    }
}
