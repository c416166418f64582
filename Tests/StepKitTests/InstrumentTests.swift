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

    func moodAnswers(_ scores: [Int]) -> String {
        let values = ["never", "fewDays", "mostDays", "everyDay"]
        return "{" + scores.enumerated().map { "\"mood\($0.offset + 1)\": [\"\(values[$0.element])\"]" }.joined(separator: ", ") + "}"
    }

    @Test func moodScreener() throws {
        let t = try task("mood-screener")
        // (item scores, total, band, safety step shown)
        let cases: [([Int], Int, String, Bool)] = [
            ([1, 2, 3, 2, 0, 1, 2, 0, 0], 11, "moderate", false),   // the answers file
            ([0, 0, 0, 0, 0, 0, 0, 0, 0], 0, "minimal", false),
            ([1, 1, 1, 1, 0, 0, 0, 0, 0], 4, "minimal", false),
            ([1, 1, 1, 1, 1, 0, 0, 0, 0], 5, "mild", false),
            ([2, 2, 2, 2, 1, 0, 0, 0, 1], 10, "moderate", true),
            ([3, 3, 3, 2, 2, 2, 2, 2, 0], 19, "moderatelySevere", false),
            ([3, 3, 3, 3, 3, 3, 2, 0, 0], 20, "severe", false),
            ([3, 3, 3, 3, 3, 3, 3, 3, 3], 27, "severe", true),
        ]
        for (scores, total, band, safety) in cases {
            let (path, calculations) = try walk(t, moodAnswers(scores))
            #expect(calculations["moodTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["moodBand"] == .string(band), "\(scores)")
            #expect(path.contains("safety") == safety, "\(scores)")
            #expect(path.last == "done")
        }
        let file = try #require(readFile(InstrumentTests.examples + "mood-screener.answers.json"))
        #expect(try walk(t, file).calculations["moodTotal"]?.numericValue == 11)
    }

    @Test func worryScreener() throws {
        let t = try task("worry-screener")
        let values = ["never", "fewDays", "mostDays", "everyDay"]
        let cases: [([Int], Int, String)] = [
            ([2, 1, 2, 3, 0, 1, 1], 10, "moderate"),   // the answers file
            ([0, 0, 0, 0, 0, 0, 0], 0, "minimal"),
            ([1, 1, 1, 1, 0, 0, 0], 4, "minimal"),
            ([1, 1, 1, 1, 1, 0, 0], 5, "mild"),
            ([2, 2, 2, 2, 1, 0, 0], 9, "mild"),
            ([2, 2, 2, 2, 2, 2, 2], 14, "moderate"),
            ([3, 3, 3, 2, 2, 1, 1], 15, "severe"),
            ([3, 3, 3, 3, 3, 3, 3], 21, "severe"),
        ]
        for (scores, total, band) in cases {
            let items = scores.enumerated().map { "\"worry\($0.offset + 1)\": [\"\(values[$0.element])\"]" }.joined(separator: ", ")
            let (_, calculations) = try walk(t, "{\"worry\": {\(items)}}")
            #expect(calculations["worryTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["worryBand"] == .string(band), "\(scores)")
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
        // (item scores: all ten, or item 1 = never then items 9 and 10), total, zone
        let cases: [([Int], Int, String)] = [
            ([3, 1, 2, 1, 0, 0, 1, 0, 0, 2], 10, "zone2"),   // the answers file
            ([1, 0, 1, 0, 0, 0, 0, 0, 0, 0], 2, "zone1"),
            ([2, 1, 1, 1, 0, 0, 1, 0, 0, 2], 8, "zone2"),
            ([1, 1, 1, 1, 1, 1, 0, 0, 0, 0], 6, "zone1"),
            ([1, 1, 1, 1, 0, 0, 1, 0, 0, 2], 7, "zone1"),
            ([3, 2, 2, 2, 2, 1, 1, 1, 2, 2], 18, "zone3"),
            ([4, 2, 3, 2, 2, 1, 2, 1, 0, 4], 21, "zone4"),
            ([4, 4, 4, 4, 4, 4, 4, 4, 4, 4], 40, "zone4"),
            // Never drinks: items 2 to 8 are skipped (AUDIT-C style) and count nothing.
            ([0, 0, 0], 0, "zone1"),
            ([0, 4, 4], 8, "zone2"),
        ]
        for (scores, total, zone) in cases {
            let (path, calculations) = try walk(t, answers(scores))
            #expect(calculations["drinkTotal"]?.numericValue == Double(total), "\(scores)")
            #expect(calculations["drinkZone"] == .string(zone), "\(scores)")
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
