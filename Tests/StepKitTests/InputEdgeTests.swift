import CStepKit
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// Issue 26, item 13: the FHIR nesting limit is the documented one, numbers that would read as
/// 0 are refused, and counts of one read in the singular.
@Suite struct InputEdgeTests {
    /// A Questionnaire whose one question sits `levels` deep, with an answer option whose coding
    /// carries an extension (content a real item has, four JSON levels under the item).
    static func questionnaire(levels: Int) -> String {
        var item = #"{"linkId": "q", "type": "choice", "text": "Deep", "answerOption": [{"valueCoding": {"code": "a", "display": "A", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/ordinalValue", "valueDecimal": 1}]}}]}"#
        for k in stride(from: levels - 1, to: 0, by: -1) { item = #"{"linkId": "g\#(k)", "type": "group", "text": "G", "item": [\#(item)]}"# }
        return #"{"resourceType": "Questionnaire", "status": "active", "item": [\#(item)]}"#
    }

    /// Through the C ABI, with its default limits: the status and the last error.
    func compileFHIR(_ text: String) throws -> (Int32, JSONObject?) {
        var task: OpaquePointer?
        let status = text.withCString { stepkit_task_compile_fhir($0, nil, &task) }
        stepkit_task_free(task)
        return (status, try stepkit_last_error().map { try json(String(cString: $0)) }?.objectValue)
    }

    @Test func thirtyTwoLevelsImportAndThirtyThreeMeetTheImportersCheck() throws {
        for levels in [31, 32] {
            #expect(try compileFHIR(Self.questionnaire(levels: levels)).0 == STEPKIT_OK, "\(levels) levels")
        }
        let (status, error) = try compileFHIR(Self.questionnaire(levels: 33))
        #expect(status == STEPKIT_EDEFINITION)
        let problem = try #require(error?["errors"]?.arrayValue?.first?.objectValue)
        #expect(problem["code"] == .string("tooDeep"))
        #expect(problem["message"] == .string("Items nest more than 32 levels deep."))
        // At the 33rd level's `item` array: under the 32nd item.
        #expect(problem["path"] == .string(Array(repeating: "item[0]", count: 32).joined(separator: ".") + ".item"))
    }

    @Test(arguments: ["1e-400", "-1e-400", "2e-324", "1E-330", "0.\(String(repeating: "0", count: 400))1", "[1, 12.5e-999]"])
    func aNumberThatWouldReadAsZeroIsRefused(_ text: String) throws {
        let result = text.withCString { p in
            Result { () throws(StepKitError) -> JSON in try JSONParser.parse(cString: p, within: .answer, argument: "answer_json") }
        }
        #expect(throws: StepKitError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.status == .parse)
            #expect(error.problems.first?.message.contains("is too close to 0 to be read") == true)
        }
    }

    @Test func eachRunOfNumberCharactersIsCheckedOnce() throws {
        // Not JSON, refused by the parser; the check before it looks at the run once, not at
        // every dot (which made this 200,000-dot text quadratic: 10^10 steps).
        let text = "[" + String(repeating: "1.", count: 200_000) + "1]"
        let result = text.withCString { p in
            Result { () throws(StepKitError) -> JSON in try JSONParser.parse(cString: p, within: .definition, argument: "task_json") }
        }
        #expect(throws: StepKitError.self) { try result.get() }
        let vanishing = "[" + String(repeating: "1.", count: 200_000) + "1e-400]"
        let refused = vanishing.withCString { p in
            Result { () throws(StepKitError) -> JSON in try JSONParser.parse(cString: p, within: .definition, argument: "task_json") }
        }
        #expect(throws: StepKitError.self) { try refused.get() }
    }

    @Test func theSizeLimitStillNamesARunOfDigitsPastIt() throws {
        // 64 bytes allowed: a longer number is refused as too large, not read whole first; one
        // that ends exactly at the limit is still checked.
        let small = InputLimits(maxBytes: 64, maxDepth: 8, maxStringBytes: 64)
        func parse(_ text: String) -> Result<JSON, StepKitError> {
            text.withCString { p in Result { () throws(StepKitError) -> JSON in try JSONParser.parse(cString: p, within: small, argument: "answer_json") } }
        }
        if case .failure(let error) = parse("0." + String(repeating: "0", count: 500) + "1") {
            #expect(error.problems.first?.code == "tooLarge")
        } else {
            Issue.record("a 503-byte number passed a 64-byte limit")
        }
        let exact = "1." + String(repeating: "0", count: 56) + "1e-400"
        #expect(exact.utf8.count == 64)
        if case .failure(let error) = parse(exact) {
            #expect(error.status == .parse)
            #expect(error.problems.first?.message.contains("too close to 0") == true)
        } else {
            Issue.record("1.0…1e-400 ending at the limit was read")
        }
    }

    @Test(arguments: ["0e-400", "-0.0", "0.0e5", "4.9e-324", "1e-300", "2.5e-308", "0.5", "1e5", "[true, false, 1.5]", "\"1e-400\""])
    func zerosAndSmallNumbersThatFitAreRead(_ text: String) throws {
        let value = try text.withCString { p in
            Result { () throws(StepKitError) -> JSON in try JSONParser.parse(cString: p, within: .answer, argument: "answer_json") }
        }.get()
        #expect(value != .null)
    }

    @Test func aRefusedNumberChangesNoAnswer() throws {
        let definition = #"{"identifier": "t", "steps": [{"type": "question", "identifier": "q", "answerFormat": {"type": "numeric", "style": "decimal"}}]}"#
        var t: OpaquePointer?
        #expect(definition.withCString { stepkit_task_compile($0, &t) } == STEPKIT_OK)
        defer { stepkit_task_free(t) }
        var session: OpaquePointer?
        #expect(stepkit_session_open(t, nil, &session) == STEPKIT_OK)
        defer { stepkit_session_free(session) }
        #expect("1e-400".withCString { stepkit_session_set_answer(session, $0, nil) } == STEPKIT_EPARSE)
        var out: UnsafeMutablePointer<CChar>?
        #expect(stepkit_session_state(session, &out) == STEPKIT_OK)
        let state = try json(String(cString: try #require(out)))
        stepkit_string_free(out)
        #expect(state.objectValue?["answer"] == nil || state.objectValue?["answer"] == .null)
    }

    func message(_ result: Result<JSON?, AnswerRejection>) -> String? {
        if case .failure(let rejection) = result { return rejection.message }
        return nil
    }

    @Test func countsOfOneAreSingular() throws {
        #expect(NumberText.count(1, "character") == "1 character")
        #expect(NumberText.count(2, "character") == "2 characters")
        let text = try questionTask(#"{"type": "text", "maximumLength": 1}"#)
        #expect(try message(check(text, #""ab""#)) == "Enter at most 1 character.")
        let two = try questionTask(#"{"type": "text", "maximumLength": 2}"#)
        #expect(try message(check(two, #""abc""#)) == "Enter at most 2 characters.")
        let decimal = try questionTask(#"{"type": "numeric", "style": "decimal", "maximumFractionDigits": 1}"#)
        #expect(try message(check(decimal, "1.25"))?.hasSuffix("with at most 1 decimal place.") == true)
        // An operator taking one or more arguments, given none.
        let arity = problems(#"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}], "calculations": {"n": {"sum": []}}}"#)
        #expect(arity.contains { $0.code == "wrongArity" && $0.message == "\"sum\" takes at least 1 argument, found 0." })
        // FHIR minLength 1.
        let q = try json(#"{"resourceType": "Questionnaire", "item": [{"linkId": "s", "type": "string", "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/minLength", "valueInteger": 1}]}]}"#)
        let translated = try FHIRImporter.translate(q)
        #expect(JSONWriter.string(translated.task).contains("Enter at least 1 character."))
    }
}
