import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The three scored instruments of `examples/tasks/` (issue 13), each walked with several answer
/// sets to the totals and bands computed by hand from the published scoring rules.
@Suite struct InstrumentTests {
    static let examples = repositoryRoot + "examples/tasks/"

    func task(_ name: String) throws -> Task {
        let text = try #require(readFile(InstrumentTests.examples + name + ".json"))
        return try compile(text)
    }

    /// Walks `task` answering each step named in `answers`, and returns the visited steps and the
    /// completed result's calculations.
    func walk(_ task: Task, _ answers: String) throws -> (path: [String], calculations: JSONObject) {
        let given = try #require(try json(answers).objectValue)
        var s = Session(task: task, options: SessionOptions(), clock: ManualClock(1_767_225_600_000).clock)
        var path: [String] = []
        var guardSteps = 0
        while !s.isFinished, let step = s.currentStep, guardSteps < 100 {
            guardSteps += 1
            path.append(step.identifier)
            if let answer = given[step.identifier] { try s.setAnswer(answer) }
            try s.goForward()
        }
        #expect(s.finishReason == .completed)
        let calculations = try #require(s.resultJSON().objectValue?["calculations"]?.objectValue)
        return (path, calculations)
    }

    /// The item scores with the totals and bands worked out by hand for `instrument`, shared with
    /// the Python tests (Tests/fixtures/instrument-scores.json).
    func cases(_ instrument: String) throws -> [(scores: [Int], total: Int, entry: JSONObject)] {
        let text = try #require(readFile(repositoryRoot + "Tests/fixtures/instrument-scores.json"))
        let all = try #require(try json(text).objectValue?[instrument]?.arrayValue)
        return try all.map { entry in
            let c = try #require(entry.objectValue)
            let scores = try #require(c["scores"]?.arrayValue).map { Int($0.numericValue ?? -1) }
            return (scores, Int(try #require(c["total"]?.numericValue)), c)
        }
    }

    func moodAnswers(_ scores: [Int]) -> String {
        let values = ["never", "fewDays", "mostDays", "everyDay"]
        return "{" + scores.enumerated().map { "\"mood\($0.offset + 1)\": [\"\(values[$0.element])\"]" }.joined(separator: ", ") + "}"
    }

    @Test func moodScreener() throws {
        let t = try task("mood-screener")
        let mood = try cases("mood-screener")
        #expect(mood.count == 10)
        for (scores, total, c) in mood {
            let (path, calculations) = try walk(t, moodAnswers(scores))
            #expect(calculations["moodTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["moodBand"] == c["band"], "\(scores)")
            #expect(path.contains("safety") == (c["safety"] == .bool(true)), "\(scores)")
            #expect(path.last == "done")
        }
        let file = try #require(readFile(InstrumentTests.examples + "mood-screener.answers.json"))
        #expect(try walk(t, file).calculations["moodTotal"]?.numericValue == 11)
    }

    @Test func worryScreener() throws {
        let t = try task("worry-screener")
        let values = ["never", "fewDays", "mostDays", "everyDay"]
        let worry = try cases("worry-screener")
        #expect(worry.count == 11)
        for (scores, total, c) in worry {
            let items = scores.enumerated().map { "\"worry\($0.offset + 1)\": [\"\(values[$0.element])\"]" }.joined(separator: ", ")
            let (_, calculations) = try walk(t, "{\"worry\": {\(items)}}")
            #expect(calculations["worryTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["worryBand"] == c["band"], "\(scores)")
        }
        let file = try #require(readFile(InstrumentTests.examples + "worry-screener.answers.json"))
        #expect(try walk(t, file).calculations["worryBand"] == .string("moderate"))
    }

    @Test func drinkingScreener() throws {
        let t = try task("drinking-screener")
        let first = ["never", "monthlyOrLess", "twoToFourMonthly", "twoToThreeWeekly", "fourPlusWeekly"]
        let second = ["oneTwo", "threeFour", "fiveSix", "sevenToNine", "tenPlus"]
        let often = ["never", "lessThanMonthly", "monthly", "weekly", "daily"]
        let harm = [0: "no", 2: "notPastYear", 4: "pastYear"]
        func answers(_ s: [Int]) -> String {
            var parts = ["\"drink1\": [\"\(first[s[0]])\"]"]
            if s.count == 10 {
                parts.append("\"drink2\": [\"\(second[s[1]])\"]")
                for i in 2..<8 { parts.append("\"drink\(i + 1)\": [\"\(often[s[i]])\"]") }
            }
            parts.append("\"drink9\": [\"\(harm[s[s.count - 2]] ?? "")\"]")
            parts.append("\"drink10\": [\"\(harm[s[s.count - 1]] ?? "")\"]")
            return "{" + parts.joined(separator: ", ") + "}"
        }
        // Item scores: all ten, or item 1 = never (items 2 to 8 skipped, AUDIT-C style, counting
        // nothing) then items 9 and 10.
        let drinking = try cases("drinking-screener")
        #expect(drinking.count == 14)
        for (scores, total, c) in drinking {
            let (path, calculations) = try walk(t, answers(scores))
            #expect(calculations["drinkTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["drinkZone"] == c["zone"], "\(scores)")
            #expect(path.contains("drink2") == (scores.count == 10), "\(scores)")
        }
    }

    @Test func theInstrumentsAreClean() throws {
        for name in ["mood-screener", "worry-screener", "drinking-screener"] {
            let found = try findings(try #require(readFile(InstrumentTests.examples + name + ".json")))
            #expect(found.isEmpty, "\(name): \(found)")
        }
    }
}
