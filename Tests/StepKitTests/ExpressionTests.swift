import Glibc
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// A task with two numeric questions, a yes/no question, a date of birth, a choice question
/// with scores, and the given calculations.
private func task(calculations: String, extra: String = "") throws -> Task {
    try compile("""
    {"identifier": "t", "steps": [
      {"type": "question", "identifier": "a", "optional": true, "answerFormat": {"type": "numeric", "style": "decimal", "showDontKnowButton": true}},
      {"type": "question", "identifier": "b", "optional": true, "answerFormat": {"type": "numeric", "style": "decimal"}},
      {"type": "question", "identifier": "yn", "optional": true, "answerFormat": {"type": "boolean", "yesScore": 2, "noScore": 0}},
      {"type": "question", "identifier": "dob", "optional": true, "answerFormat": {"type": "date"}},
      {"type": "question", "identifier": "mood", "optional": true, "answerFormat": {"type": "textChoice", "style": "multipleChoice",
        "textChoices": [{"text": "Low", "value": "low", "score": 1}, {"text": "Mid", "value": "mid", "score": 2},
                        {"text": "High", "value": "high", "score": 3}, {"text": "None", "value": "none"}]}},
      {"type": "question", "identifier": "name", "optional": true, "answerFormat": {"type": "text"}},
      {"type": "completion", "identifier": "end"}
    ], "calculations": \(calculations)\(extra)}
    """)
}

/// Walks the task, answering each question step from `answers` (skipping the others), and
/// returns the calculations on the path as the result has them.
private func calculations(_ task: Task, _ answers: [String: String], now: Int64 = 1_795_392_000_000) throws -> JSONObject {
    let clock = ManualClock(now)
    var s = Session(task: task, options: SessionOptions(), clock: clock.clock)
    while let step = s.currentStep, step.takesAnswers {
        if let answer = answers[step.identifier] { try s.setAnswer(try json(answer)) } else { try s.skip() }
        if s.currentStep?.identifier == step.identifier { try s.goForward() }
    }
    return s.resultJSON().objectValue?["calculations"]?.objectValue ?? JSONObject()
}

private func value(_ expression: String, _ answers: [String: String] = [:], now: Int64 = 1_795_392_000_000) throws -> JSON? {
    try calculations(try task(calculations: #"{"x": \#(expression)}"#), answers, now: now)["x"]
}

private func codes(_ calculations: String, extra: String = "") -> [String: String] {
    var map: [String: String] = [:]
    do {
        _ = try task(calculations: calculations, extra: extra)
    } catch let error as StepKitError {
        for p in error.problems { map[p.path.description] = p.code }
    } catch {}
    return map
}

@Suite struct ExpressionTests {
    // MARK: The unanswered table

    @Test func unansweredValues() throws {
        // Arithmetic with an unanswered argument is null; aggregates ignore nulls.
        #expect(try value(#"{"+": [{"answer": "a"}, {"answer": "b"}]}"#, ["a": "1"]) == .null)
        #expect(try value(#"{"+": [{"answer": "a"}, {"answer": "b"}]}"#, ["a": "1", "b": "2.5"]) == .double(3.5))
        #expect(try value(#"{"sum": [{"answer": "a"}, {"answer": "b"}]}"#, ["a": "1"]) == .int(1))
        #expect(try value(#"{"sum": [{"answer": "a"}, {"answer": "b"}]}"#) == .int(0))
        #expect(try value(#"{"min": [{"answer": "a"}, {"answer": "b"}]}"#) == .null)
        #expect(try value(#"{"max": [{"answer": "a"}, {"answer": "b"}]}"#, ["b": "7"]) == .int(7))
        #expect(try value(#"{"avg": [{"answer": "a"}, {"answer": "b"}]}"#, ["a": "1", "b": "2"]) == .double(1.5))
        #expect(try value(#"{"avg": [{"answer": "a"}]}"#) == .null)
        #expect(try value(#"{"count": [{"answer": "a"}, {"answer": "b"}, {"answer": "name"}]}"#, ["b": "0", "name": "\"x\""]) == .int(2))
        // "don't know" is an answer for `answered`, but its value is null.
        #expect(try value(#"{"count": [{"answer": "a"}]}"#, ["a": #"{"dontKnow": true}"#]) == .int(0))
        #expect(try value(#"{"answered": "a"}"#, ["a": #"{"dontKnow": true}"#]) == .bool(true))
        #expect(try value(#"{"answered": "a"}"#) == .bool(false))
        // Comparisons with null are false, `!=` too; `not` of null is true.
        #expect(try value(#"{"!=": [{"answer": "a"}, 3]}"#) == .bool(false))
        #expect(try value(#"{"==": [{"answer": "a"}, null]}"#, ["a": "3"]) == .bool(false))
        #expect(try value(#"{"not": [{"==": [{"answer": "a"}, 3]}]}"#) == .bool(true))
        // FHIR's "not equal, or unanswered".
        let fhir = #"{"or": [{"not": [{"answered": "a"}]}, {"!=": [{"answer": "a"}, 3]}]}"#
        #expect(try value(fhir) == .bool(true))
        #expect(try value(fhir, ["a": "3"]) == .bool(false))
        #expect(try value(fhir, ["a": "4"]) == .bool(true))
        // if: a null condition takes else; coalesce takes the first value; concat reads null as "".
        #expect(try value(#"{"if": [{">": [{"answer": "a"}, 1]}, "big", "small"]}"#) == .string("small"))
        #expect(try value(#"{"coalesce": [{"answer": "a"}, {"answer": "b"}, 0]}"#, ["b": "5"]) == .int(5))
        #expect(try value(#"{"concat": ["n=", {"answer": "a"}, "/", {"answer": "b"}]}"#, ["a": "2.5"]) == .string("n=2.5/"))
        #expect(try value(#"{"length": [{"answer": "name"}]}"#) == .null)
        #expect(try value(#"{"length": [{"answer": "name"}]}"#, ["name": "\"héllo\""]) == .int(5))
        #expect(try value(#"{"round": [{"answer": "a"}]}"#) == .null)
        #expect(try value(#"{"score": "mood"}"#) == .null)
    }

    // MARK: Numbers never trap

    @Test func divisionOverflowAndRounding() throws {
        #expect(try value(#"{"/": [{"answer": "a"}, {"answer": "b"}]}"#, ["a": "1", "b": "0"]) == .null)
        #expect(try value(#"{"/": [0, 0]}"#) == .null)
        #expect(try value(#"{"/": [7, 2]}"#) == .double(3.5))
        #expect(try value(#"{"*": [{"answer": "a"}, 1e308, 10]}"#, ["a": "1"]) == .null)
        #expect(try value(#"{"sum": [1e308, 1e308]}"#) == .null)
        #expect(try value(#"{"-": [{"answer": "a"}]}"#, ["a": "4"]) == .int(-4))
        #expect(try value(#"{"-": [10, 3, 2]}"#) == .int(5))
        #expect(try value(#"{"round": [2.5]}"#) == .int(3))
        #expect(try value(#"{"round": [-2.5]}"#) == .int(-3))
        #expect(try value(#"{"round": [{"/": [2, 3]}, 2]}"#) == .double(0.67))
        #expect(try value(#"{"round": [1e308, 6]}"#) == .null)
    }

    // MARK: FHIRPath's string and math functions (issue 29, item 5)
    //
    // Expectations are the FHIRPath N1 specification's own examples (section 5.6 and 5.7).

    @Test func stringFunctionsAsFHIRPathDefinesThem() throws {
        #expect(try value(#"{"substring": ["abcdefg", 3]}"#) == .string("defg"))
        #expect(try value(#"{"substring": ["abcdefg", 1, 2]}"#) == .string("bc"))
        #expect(try value(#"{"substring": ["abcdefg", 6, 2]}"#) == .string("g"))
        #expect(try value(#"{"substring": ["abcdefg", 7, 1]}"#) == .null)
        #expect(try value(#"{"substring": ["abcdefg", -1, 1]}"#) == .null)
        #expect(try value(#"{"substring": [{"answer": "name"}, 0, 2]}"#) == .null)
        #expect(try value(#"{"substring": [{"answer": "name"}, 0, 2]}"#, ["name": "\"Zoë\""]) == .string("Zo"))
        #expect(try value(#"{"startsWith": ["abcdefg", "abc"]}"#) == .bool(true))
        #expect(try value(#"{"startsWith": ["abcdefg", "xyz"]}"#) == .bool(false))
        #expect(try value(#"{"startsWith": ["abc", ""]}"#) == .bool(true))
        #expect(try value(#"{"contains": ["abc", "bc"]}"#) == .bool(true))
        #expect(try value(#"{"contains": ["abc", "bcd"]}"#) == .bool(false))
        #expect(try value(#"{"contains": ["abc", ""]}"#) == .bool(true))
        #expect(try value(#"{"contains": [{"answer": "name"}, "a"]}"#) == .null)
        #expect(try value(#"{"upper": ["abcdefg"]}"#) == .string("ABCDEFG"))
        #expect(try value(#"{"lower": ["AbCdefg"]}"#) == .string("abcdefg"))
        #expect(try value(#"{"replace": ["abcdefg", "cde", "123"]}"#) == .string("ab123fg"))
        #expect(try value(#"{"replace": ["abcdefg", "cde", ""]}"#) == .string("abfg"))
        #expect(try value(#"{"replace": ["abc", "", "x"]}"#) == .string("xaxbxcx"))
        #expect(try value(#"{"replace": ["aaa", "aa", "b"]}"#) == .string("ba"))
    }

    @Test func stringResultsAreBounded() throws {
        // 300 + 301 × 300 scalars would pass the 65,536 limit: null, without building it.
        let long = String(repeating: "y", count: 300)
        #expect(try value(#"{"replace": [{"answer": "name"}, "", "\#(long)"]}"#, ["name": "\"\(long)\""]) == .null)
        #expect(try value(#"{"replace": [{"answer": "name"}, "y", "\#(long)"]}"#, ["name": "\"\(long)\""]) == .null)
        #expect(try value(#"{"length": [{"replace": [{"answer": "name"}, "y", "zz"]}]}"#, ["name": "\"\(long)\""]) == .int(600))
    }

    @Test func mathFunctionsNeverTrap() throws {
        #expect(try value(#"{"ln": [1]}"#) == .int(0))
        #expect(try value(#"{"round": [{"ln": [10]}, 6]}"#) == .double(2.302585))
        #expect(try value(#"{"ln": [0]}"#) == .null)
        #expect(try value(#"{"ln": [-1]}"#) == .null)
        #expect(try value(#"{"exp": [0]}"#) == .int(1))
        #expect(try value(#"{"exp": [1000]}"#) == .null)
        #expect(try value(#"{"sqrt": [81]}"#) == .int(9))
        #expect(try value(#"{"sqrt": [-1]}"#) == .null)
        #expect(try value(#"{"power": [2, 3]}"#) == .int(8))
        #expect(try value(#"{"power": [2.5, 2]}"#) == .double(6.25))
        #expect(try value(#"{"power": [-1, 0.5]}"#) == .null)
        #expect(try value(#"{"power": [10, 400]}"#) == .null)
        #expect(try value(#"{"power": [0, -1]}"#) == .null)
        #expect(try value(#"{"abs": [-5.5]}"#) == .double(5.5))
        #expect(try value(#"{"truncate": [101.5]}"#) == .int(101))
        #expect(try value(#"{"truncate": [-1.9]}"#) == .int(-1))
        #expect(try value(#"{"ln": [{"answer": "a"}]}"#) == .null)
        #expect(try value(#"{"power": [{"answer": "a"}, 2]}"#, ["a": "3"]) == .int(9))
    }

    @Test func timesWithSecondsCompareToTheSecondAndRenderAsWritten() throws {
        let t = try compile("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "at", "answerFormat": {"type": "timeOfDay", "seconds": true}},
          {"type": "question", "identifier": "hm", "answerFormat": {"type": "timeOfDay"}},
          {"type": "completion", "identifier": "end"}],
         "calculations": {"after": {">": [{"answer": "at"}, "11:11:11"]}, "same": {"==": [{"answer": "hm"}, "07:30:00"]},
                          "echo": {"answer": "at"}, "later": {">": [{"answer": "at"}, {"answer": "hm"}]}},
         "skipRules": {"hm": {"result": "at", "minimum": "11:11:12"}}}
        """)
        var s = Session(task: t, options: SessionOptions(), clock: ManualClock(1_795_392_000_000).clock)
        #expect(throws: StepKitError.self) { try s.setAnswer(try json("\"11:11\"")) }
        try s.setAnswer(try json("\"11:11:11\""))
        try s.goForward()
        #expect(s.currentStep?.identifier == "hm")   // 11:11:11 is not >= 11:11:12
        #expect(throws: StepKitError.self) { try s.setAnswer(try json("\"07:30:00\"")) }
        try s.setAnswer(try json("\"07:30\""))
        try s.goForward()
        let calcs = s.resultJSON().objectValue?["calculations"]?.objectValue
        #expect(calcs?["after"] == .bool(false))
        #expect(calcs?["same"] == .bool(true))
        #expect(calcs?["echo"] == .string("11:11:11"))
        #expect(calcs?["later"] == .bool(true))
    }

    @Test func partialDatesCompareAsFarAsBothGo() throws {
        let t = try compile("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "d", "answerFormat": {"type": "date", "partial": true, "minimumDate": "2020-05-01"}},
          {"type": "completion", "identifier": "end"}],
         "calculations": {"after": {">=": [{"answer": "d"}, "2020-05-01"]}, "before": {"<": [{"answer": "d"}, "2020-05-01"]},
                          "same": {"==": [{"answer": "d"}, "2021"]}, "echo": {"answer": "d"}}}
        """)
        func calcs(_ answer: String) throws -> JSONObject? {
            var s = Session(task: t, options: SessionOptions(), clock: ManualClock(1_795_392_000_000).clock)
            try s.setAnswer(.string(answer))
            return s.resultJSON().objectValue?["calculations"]?.objectValue
        }
        // 2021 is after 2020-05-01 by its year; 2020 is neither before nor after it (FHIRPath: empty).
        #expect(try calcs("2021")?["after"] == .bool(true))
        #expect(try calcs("2021")?["same"] == .bool(true))
        #expect(try calcs("2021")?["echo"] == .string("2021"))
        #expect(try calcs("2020")?["after"] == .bool(false))
        #expect(try calcs("2020")?["before"] == .bool(false))
        #expect(try calcs("2020-06")?["after"] == .bool(true))
        #expect(try calcs("2021-05-03")?["same"] == .bool(false))
        var s = Session(task: t, options: SessionOptions(), clock: ManualClock(1_795_392_000_000).clock)
        #expect(throws: StepKitError.self) { try s.setAnswer(.string("2019")) }     // wholly before the minimum
        #expect(throws: StepKitError.self) { try s.setAnswer(.string("2020-13")) }
        // Without "partial", a year is no date.
        let full = try compile(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "d", "answerFormat": {"type": "date"}}]}"#)
        var plain = Session(task: full, options: SessionOptions(), clock: ManualClock(1_795_392_000_000).clock)
        #expect(throws: StepKitError.self) { try plain.setAnswer(.string("2021")) }
    }

    @Test func newFunctionsAreTypedAtCompileTime() {
        let found = codes("""
        {"a": {"ln": ["x"]}, "b": {"substring": ["abc"]}, "c": {"substring": ["abc", "1"]}, "d": {"upper": [1]},
         "e": {"replace": ["a", "b"]}, "f": {"contains": ["a", 1]}, "g": {"power": [2]}}
        """)
        #expect(found["calculations.a.ln[0]"] == "wrongType")
        #expect(found["calculations.b.substring"] == "wrongArity")
        #expect(found["calculations.c.substring[1]"] == "wrongType")
        #expect(found["calculations.d.upper[0]"] == "wrongType")
        #expect(found["calculations.e.replace"] == "wrongArity")
        #expect(found["calculations.f.contains[1]"] == "wrongType")
        #expect(found["calculations.g.power"] == "wrongArity")
    }

    // MARK: Strings, choices, scores, dates

    @Test func comparisonsOnEveryType() throws {
        #expect(try value(#"{"<": [{"answer": "name"}, "b"]}"#, ["name": "\"a\""]) == .bool(true))
        #expect(try value(#"{"<": [{"answer": "name"}, "B"]}"#, ["name": "\"a\""]) == .bool(false))
        #expect(try value(#"{"==": [{"answer": "yn"}, true]}"#, ["yn": "true"]) == .bool(true))
        #expect(try value(#"{"in": ["mid", {"answer": "mood"}]}"#, ["mood": #"["low", "mid"]"#]) == .bool(true))
        #expect(try value(#"{"in": ["high", {"answer": "mood"}]}"#, ["mood": #"["low", "mid"]"#]) == .bool(false))
        // A single choice equals its value and orders by its position among the choices.
        #expect(try value(#"{"==": [{"answer": "mood"}, "mid"]}"#, ["mood": #"["mid"]"#]) == .bool(true))
        #expect(try value(#"{">": [{"answer": "mood"}, "low"]}"#, ["mood": #"["high"]"#]) == .bool(true))
        #expect(try value(#"{"<": [{"answer": "mood"}, "low"]}"#, ["mood": #"["high"]"#]) == .bool(false))
        #expect(try value(#"{">": [{"answer": "mood"}, "low"]}"#, ["mood": #"["high", "mid"]"#]) == .bool(false))
        #expect(try value(#"{"length": [{"answer": "mood"}]}"#, ["mood": #"["high", "mid"]"#]) == .int(2))
        #expect(try value(#"{"score": "mood"}"#, ["mood": #"["high", "mid"]"#]) == .int(5))
        #expect(try value(#"{"score": "mood"}"#, ["mood": #"["none"]"#]) == .null)
        #expect(try value(#"{"score": "yn"}"#, ["yn": "true"]) == .int(2))
        #expect(try value(#"{"score": "yn"}"#, ["yn": "false"]) == .int(0))
    }

    @Test func dates() throws {
        // 2026-11-23T00:00:00Z.
        let now: Int64 = 1_795_392_000_000
        #expect(try value(#"{"yearsBetween": [{"answer": "dob"}, {"today": []}]}"#, ["dob": "\"2000-11-23\""], now: now) == .int(26))
        #expect(try value(#"{"yearsBetween": [{"answer": "dob"}, {"today": []}]}"#, ["dob": "\"2000-11-24\""], now: now) == .int(25))
        #expect(try value(#"{"daysBetween": [{"date": "2024-02-28"}, {"date": "2024-03-01"}]}"#) == .int(2))
        #expect(try value(#"{"monthsBetween": [{"date": "2000-01-31"}, {"date": "2000-02-29"}]}"#) == .int(0))
        #expect(try value(#"{"monthsBetween": [{"date": "2000-03-31"}, {"date": "2000-01-31"}]}"#) == .int(-2))
        #expect(try value(#"{"addMonths": [{"date": "2024-01-31"}, 1]}"#) == .string("2024-02-29"))
        #expect(try value(#"{"addYears": [{"today": []}, -18]}"#, now: now) == .string("2008-11-23"))
        #expect(try value(#"{"addDays": [{"date": "9999-12-31"}, 1]}"#) == .null)
        #expect(try value(#"{"addYears": [{"date": "2000-01-01"}, 1e300]}"#) == .null)
        #expect(try value(#"{"<": [{"answer": "dob"}, "2001-01-01"]}"#, ["dob": "\"2000-05-05\""]) == .bool(true))
        #expect(try value(#"{"today": []}"#, now: now + 86_399_999) == .string("2026-11-23"))
        #expect(try value(#"{"now": []}"#, now: now) == .string("2026-11-23T00:00:00.000Z"))
    }

    // MARK: Compile-time errors, all at once

    @Test func everyProblemAtOnceWithItsPath() {
        let found = codes("""
        {"u": {"answer": "nope"}, "v": {"calc": "missing"}, "w": {"+": [1, "x"]}, "x": {"if": [true, 1]},
         "y": {"==": [{"answer": "mood"}, "huge"]}, "z": {"score": "b"}, "1bad": 1, "q": {"<": [{"answer": "yn"}, true]},
         "r": {"frobnicate": [1]}, "s": [1, 2], "t": {"round": [1, 9]}, "k": {"answer": "a", "x": 1}}
        """)
        #expect(found["calculations.u.answer"] == "unknownStep")
        #expect(found["calculations.v.calc"] == "unknownCalculation")
        #expect(found["calculations.w[\"+\"][1]"] == "wrongType")
        #expect(found["calculations.x.if"] == "wrongArity")
        #expect(found["calculations.y[\"==\"][1]"] == "notAChoice")
        #expect(found["calculations.z.score"] == "noScores")
        #expect(found["calculations.1bad"] == "invalidName")
        #expect(found["calculations.q[\"<\"][1]"] == "wrongType")
        #expect(found["calculations.r.frobnicate"] == "unknownOperator")
        #expect(found["calculations.s"] == "wrongType")
        #expect(found["calculations.t.round[1]"] == "outOfRange")
        #expect(found["calculations.k"] == "invalidExpression")
        // A predicate must be boolean.
        #expect(codes("{}", extra: #", "skipRules": {"b": {"+": [1, 2]}}"#)["skipRules.b"] == "wrongType")
        #expect(codes("{}", extra: #", "skipRules": {"b": {"answer": "name"}}"#)["skipRules.b"] == "wrongType")
    }

    @Test func cyclesAreRefusedNamingTheCycle() throws {
        do {
            _ = try task(calculations: #"{"a": {"+": [{"calc": "b"}, 1]}, "b": {"*": [{"calc": "a"}, 2]}, "c": {"calc": "c"}, "d": {"calc": "a"}}"#)
            Issue.record("a cycle compiled")
        } catch let error as StepKitError {
            let cycles = error.problems.filter { $0.code == "calculationCycle" }
            #expect(cycles.map(\.message) == ["The calculations read each other in a cycle: a → b → a.",
                                              "The calculations read each other in a cycle: c → c."])
        }
    }

    @Test func budgetsOnNodesAndDepth() throws {
        // 1,000 nodes compile; 1,001 do not.
        let ones = Array(repeating: "1", count: 999).joined(separator: ",")
        #expect(codes(#"{"x": {"sum": [\#(ones)]}}"#).isEmpty)
        #expect(codes(#"{"x": {"sum": [\#(ones), 1]}}"#)["calculations.x.sum[999]"] == "expressionTooLarge")
        // 32 levels compile; 33 do not.
        func nested(_ depth: Int) -> String {
            String(repeating: #"{"-": ["#, count: depth - 1) + "1" + String(repeating: "]}", count: depth - 1)
        }
        #expect(codes(#"{"x": \#(nested(32))}"#).isEmpty)
        #expect(codes(#"{"x": \#(nested(33))}"#).values.contains("expressionTooDeep"))
        #expect(try value(nested(32)) == .int(-1))
    }

    /// Compiling and evaluating the largest, deepest expressions fits a 256 KiB thread stack.
    @Test func deepestExpressionFitsASmallStack() throws {
        final class Box: @unchecked Sendable { var result: JSON?; var text = "" }
        let box = Box()
        let chain = String(repeating: #"{"+": [1, "#, count: 31) + #"{"answer": "a"}"# + String(repeating: "]}", count: 31)
        let shorter = String(repeating: #"{"+": [1, "#, count: 29) + #"{"answer": "a"}"# + String(repeating: "]}", count: 29)
        box.text = #"{"x": \#(chain), "y": {"if": [{">": [{"calc": "x"}, 3]}, {"-": [\#(shorter)]}, 0]}}"#
        #expect(onThread(stack: 256 << 10) {
            box.result = try? .object(calculations(task(calculations: box.text), ["a": "1"]))
        })
        #expect(box.result == .object(["x": .int(32), "y": .int(-30)]))
    }

    // MARK: Calculations in sessions

    @Test func calculationsAreCachedAndRecomputedOnlyWhenTheirInputsChange() throws {
        let t = try task(calculations: #"{"ab": {"+": [{"answer": "a"}, {"answer": "b"}]}, "double": {"*": [{"calc": "ab"}, 2]}, "named": {"concat": ["hi ", {"answer": "name"}]}}"#)
        var s = Session(task: t, options: SessionOptions(), clock: ManualClock(0).clock)
        func computed() -> Int { s.calculationCache.computed.withLock { $0 } }
        _ = s.calculationValues()
        #expect(computed() == 3)
        _ = s.stateJSON(); _ = s.resultJSON()
        #expect(computed() == 3)
        try s.setAnswer(.int(2))
        // `ab` changes (null → null: a alone gives null), `double` is not recomputed.
        _ = s.calculationValues()
        #expect(computed() == 4)
        try s.goForward()
        try s.setAnswer(.int(3))
        #expect(s.calculationValues() == [.number(5), .number(10), .string("hi ")])
        #expect(computed() == 6)
        _ = s.calculationValues()
        #expect(computed() == 6)
    }

    @Test func aStepShowsItsCalculationsAndTheInfoListsThem() throws {
        let t = try compile("""
        {"identifier": "t", "calculations": {"total": {"sum": [{"score": "q"}, 10]}, "band": {"if": [{">=": [{"calc": "total"}, 12]}, "high", "low"]}},
         "steps": [
          {"type": "question", "identifier": "q", "answerFormat": {"type": "textScale", "textChoices": [{"text": "A", "value": "a", "score": 1}, {"text": "B", "value": "b", "score": 2}]}},
          {"type": "instruction", "identifier": "show", "calculations": ["band", "total"]}]}
        """)
        var s = Session(task: t, options: SessionOptions())
        try s.setAnswer(try json(#"["b"]"#))
        try s.goForward()
        let step = s.stateJSON().objectValue?["step"]?.objectValue
        #expect(step?["calculations"] == .object(["band": .string("high"), "total": .int(12)]))
        let info = try t.info.objectValue?["calculations"]
        #expect(info == (try json("""
        [{"name": "total", "type": "number", "dependsOn": {"steps": ["q"], "calculations": []}},
         {"name": "band", "type": "string", "dependsOn": {"steps": [], "calculations": ["total"]}}]
        """)))
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i", "calculations": ["nope"]}]}"#).map(\.code) == ["unknownCalculation"])
    }

    @Test func restoreGivesBackTheSameCalculations() throws {
        let t = try task(calculations: #"{"ab": {"sum": [{"answer": "a"}, {"answer": "b"}, {"score": "yn"}]}, "age": {"yearsBetween": [{"answer": "dob"}, {"today": []}]}}"#)
        let clock = ManualClock(1_795_392_000_000)
        var s = Session(task: t, options: SessionOptions(), clock: clock.clock)
        try s.setAnswer(.int(4)); try s.goForward()
        try s.setAnswer(.int(5)); try s.goForward()
        try s.setAnswer(.bool(true)); try s.goForward()
        try s.setAnswer(.string("1990-06-01")); try s.goForward()
        let saved = Restoration.save(s)
        let text = JSONWriter.string(saved)
        let back = try text.withCString { p in try Restoration.restore(p, task: t, options: SessionOptions(), clock: clock.clock) }
        #expect(back.resultJSON() == s.resultJSON())
        #expect(back.resultJSON().objectValue?["calculations"] == .object(["ab": .int(11), "age": .int(36)]))
        #expect(back.stateJSON() == s.stateJSON())
    }

    @Test func predicatesReadCalculationsAndScores() throws {
        // A skip rule on a score: b is skipped when yn scored 2.
        let t = try task(calculations: #"{"s": {"score": "yn"}}"#, extra: #", "navigationRules": {"yn": {"type": "predicate", "branches": [{"when": {">=": [{"calc": "s"}, 2]}, "destination": "name"}]}}, "skipRules": {"dob": {"all": [{"result": "a", "answered": true}, {"==": [{"answer": "a"}, 1]}]}}"#)
        var s = Session(task: t, options: SessionOptions())
        try s.setAnswer(.int(1)); try s.goForward()
        try s.skip()
        try s.setAnswer(.bool(true)); try s.goForward()
        #expect(s.currentStep?.identifier == "name")
        var u = Session(task: t, options: SessionOptions())
        try u.setAnswer(.int(1)); try u.goForward()
        try u.skip()
        try u.setAnswer(.bool(false)); try u.goForward()
        // dob is skipped by the rule (a == 1), so mood follows.
        #expect(u.currentStep?.identifier == "mood")
    }

    @Test func visibilityMayReadCalculationsThatReadTheSameForm() throws {
        // b shows when x (a's answer) is above 2; y reads b, which reads as unanswered while hidden.
        let t = try compile("""
        {"identifier": "t", "calculations": {"x": {"answer": {"step": "f", "item": "a"}}, "y": {"coalesce": [{"answer": {"step": "f", "item": "b"}}, -1]}},
         "steps": [{"type": "form", "identifier": "f", "formItems": [
           {"identifier": "a", "answerFormat": {"type": "numeric", "style": "integer"}},
           {"identifier": "b", "optional": true, "visibleWhen": {">": [{"calc": "x"}, 2]}, "answerFormat": {"type": "numeric", "style": "integer"}}]}]}
        """)
        var s = Session(task: t, options: SessionOptions())
        try s.setAnswer(try json(#"{"a": 1, "b": 7}"#))
        #expect(s.hiddenItems(step: 0) == ["b"])
        #expect(s.calculationsJSON() == .object(["x": .int(1), "y": .int(-1)]))
        try s.setAnswer(try json(#"{"a": 3}"#))
        #expect(s.hiddenItems(step: 0) == [])
        #expect(s.calculationsJSON() == .object(["x": .int(3), "y": .int(7)]))
    }

    // MARK: Bounds as expressions

    @Test func boundsGivenAsExpressions() throws {
        let t = try compile("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "start", "answerFormat": {"type": "date", "maximumDate": {"today": []}}},
          {"type": "question", "identifier": "end", "answerFormat": {"type": "date", "minimumDate": {"answer": "start"}, "maximumDate": {"addDays": [{"answer": "start"}, 30]}}},
          {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "lo", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0}},
            {"identifier": "hi", "optional": true, "answerFormat": {"type": "numeric", "style": "integer", "minimum": {"answer": {"step": "f", "item": "lo"}}, "maximum": 100}}]}
        ]}
        """)
        var s = Session(task: t, options: SessionOptions(), clock: ManualClock(1_795_392_000_000).clock)
        func refusal(_ answer: String) -> String? {
            do { try s.setAnswer(try json(answer)); return nil } catch let e as StepKitError { return e.problems.first.map { "\($0.code): \($0.message)" } } catch { return "?" }
        }
        #expect(refusal(#""2026-11-24""#) == "outOfRange: Enter a date on or before 2026-11-23.")
        #expect(s.stateJSON().objectValue?["answer"] == .null)
        #expect(refusal(#""2026-11-01""#) == nil)
        try s.goForward()
        #expect(s.stateJSON().objectValue?["step"]?.objectValue?["answerFormat"]?.objectValue?["minimumDate"] == .string("2026-11-01"))
        #expect(refusal(#""2026-10-31""#) == "outOfRange: Enter a date between 2026-11-01 and 2026-12-01.")
        #expect(refusal(#""2026-12-02""#) != nil)
        #expect(refusal(#""2026-12-01""#) == nil)
        try s.goForward()
        // hi's minimum is lo's answer: null (lo unanswered) is no bound.
        #expect(refusal(#"{"hi": -5}"#) == nil)
        #expect(refusal(#"{"lo": 10}"#) == nil)
        #expect(refusal(#"{"hi": 5}"#) == "outOfRange: Enter a whole number between 10 and 100.")
        #expect(refusal(#"{"hi": 10}"#) == nil)
        // The wrong type of bound is a definition error.
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "numeric", "style": "integer", "maximum": {"today": []}}}]}"#).map(\.code) == ["wrongType"])
    }
}
