import CStepKit
import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The options of compiling and importing are read within a definition's default limits
/// (`InputLimits.compileOptions`, stepkit.h), not an answer's: a FHIR import's value sets are
/// definition content, and may be larger than an answer may be.
@Suite struct CompileOptionsTests {
    let task = #"{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]}"#

    func lastErrorCode() -> JSON? {
        stepkit_last_error().flatMap { try? json(String(cString: $0)) }?
            .objectValue?["errors"]?.arrayValue?.first?.objectValue?["code"]
    }

    @Test func optionsLargerThanAnAnswerCompile() {
        // 2 MiB: past an answer's 1 MiB, within a definition's 32 MiB.
        let options = #"{"limits": {"maxSteps": 5}}"# + String(repeating: " ", count: 2 << 20)
        var handle: OpaquePointer?
        #expect(stepkit_task_compile_with_options(task, options, &handle) == STEPKIT_OK)
        stepkit_task_free(handle)
    }

    @Test func optionsPastADefinitionsSizeAreRefused() {
        let options = "{}" + String(repeating: " ", count: InputLimits.definition.maxBytes)
        var handle: OpaquePointer?
        #expect(stepkit_task_compile_with_options(task, options, &handle) == STEPKIT_EINVAL)
        #expect(handle == nil)
        #expect(lastErrorCode() == .string("tooLarge"))
    }

    @Test func aValueSetLargerThanAnAnswerImports() throws {
        // 20,000 concepts: about 1.4 MiB of options.
        let concepts = (0..<20_000).map { #"{"system": "http://example.org/codes", "code": "c\#($0)", "display": "Concept \#($0)"}"# }
        let options = #"{"valueSets": {"http://example.org/ValueSet/big": ["# + concepts.joined(separator: ", ") + "]}}"
        #expect(options.utf8.count > InputLimits.answer.maxBytes)
        let questionnaire = #"""
            {"resourceType": "Questionnaire", "status": "active", "item": [
              {"linkId": "q", "text": "Pick one", "type": "choice", "answerValueSet": "http://example.org/ValueSet/big"}]}
            """#
        var out: UnsafeMutablePointer<CChar>?
        #expect(stepkit_task_translate_fhir(questionnaire, options, &out) == STEPKIT_OK)
        defer { stepkit_string_free(out) }
        let translated = try json(String(cString: try #require(out)))
        let step = try #require(translated.objectValue?["task"]?.objectValue?["steps"]?.arrayValue?.first?.objectValue)
        let choices = step["answerFormat"]?.objectValue?["textChoices"]?.arrayValue
        #expect(choices?.count == 20_000)
        #expect(choices?.last?.objectValue?["text"] == .string("Concept 19999"))
    }
}
