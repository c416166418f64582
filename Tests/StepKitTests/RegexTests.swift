import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Bounded regular expressions (issue 11, part B): PCRE2 with a bound on every match, patterns
/// with ICU's everyday syntax, answers past the bound refused, condition outcomes remembered.
@Suite struct RegexTests {
    @Test func icuStyleSyntaxCompilesAndMatches() throws {
        #expect(try Pattern(#"^\d{3}-\d{4}$"#).matches("555-1234"))
        #expect(try Pattern(#"^\p{L}+$"#).matches("Zoë"))
        #expect(try Pattern(#"(?i)^yes$"#).matches("YES"))
        #expect(try Pattern(#"^(?=.*[0-9])[a-z0-9]+$"#).matches("abc1"))
        #expect(try !Pattern(#"^(?=.*[0-9])[a-z0-9]+$"#).matches("abc"))
        #expect(try Pattern(#"^(a)\1$"#).matches("aa"))
        #expect(try Pattern("a|b").matches("xxb"))
        // Unicode-aware classes, as in ICU: \d matches any decimal digit, \w any letter.
        #expect(try Pattern(#"^\d+$"#).matches("٣٤"))
        #expect(try Pattern(#"^\w+$"#).matches("日本"))
        // `.` stops at any line terminator, as ICU's does.
        #expect(try !Pattern("^a.b$").matches("a\u{2028}b"))
    }

    @Test func invalidPatternsAreRefusedWithTheReason() {
        #expect(throws: RegularExpression.CompileError.self) { try Pattern("(a") }
        #expect(throws: RegularExpression.CompileError.self) { try Pattern(String(repeating: "a", count: 5000)) }
        #expect(throws: RegularExpression.CompileError.self) { try Pattern(String(repeating: "(", count: 100) + String(repeating: ")", count: 100)) }
        // A pattern the wrapping could not close is refused, never matched differently.
        #expect(throws: RegularExpression.CompileError.self) { try Pattern(#"\Qabc"#) }
    }

    @Test func pathologicalMatchesStopAtTheBound() throws {
        let nested = try Pattern("^(a+)+$")
        #expect(nested.match(String(repeating: "a", count: 20) + "!") == .tooComplex)
        #expect(nested.match(String(repeating: "a", count: 20)) == .match)
        let digits = try Pattern("[0-9]+z")
        #expect(digits.match(String(repeating: "1", count: 16_384) + "!z") == .tooComplex)
        #expect(digits.match("123z") == .match)
        #expect(digits.match(String(repeating: "1", count: 16_384)) != .match)
        // A simple pattern on a long, clean answer is not refused.
        #expect(try Pattern("^[a-z]+$").match(String(repeating: "a", count: 1 << 20)) == .match)
    }

    @Test func anAnswerPastTheBoundIsRefused() throws {
        let task = try questionTask(#"{"type": "text", "validationRegularExpression": "^(a+)+$", "invalidMessage": "Only a."}"#)
        #expect(try check(task, #""aaaa""#).kept == .string("aaaa"))
        #expect(try check(task, #""aab""#).rejectionCode == "patternMismatch")
        #expect(try check(task, "\"" + String(repeating: "a", count: 20) + "!\"").rejectionCode == "patternTooComplex")
    }

    @Test func maximumLengthBoundsBytesToo() throws {
        let task = try questionTask(#"{"type": "text", "maximumLength": 1}"#)
        #expect(try check(task, #""é""#).kept == .string("é"))
        // One character carrying 10,000 combining marks: one grapheme cluster, 20,001 bytes.
        let marked = "e" + String(repeating: "\u{301}", count: 10_000)
        #expect(try check(task, "\"" + marked + "\"").rejectionCode == "tooLong")
    }

    @Test func aMatchesConditionMatchesEachAnswerOnce() throws {
        let task = try TaskCompiler.compile(try JSONParser.parse(#"""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "q", "answerFormat": {"type": "text"}},
          {"type": "instruction", "identifier": "a"},
          {"type": "instruction", "identifier": "b"}],
         "navigationRules": {"q": {"type": "predicate", "branches": [{"when": {"result": "q", "matches": "^(a+)+$"}, "destination": "b"}]}}}
        """#))
        var session = Session(task: task, options: SessionOptions())
        // Too complex for the condition's bound: refused when given, the answer unchanged.
        #expect(throws: StepKitError.self) { try session.setAnswer(.string(String(repeating: "a", count: 20) + "!")) }
        #expect(session.answers[0] == nil)
        try session.setAnswer(.string("aaa"))
        let entries = task.rules.conditionPatterns.byStep[0] ?? []
        #expect(entries.count == 1)
        // The outcome is remembered: the pattern answers from its memo for the same text.
        #expect(entries.first?.pattern.match("aaa") == .match)
    }
}
