import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

@Suite struct AnswerFormatTests {
    @Test func booleanAndDontKnow() throws {
        let task = try questionTask(#"{"type": "boolean", "showDontKnowButton": true}"#)
        #expect(try check(task, "true").kept == .bool(true))
        #expect(try check(task, "1").rejectionCode == "wrongType")
        #expect(try check(task, #"{"dontKnow": true}"#).kept == AnswerFormat.dontKnow)
        #expect(try check(task, #"{"dontKnow": false}"#).rejectionCode == "wrongType")
        let strict = try questionTask(#"{"type": "boolean"}"#)
        #expect(try check(strict, #"{"dontKnow": true}"#).rejectionCode == "dontKnowNotAllowed")
        #expect(try check(strict, "null").kept == .some(nil))
    }

    @Test func scaleStaysOnItsSteps() throws {
        let task = try questionTask(#"{"type": "scale", "minimum": 0, "maximum": 10, "step": 2}"#)
        #expect(try check(task, "4").kept == .int(4))
        #expect(try check(task, "5").rejectionCode == "notOnScale")
        #expect(try check(task, "12").rejectionCode == "outOfRange")
        #expect(try check(task, "2.5").rejectionCode == "notAnInteger")
        #expect(try check(task, "\"4\"").rejectionCode == "wrongType")
    }

    @Test func continuousScaleFractionDigits() throws {
        let task = try questionTask(#"{"type": "continuousScale", "minimum": 0, "maximum": 1, "maximumFractionDigits": 2}"#)
        #expect(try check(task, "0.25").kept == .double(0.25))
        #expect(try check(task, "0.1").kept == .double(0.1))
        #expect(try check(task, "0.125").rejectionCode == "tooPrecise")
        #expect(try check(task, "1.5").rejectionCode == "outOfRange")
    }

    @Test func numericMessagesReadAsTheIssueSays() throws {
        let task = try questionTask(#"{"type": "numeric", "style": "integer", "minimum": 18, "maximum": 90, "unit": "years"}"#)
        guard case .failure(let e) = try check(task, "17") else { Issue.record("accepted 17"); return }
        #expect(e.message == "Enter a whole number between 18 and 90.")
        #expect(try check(task, "18.0").kept == .int(18))
        #expect(try check(task, "1e300").rejectionCode == "outOfRange")
        let decimal = try questionTask(#"{"type": "numeric", "style": "decimal", "minimum": 0}"#)
        #expect(try check(decimal, "-1").rejectionCode == "outOfRange")
        #expect(try check(decimal, "3.75").kept == .double(3.75))
        let unbounded = try questionTask(#"{"type": "numeric", "style": "integer"}"#)
        #expect(try check(unbounded, "1e300").rejectionCode == "outOfRange")
    }

    @Test func singleAndMultipleChoices() throws {
        let single = try questionTask(#"{"type": "textChoice", "style": "singleChoice", "textChoices": [{"text": "A", "value": "a"}, {"text": "B", "value": 2}]}"#)
        #expect(try check(single, #"["a"]"#).kept == .array([.string("a")]))
        #expect(try check(single, "[2.0]").kept == .array([.int(2)]))
        #expect(try check(single, #"["a", 2]"#).rejectionCode == "tooManyChoices")
        #expect(try check(single, #"["c"]"#).rejectionCode == "unknownChoice")
        #expect(try check(single, #""a""#).rejectionCode == "wrongType")
        #expect(try check(single, "[]").kept == .some(nil))
    }

    @Test func exclusiveChoicesClearTheOthers() throws {
        let task = try questionTask("""
        {"type": "textChoice", "style": "multipleChoice", "textChoices": [
          {"text": "A", "value": "a"}, {"text": "B", "value": "b"}, {"text": "None", "value": "none", "exclusive": true}]}
        """)
        // Newly selecting the exclusive choice clears the others.
        #expect(try check(task, #"["a", "b", "none"]"#, previous: #"["a", "b"]"#).kept == .array([.string("none")]))
        // Newly selecting another choice clears the exclusive one.
        #expect(try check(task, #"["none", "a"]"#, previous: #"["none"]"#).kept == .array([.string("a")]))
        // Both at once is ambiguous.
        #expect(try check(task, #"["a", "none"]"#).rejectionCode == "exclusiveChoice")
        #expect(try check(task, #"["a", "a"]"#).rejectionCode == "duplicateChoice")
    }

    @Test func otherChoiceWithText() throws {
        let task = try questionTask("""
        {"type": "textChoice", "style": "singleChoice", "textChoices": [
          {"text": "A", "value": "a"}, {"text": "Other", "value": "other", "other": true, "textViewInputOptional": false}]}
        """)
        #expect(try check(task, #"[{"value": "other", "text": "Migraine"}]"#).kept == .array([.object(["value": .string("other"), "text": .string("Migraine")])]))
        #expect(try check(task, #"["other"]"#).rejectionCode == "missingOtherText")
        #expect(try check(task, #"[{"value": "a", "text": "x"}]"#).rejectionCode == "notOtherChoice")
    }

    @Test func pickersAndScales() throws {
        let picker = try questionTask(#"{"type": "valuePicker", "textChoices": [{"text": "1", "value": 1}, {"text": "2", "value": 2}]}"#)
        #expect(try check(picker, "[2]").kept == .array([.int(2)]))
        let multi = try questionTask(#"{"type": "multipleValuePicker", "valuePickers": [{"textChoices": [{"text": "1", "value": 1}]}, {"textChoices": [{"text": "x", "value": "x"}]}]}"#)
        #expect(try check(multi, #"[1, "x"]"#).kept == .array([.int(1), .string("x")]))
        #expect(try check(multi, "[1]").rejectionCode == "wrongType")
        #expect(try check(multi, #"["x", 1]"#).rejectionCode == "unknownChoice")
        let textScale = try questionTask(#"{"type": "textScale", "textChoices": [{"text": "Low", "value": "low"}, {"text": "High", "value": "high"}], "defaultIndex": 1}"#)
        #expect(try check(textScale, #"["high"]"#).kept == .array([.string("high")]))
        let image = try questionTask(#"{"type": "imageChoice", "imageChoices": [{"normalImage": "sun", "value": "sun"}, {"normalImage": "rain", "value": "rain"}]}"#)
        #expect(try check(image, #"["rain"]"#).kept == .array([.string("rain")]))
    }

    @Test func textEmailAndPatterns() throws {
        let text = try questionTask(#"{"type": "text", "maximumLength": 5, "multipleLines": false, "validationRegularExpression": "^[a-z]+$", "invalidMessage": "Lower-case letters only."}"#)
        #expect(try check(text, #""abc""#).kept == .string("abc"))
        #expect(try check(text, #""abcdef""#).rejectionCode == "tooLong")
        #expect(try check(text, #""a\nb""#).rejectionCode == "multipleLines")
        guard case .failure(let e) = try check(text, #""ABC""#) else { Issue.record("accepted"); return }
        #expect(e.message == "Lower-case letters only.")
        #expect(try check(text, #""""#).kept == .some(nil))
        let email = try questionTask(#"{"type": "email"}"#)
        #expect(try check(email, #""ada@example.org""#).kept == .string("ada@example.org"))
        #expect(try check(email, #""ada@""#).rejectionCode == "invalidEmail")
    }

    @Test func datesAndTimes() throws {
        let date = try questionTask(#"{"type": "date", "minimumDate": "2000-01-01", "maximumDate": "2026-12-31"}"#)
        #expect(try check(date, #""2026-11-22""#).kept == .string("2026-11-22"))
        #expect(try check(date, #""1999-12-31""#).rejectionCode == "outOfRange")
        #expect(try check(date, #""2026-11-22T10:00:00Z""#).rejectionCode == "invalidDate")
        let dateTime = try questionTask(#"{"type": "date", "style": "dateTime", "minimumDate": "2026-01-01T00:00:00Z", "minuteInterval": 15}"#)
        #expect(try check(dateTime, #""2026-01-01T01:15:00+01:00""#).kept == .string("2026-01-01T01:15:00+01:00"))
        #expect(try check(dateTime, #""2026-01-01T00:30:00+01:00""#).rejectionCode == "outOfRange")
        #expect(try check(dateTime, #""2026-01-01T10:10:00Z""#).rejectionCode == "notOnStep")
        let time = try questionTask(#"{"type": "timeOfDay", "minuteInterval": 5}"#)
        #expect(try check(time, #""07:45""#).kept == .string("07:45"))
        #expect(try check(time, #""07:46""#).rejectionCode == "notOnStep")
        #expect(try check(time, #""7:45""#).rejectionCode == "invalidTime")
        let interval = try questionTask(#"{"type": "timeInterval", "step": 5, "maximumInterval": 7200}"#)
        #expect(try check(interval, "900").kept == .int(900))
        #expect(try check(interval, "960").rejectionCode == "notOnStep")
        #expect(try check(interval, "-300").rejectionCode == "outOfRange")
    }

    @Test func measurementsAgeSesAndLocation() throws {
        #expect(try check(try questionTask(#"{"type": "height"}"#), "172.5").kept == .double(172.5))
        #expect(try check(try questionTask(#"{"type": "height"}"#), "400").rejectionCode == "outOfRange")
        #expect(try check(try questionTask(#"{"type": "weight", "maximumValue": 200}"#), "250").rejectionCode == "outOfRange")
        #expect(try check(try questionTask(#"{"type": "age", "minimumAge": 18}"#), "17").rejectionCode == "outOfRange")
        #expect(try check(try questionTask(#"{"type": "age"}"#), "44").kept == .int(44))
        #expect(try check(try questionTask(#"{"type": "ses"}"#), "9").kept == .int(9))
        #expect(try check(try questionTask(#"{"type": "ses"}"#), "10").rejectionCode == "outOfRange")
        let location = try questionTask(#"{"type": "location"}"#)
        #expect(try check(location, #"{"latitude": 52.5, "longitude": 13.4, "address": "Berlin"}"#).kept != nil)
        #expect(try check(location, #"{"latitude": 95, "longitude": 13.4}"#).rejectionCode == "outOfRange")
        #expect(try check(location, #"{"latitude": 52.5}"#).rejectionCode == "missingKey")
        #expect(try check(location, #"{"latitude": 52.5, "longitude": 1, "city": "x"}"#).rejectionCode == "unknownKey")
    }

    /// The state's step carries the effective format: every default the engine applies, so a
    /// host needs none of its own. Each would be missing here if its `defaults` were dropped.
    @Test func theStateGivesTheEffectiveFormat() throws {
        let task = try compile(#"""
        {"identifier": "t", "steps": [
          {"type": "question", "identifier": "h", "answerFormat": {"type": "height", "maximumValue": 250}},
          {"type": "form", "identifier": "f", "formItems": [
            {"sectionTitle": "S"},
            {"identifier": "s", "answerFormat": {"type": "ses"}},
            {"identifier": "t", "answerFormat": {"type": "timeInterval"}}]},
          {"type": "countdown", "identifier": "c"}]}
        """#)
        let s = Session(task: task, options: SessionOptions())
        let height = s.stateJSON().objectValue?["step"]?.objectValue?["answerFormat"]?.objectValue
        #expect(height?["unit"] == .string("cm"))
        #expect(height?["minimumValue"]?.numericValue == 0)
        #expect(height?["maximumValue"]?.numericValue == 250)  // the definition's own is kept
        #expect(height?["showDontKnowButton"] == .bool(false))
        let items = task.steps[1].presentation["formItems"]?.arrayValue ?? []
        #expect(items.count == 3)
        let ses = items.dropFirst().first?.objectValue?["answerFormat"]?.objectValue
        #expect(ses?["minimum"]?.numericValue == 0 && ses?["maximum"]?.numericValue == 9)
        let interval = items.last?.objectValue?["answerFormat"]?.objectValue
        #expect(interval?["unit"] == .string("s") && interval?["maximumInterval"]?.numericValue == 86_340)
        let info = try task.info.objectValue?["steps"]?.arrayValue ?? []
        #expect(info.last?.objectValue?["stepDuration"]?.numericValue == 5)
        #expect(info.first?.objectValue?["stepDuration"] == nil)
    }
}
