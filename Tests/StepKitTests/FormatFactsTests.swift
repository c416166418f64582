import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The facts each answer format owns (issue 28): what the checker, the expression compiler and
/// the bounds read from the format. Expected values come from the formats' definitions in
/// docs/task-format.md ("Answer formats"), not from the engine.
@Suite struct FormatFactsTests {
    private func rules(_ format: String) throws -> any AnswerFormatRules {
        let task = try questionTask(format)
        guard let rules = task.steps.first?.format()?.rules else { throw StepKitError(.internal, code: "noFormat", message: format) }
        return rules
    }

    private func range(_ format: String) throws -> ValueRange? { try rules(format).valueRange }

    /// 2020-01-01 and 2020-12-31 at 00:00 UTC, in milliseconds since 1970 (18262 and 18627 days).
    private static let newYear2020 = 18_262.0 * 86_400_000
    private static let newYearsEve2020 = 18_627.0 * 86_400_000

    @Test func eachFormatStatesTheRangeItsDefinitionGives() throws {
        // Bounds the definition gives.
        #expect(try range(#"{"type": "scale", "minimum": 1, "maximum": 5}"#) == ValueRange(minimum: 1, maximum: 5))
        #expect(try range(#"{"type": "continuousScale", "minimum": -2.5, "maximum": 7.5, "maximumFractionDigits": 1}"#) == ValueRange(minimum: -2.5, maximum: 7.5))
        #expect(try range(#"{"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 24}"#) == ValueRange(minimum: 0, maximum: 24))
        #expect(try range(#"{"type": "numeric", "style": "decimal"}"#) == ValueRange(minimum: nil, maximum: nil))
        // An integer is a whole number below 9×10^15 in magnitude.
        #expect(try range(#"{"type": "numeric", "style": "integer"}"#) == ValueRange(minimum: -8_999_999_999_999_999, maximum: 8_999_999_999_999_999))
        #expect(try range(#"{"type": "numeric", "style": "integer", "minimum": 18}"#) == ValueRange(minimum: 18, maximum: 8_999_999_999_999_999))
        #expect(try range(#"{"type": "age", "minimumAge": 18, "maximumAge": 90}"#) == ValueRange(minimum: 18, maximum: 90))
        #expect(try range(#"{"type": "timeInterval", "maximumInterval": 3600}"#) == ValueRange(minimum: 0, maximum: 3600))
        // The documented defaults where the definition leaves a bound out.
        #expect(try range(#"{"type": "height"}"#) == ValueRange(minimum: 0, maximum: 300))
        #expect(try range(#"{"type": "weight"}"#) == ValueRange(minimum: 0, maximum: 657))
        #expect(try range(#"{"type": "age"}"#) == ValueRange(minimum: 0, maximum: 125))
        #expect(try range(#"{"type": "ses"}"#) == ValueRange(minimum: 0, maximum: 9))
        #expect(try range(#"{"type": "timeInterval"}"#) == ValueRange(minimum: 0, maximum: 86_340))
        // Times of day as seconds since midnight: 23:59, 23:59:59, and 23:45 on a 15-minute interval.
        #expect(try range(#"{"type": "timeOfDay"}"#) == ValueRange(minimum: 0, maximum: 23 * 3600 + 59 * 60))
        #expect(try range(#"{"type": "timeOfDay", "seconds": true}"#) == ValueRange(minimum: 0, maximum: 23 * 3600 + 59 * 60 + 59))
        #expect(try range(#"{"type": "timeOfDay", "minuteInterval": 15}"#) == ValueRange(minimum: 0, maximum: 23 * 3600 + 45 * 60))
        // Dates as instants.
        #expect(try range(#"{"type": "date", "minimumDate": "2020-01-01", "maximumDate": "2020-12-31"}"#)
                == ValueRange(minimum: Self.newYear2020, maximum: Self.newYearsEve2020))
        #expect(try range(#"{"type": "date", "minimumDate": "2020-01-01"}"#) == ValueRange(minimum: Self.newYear2020, maximum: nil))
        // No order, or nothing known: a partial date may lie partly outside its limits.
        #expect(try range(#"{"type": "date"}"#) == nil)
        #expect(try range(#"{"type": "date", "minimumDate": "2020-01-01", "partial": true}"#) == nil)
        #expect(try range(#"{"type": "date", "minimumDate": {"today": []}}"#) == nil)
        #expect(try range(#"{"type": "numeric", "style": "decimal", "minimum": {"+": [1, 2]}, "maximum": 10}"#) == ValueRange(minimum: nil, maximum: 10))
        for format in [#"{"type": "boolean"}"#, #"{"type": "text"}"#, #"{"type": "email"}"#, #"{"type": "location"}"#,
                       #"{"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": 1}]}"#] {
            #expect(try range(format) == nil, "\(format)")
        }
    }

    @Test func eachFormatStatesItsExpressionTypeBoundKeysAndScores() throws {
        #expect(try rules(#"{"type": "date"}"#).expressionType == .date)
        #expect(try rules(#"{"type": "date", "style": "dateTime"}"#).expressionType == .dateTime)
        #expect(try rules(#"{"type": "timeOfDay"}"#).expressionType == .time)
        for number in [#"{"type": "scale", "minimum": 0, "maximum": 10}"#, #"{"type": "numeric", "style": "integer"}"#,
                       #"{"type": "timeInterval"}"#, #"{"type": "ses"}"#, #"{"type": "age"}"#, #"{"type": "height"}"#] {
            #expect(try rules(number).expressionType == .number, "\(number)")
        }
        #expect(try rules(#"{"type": "text"}"#).expressionType == .string)
        #expect(try rules(#"{"type": "boolean"}"#).expressionType == .boolean)
        #expect(try rules(#"{"type": "location"}"#).expressionType == nil)

        // Which bounds may be written as expressions: numeric's minimum/maximum, date's minimumDate/maximumDate.
        #expect(try rules(#"{"type": "numeric", "style": "decimal"}"#).boundKeys == BoundKeys(minimum: "minimum", maximum: "maximum", type: .number))
        #expect(try rules(#"{"type": "date", "style": "dateTime"}"#).boundKeys == BoundKeys(minimum: "minimumDate", maximum: "maximumDate", type: .dateTime))
        #expect(try rules(#"{"type": "scale", "minimum": 0, "maximum": 10}"#).boundKeys == nil)
        #expect(problems(#"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "scale", "minimum": 0, "maximum": {"today": []}}}]}"#).isEmpty == false)

        let yesNo = try rules(#"{"type": "boolean", "yesScore": 2, "noScore": 0}"#).scores
        #expect(yesNo.yes == 2 && yesNo.no == 0)
        let choice = try rules(#"{"type": "textChoice", "style": "multipleChoice", "textChoices": [{"text": "A", "value": "a", "score": 1}, {"text": "B", "value": "b"}, {"text": "C", "value": "c", "score": 3}]}"#).scores
        #expect(choice.choices.map(\.score) == [1, 3])
        #expect(try rules(#"{"type": "text"}"#).scores.isEmpty)

        // The choices an answer selects from, in the definition's order.
        let several = try rules(#"{"type": "textChoice", "style": "multipleChoice", "textChoices": [{"text": "A", "value": "a"}, {"text": "B", "value": 2}]}"#)
        #expect(several.choiceOptions?.map(\.value) == [.string("a"), .int(2)])
        #expect(several.allowsMultipleChoices)
        #expect(try rules(#"{"type": "textScale", "textChoices": [{"text": "Low", "value": 1}, {"text": "High", "value": 2}]}"#).allowsMultipleChoices == false)
        #expect(try rules(#"{"type": "text"}"#).choiceOptions == nil)
    }

    /// A task whose step `q` has `format`, then `a`, `b` and `done`; `a` is skipped by `skip`.
    private func skipFindings(_ format: String, _ skip: String) throws -> [String] {
        try findings("""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "q", "answerFormat": \(format)},
          {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"},
          {"type": "completion", "identifier": "done"}],
         "skipRules": {"a": \(skip)}}
        """).map(\.code)
    }

    /// The checker read a format's range in two places that disagreed: predicates knew seven
    /// formats, expressions three (scale, continuous scale, numeric). Both read the format's
    /// range now, so a comparison past the documented top of each format never holds, written
    /// either way, and one just inside it may.
    @Test func predicatesAndExpressionsReadOneRange() throws {
        let tops: [(format: String, top: Int)] = [
            (#"{"type": "age"}"#, 125), (#"{"type": "ses"}"#, 9), (#"{"type": "timeInterval"}"#, 86_340),
            (#"{"type": "height"}"#, 300), (#"{"type": "weight"}"#, 657), (#"{"type": "scale", "minimum": 1, "maximum": 5}"#, 5),
            (#"{"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 24}"#, 24),
        ]
        for (format, top) in tops {
            #expect(try skipFindings(format, #"{"result": "q", "exclusiveMinimum": \#(top)}"#) == ["skipRuleNeverApplies"], "\(format)")
            #expect(try skipFindings(format, #"{">": [{"answer": "q"}, \#(top)]}"#) == ["skipRuleNeverApplies"], "\(format)")
            #expect(try skipFindings(format, #"{"<": [\#(top), {"answer": "q"}]}"#) == ["skipRuleNeverApplies"], "\(format)")
            #expect(try skipFindings(format, #"{"==": [{"answer": "q"}, \#(top + 1)]}"#) == ["skipRuleNeverApplies"], "\(format)")
            #expect(try skipFindings(format, #"{"result": "q", "exclusiveMinimum": \#(top - 1)}"#).isEmpty, "\(format)")
            #expect(try skipFindings(format, #"{">": [{"answer": "q"}, \#(top - 1)]}"#).isEmpty, "\(format)")
        }
    }

    /// Dates and times of day have a range too: their limits (a date's `minimumDate` and
    /// `maximumDate`; a time's last minute on its interval).
    @Test func datesAndTimesOfDayHaveTheirLimitsAsRange() throws {
        let year = #"{"type": "date", "minimumDate": "2020-01-01", "maximumDate": "2020-12-31"}"#
        #expect(try skipFindings(year, #"{"result": "q", "maximum": "2019-12-31"}"#) == ["skipRuleNeverApplies"])
        #expect(try skipFindings(year, #"{"result": "q", "equals": "2021-01-01"}"#) == ["skipRuleNeverApplies"])
        #expect(try skipFindings(year, #"{"result": "q", "maximum": "2020-01-01"}"#).isEmpty)
        // A partial answer may lie partly before the minimum: no claim.
        #expect(try skipFindings(#"{"type": "date", "minimumDate": "2020-01-01", "partial": true}"#, #"{"result": "q", "maximum": "2019-12-31"}"#).isEmpty)
        let quarters = #"{"type": "timeOfDay", "minuteInterval": 15}"#
        #expect(try skipFindings(quarters, #"{"result": "q", "minimum": "23:50"}"#) == ["skipRuleNeverApplies"])
        #expect(try skipFindings(quarters, #"{"result": "q", "minimum": "23:45"}"#).isEmpty)
    }
}

/// The one decision whether an answer is accepted (`Task.accept`, issue 28): its four parts,
/// each refusing with its own message, what `set_answer` runs and what restore replays.
@Suite struct AnswerAcceptanceTests {
    private static let definition = """
    {"identifier": "t", "steps": [
      {"type": "question", "identifier": "start", "answerFormat": {"type": "date"}},
      {"type": "question", "identifier": "end", "answerFormat": {"type": "date", "minimumDate": {"answer": "start"}}},
      {"type": "question", "identifier": "code", "answerFormat": {"type": "text", "maximumLength": 100}},
      {"type": "form", "identifier": "account", "formItems": [
        {"identifier": "email", "answerFormat": {"type": "email"}},
        {"identifier": "again", "answerFormat": {"type": "confirmText", "originalItemIdentifier": "email", "errorMessage": "Type the same address twice."}}]},
      {"type": "question", "identifier": "score", "answerFormat": {"type": "scale", "minimum": 0, "maximum": 10}},
      {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}],
     "skipRules": {"a": {"result": "code", "matches": "^(a+)+$"}}}
    """

    /// A text a pattern with nested repetition cannot check within its bound (RegexTests).
    private static let tooRepetitive = String(repeating: "a", count: 20) + "!"

    private func refusal(_ task: Task, _ step: String, _ answer: String, previous: String? = nil,
                         parts: AcceptanceParts = .setAnswer, answers: [String: String] = [:]) throws -> String? {
        guard let index = task.stepIndex[step], let s = task.step(at: index) else { return "no step" }
        var session = Session(task: task, options: SessionOptions())
        for (id, value) in answers { if let i = task.stepIndex[id] { session.answers[i] = try json(value) } }
        let given = try json(answer), before = try previous.map(json)
        let accepted = task.accept(given, to: s, at: index, previous: before, parts: parts) { kept in
            var trial = session
            trial.answers[index] = kept
            return trial
        }
        guard !accepted.problems.isEmpty else { return nil }
        return accepted.problems.map { "\($0.code): \($0.message)" }.joined(separator: " | ")
    }

    @Test func eachPartRefusesWithItsOwnMessage() throws {
        let task = try compile(Self.definition)
        // The format.
        #expect(try refusal(task, "score", "11") == "outOfRange: Enter a whole number between 0 and 10.")
        // The confirm text: the definition's errorMessage, once the original has an answer.
        #expect(try refusal(task, "account", #"{"again": "b@example.org"}"#, previous: #"{"email": "a@example.org"}"#)
                == "confirmationMismatch: Type the same address twice.")
        #expect(try refusal(task, "account", #"{"again": "b@example.org"}"#) == nil)
        // The match bounds of the conditions that read the answer.
        #expect(try refusal(task, "code", "\"\(Self.tooRepetitive)\"")
                == "patternTooComplex: This text is too long or too repetitive to check against the expected pattern; shorten it.")
        #expect(try refusal(task, "code", #""aaa""#) == nil)
        // The bounds written as expressions, on the answers as they will be.
        #expect(try refusal(task, "end", #""2026-10-31""#, answers: ["start": #""2026-11-01""#])
                == "outOfRange: Enter a date on or after 2026-11-01.")
        #expect(try refusal(task, "end", #""2026-11-01""#, answers: ["start": #""2026-11-01""#]) == nil)
        // The parts restore leaves out pass what only they refuse.
        #expect(try refusal(task, "end", #""2026-10-31""#, parts: .restore, answers: ["start": #""2026-11-01""#]) == nil)
        #expect(try refusal(task, "account", #"{"again": "b@example.org"}"#, previous: #"{"email": "a@example.org"}"#, parts: .restore) == nil)
        // ...and not what the format or the match bounds refuse.
        #expect(try refusal(task, "score", "11", parts: .restore) != nil)
        #expect(try refusal(task, "code", "\"\(Self.tooRepetitive)\"", parts: .restore) != nil)
    }

    @Test func setAnswerRefusesThroughTheOneDecisionAndChangesNothing() throws {
        let task = try compile(Self.definition)
        var s = Session(task: task, options: SessionOptions())
        func refusal(_ answer: String) -> String? {
            do { try s.setAnswer(try json(answer)); return nil } catch let e as StepKitError {
                #expect(e.status == .answer)
                return e.problems.first.map { "\($0.code): \($0.message)" }
            } catch { return "?" }
        }
        #expect(refusal(#""2026-11-01""#) == nil)
        try s.goForward()
        #expect(refusal(#""2026-10-31""#) == "outOfRange: Enter a date on or after 2026-11-01.")
        #expect(s.answers[1] == nil)
        #expect(refusal(#""2026-11-02""#) == nil)
        try s.goForward()
        #expect(refusal("\"\(Self.tooRepetitive)\"") == "patternTooComplex: This text is too long or too repetitive to check against the expected pattern; shorten it.")
        #expect(s.answers[2] == nil)
        #expect(refusal(#""aaa""#) == nil)
        try s.goForward()
        #expect(refusal(#"{"email": "a@example.org"}"#) == nil)
        #expect(refusal(#"{"again": "b@example.org"}"#) == "confirmationMismatch: Type the same address twice.")
        #expect(s.answers[3]?.objectValue?["again"] == nil)
    }

    private func restore(_ saved: JSON, _ task: Task) throws(StepKitError) -> Session {
        let text = JSONWriter.string(saved)
        let result = text.withCString { pointer in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: task, options: SessionOptions(), clock: .system) }
        }
        return try result.get()
    }

    /// `document` with `answer` saved in place of `old` (every copy of it), signed again as a
    /// writer of unkeyed data could.
    private func forged(_ document: JSON, replacing old: String, with answer: String) throws -> JSON {
        guard case .object(var object) = document else { return document }
        object["integrity"] = nil
        let text = JSONWriter.string(.object(object))
        var parts = text.split(separator: Substring(old), omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count > 1, "the saved document has no \(old)")
        let joined = parts.removeFirst() + parts.map { answer + $0 }.joined()
        guard case .object(var changed) = try json(joined) else { return document }
        let (algorithm, digest) = try Restoration.sign(JSONWriter.string(.object(changed)), key: nil)
        changed["integrity"] = .object(JSONObject(["algorithm": .string(algorithm), "digest": .string(digest)]))
        return .object(changed)
    }

    /// Restore replays the format and the match bounds on every saved answer ("damaged" with
    /// the part's message), and not the confirm text of a draft nor the expression bounds:
    /// those held when the answer was set and may not now (include/stepkit.h,
    /// stepkit_session_restore()).
    @Test func restoreReplaysWhatDependsOnlyOnTheTaskAndTheAnswer() throws {
        let task = try compile(Self.definition)
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(try json(#""2026-11-01""#))
        try s.goForward()
        try s.setAnswer(try json(#""2026-11-02""#))
        // Back to the start, moved past the end's answer: the end's bound no longer holds, and
        // the end's answer was rightly accepted.
        try s.goBackward()
        try s.setAnswer(try json(#""2026-11-20""#))
        try s.goForward()
        try s.goForward()
        try s.setAnswer(try json(#""aaa""#))
        try s.goForward()
        // A draft whose confirmation its original has since moved away from.
        try s.setAnswer(try json(#"{"again": "b@example.org"}"#))
        try s.setAnswer(try json(#"{"email": "a@example.org"}"#))
        let saved = Restoration.save(s)
        let back = try restore(saved, task)
        #expect(back.answers[1] == .string("2026-11-02"))
        #expect(back.answers[3] == (try json(#"{"again": "b@example.org", "email": "a@example.org"}"#)))
        #expect(Restoration.save(back) == saved)

        func refusal(_ document: JSON) -> String? {
            do throws(StepKitError) { _ = try restore(document, task); return nil } catch {
                #expect(error.status == .restore)
                return error.problems.first.map { "\($0.code): \($0.message)" }
            }
        }
        #expect(refusal(try forged(saved, replacing: #""aaa""#, with: "\"\(Self.tooRepetitive)\""))
                == "damaged: A saved answer does not fit the task: This text is too long or too repetitive to check against the expected pattern; shorten it.")
        #expect(refusal(try forged(saved, replacing: #""aaa""#, with: "\"\(String(repeating: "x", count: 101))\""))
                == "damaged: A saved answer does not fit the task: Enter at most 100 characters.")
    }

    /// Migration keeps what passes the same parts on the new version, item by item: a text the
    /// new version's `matches` condition cannot check within its bound is dropped and listed,
    /// as set_answer would refuse it there.
    @Test func migrationKeepsWhatTheNewVersionWouldAccept() throws {
        func version(_ skip: String) throws -> Task {
            try compile("""
            {"identifier": "t", "steps": [
              {"type": "question", "identifier": "code", "answerFormat": {"type": "text"}},
              {"type": "form", "identifier": "f", "formItems": [
                {"identifier": "note", "answerFormat": {"type": "text"}},
                {"identifier": "other", "answerFormat": {"type": "text"}}]},
              {"type": "instruction", "identifier": "a"}, {"type": "instruction", "identifier": "b"}]\(skip)}
            """)
        }
        let v1 = try version("")
        var s = Session(task: v1, options: SessionOptions())
        try s.setAnswer(.string(Self.tooRepetitive))
        try s.goForward()
        try s.setAnswer(try json(#"{"note": "\#(Self.tooRepetitive)", "other": "fine"}"#))
        let saved = Restoration.save(s)
        let v2 = try version(#", "skipRules": {"a": {"any": [{"result": "code", "matches": "^(a+)+$"}, {"result": {"step": "f", "item": "note"}, "matches": "^(a+)+$"}]}}"#)
        var options = SessionOptions()
        options.migrate = true
        let text = JSONWriter.string(saved)
        let migrated = try text.withCString { pointer in
            Result { () throws(StepKitError) -> Session in try Restoration.restore(pointer, task: v2, options: options, clock: .system) }
        }.get()
        let report = try #require(migrated.restoreReport.objectValue)
        let dropped = report["dropped"]?.arrayValue?.compactMap { $0.objectValue } ?? []
        #expect(dropped.map { [$0["step"]?.stringValue, $0["item"]?.stringValue] } == [["code", nil], ["f", "note"]])
        #expect(dropped.allSatisfy { $0["reason"]?.stringValue == Restoration.pastMatchBound })
        #expect(report["kept"]?.arrayValue?.count == 1)
        #expect(migrated.answers[1] == (try json(#"{"other": "fine"}"#)))
        #expect(migrated.answers[0] == nil)
    }
}
