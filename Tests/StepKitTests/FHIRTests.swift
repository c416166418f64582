import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

/// The FHIR importer's own guarantees: bounded walks, every problem at once, FHIR's `!=`, the
/// export's typed answers.
@Suite struct FHIRTests {
    private func importTask(_ text: String) throws -> Task {
        try FHIRImporter.compile(try json(text), options: FHIRImportOptions()).task
    }

    @Test func deepNestingIsRefusedNotRecursedInto() throws {
        var item = #"{"linkId": "leaf", "type": "string"}"#
        for i in 0..<40 { item = #"{"linkId": "g\#(i)", "type": "group", "item": [\#(item)]}"# }
        let q = try json(#"{"resourceType": "Questionnaire", "item": [\#(item)]}"#)
        do {
            _ = try FHIRImporter.translate(q)
            Issue.record("a 41-level Questionnaire was accepted")
        } catch {
            #expect(error.status == .definition)
            #expect(error.problems.contains { $0.code == "tooDeep" })
        }
    }

    @Test func notEqualsHoldsWhileUnanswered() throws {
        let task = try importTask("""
        {"resourceType": "Questionnaire", "item": [{"linkId": "g", "type": "group", "item": [
          {"linkId": "q", "type": "integer"},
          {"linkId": "n", "type": "string", "enableWhen": [{"question": "q", "operator": "!=", "answerInteger": 3}]}]}]}
        """)
        var s = Session(task: task, options: SessionOptions())
        #expect(s.isVisible("n", step: 0))
        try s.setAnswer(try json(#"{"q": 3}"#))
        #expect(!s.isVisible("n", step: 0))
        try s.setAnswer(try json(#"{"q": 4}"#))
        #expect(s.isVisible("n", step: 0))
    }

    @Test func exportTypesAnswersAndLeavesDisabledItemsOut() throws {
        let task = try importTask("""
        {"resourceType": "Questionnaire", "id": "t", "item": [
          {"linkId": "t", "type": "time"},
          {"linkId": "d", "type": "dateTime", "enableWhen": [{"question": "t", "operator": "exists", "answerBoolean": true}]},
          {"linkId": "x", "type": "string", "enableWhen": [{"question": "t", "operator": "exists", "answerBoolean": false}]}]}
        """)
        var s = Session(task: task, options: SessionOptions())
        try s.setAnswer(.string("08:30:00"))
        try s.goForward()
        try s.setAnswer(.string("2026-01-02T10:30Z"))
        try s.goForward()
        guard let layout = task.fhir, case .object(let r) = s.fhirResponse(layout) else {
            Issue.record("no response")
            return
        }
        #expect(r["status"] == .string("completed"))
        #expect(r["questionnaire"] == .string("Questionnaire/t"))
        let items = r["item"]?.arrayValue ?? []
        #expect(items.count == 2)
        #expect(items.first?.objectValue?["answer"] == .array([.object(["valueTime": .string("08:30:00")])]))
        #expect(items.last?.objectValue?["answer"] == .array([.object(["valueDateTime": .string("2026-01-02T10:30:00Z")])]))
    }

    // MARK: FHIRPath calculations and variables

    private func translation(_ q: String) throws -> (calculations: JSON?, report: [String]) {
        let t = try FHIRImporter.translate(try json(q))
        return (t.task.objectValue?["calculations"], t.report.entries.map(\.code))
    }

    private let scoredPair = #"""
    {"linkId": "a", "type": "choice", "answerOption": [
      {"valueCoding": {"code": "x"}, "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/itemWeight", "valueDecimal": 1}]},
      {"valueCoding": {"code": "y"}, "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/itemWeight", "valueDecimal": 3}]}]},
    {"linkId": "b", "type": "integer"}
    """#

    @Test func variablesAndTheLHCScoreLookupTranslate() throws {
        let q = """
        {"resourceType": "Questionnaire", "extension": [
          {"url": "http://hl7.org/fhir/StructureDefinition/variable", "valueExpression": {"name": "w", "language": "text/fhirpath", "expression": "'http://hl7.org/fhir/StructureDefinition/itemWeight'"}}],
         "item": [\(scoredPair),
          {"linkId": "t", "type": "decimal", "extension": [
            {"url": "http://hl7.org/fhir/StructureDefinition/variable", "valueExpression": {"name": "s", "language": "text/fhirpath",
             "expression": "%questionnaire.item.where(linkId = 'a').answerOption.where(valueCoding.code = %resource.item.where(linkId = 'a').answer.valueCoding.code).extension.where(url = %w).valueDecimal"}},
            {"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression", "valueExpression": {"language": "text/fhirpath",
             "expression": "iif(%s.exists() and %resource.item.where(linkId='b').answer.value.exists(), %s + %resource.item.where(linkId='b').answer.value * 2 + 1, {})"}}]}]}
        """
        let (calculations, report) = try translation(q)
        #expect(report.isEmpty)
        let expected = try json(#"""
        {"fhir_1": {"if": [{"and": [{"==": [{"count": [{"score": "a"}]}, 1]}, {"==": [{"count": [{"answer": "b"}]}, 1]}]},
                           {"+": [{"score": "a"}, {"*": [{"answer": "b"}, 2]}, 1]}, null]}}
        """#)
        #expect(calculations == expected)
        // The translation compiles and computes: 3 + 4 * 2 + 1.
        let task = try importTask(q)
        var s = Session(task: task, options: SessionOptions())
        #expect(s.calculationValues() == [.null])
        try s.setAnswer(try json(#"["y"]"#))
        try s.goForward()
        try s.setAnswer(.int(4))
        #expect(s.calculationValues() == [.number(12)])
    }

    @Test func whatIsOutsideTheSubsetIsReported() throws {
        // A function the subset does not have, a string added to a number, an unknown variable,
        // a score looked up under another extension's URL, a variable in another language.
        for (expression, variable) in [("%resource.item.where(linkId='b').answer.value.toChars()", "1"),
                                       ("'a' + 1", "1"),
                                       ("%nowhere + 1", "1"),
                                       ("%questionnaire.item.where(linkId = 'a').answerOption.where(valueCoding.code = %resource.item.where(linkId = 'a').answer.valueCoding.code).extension.where(url = 'http://example.org/other').valueDecimal", "1"),
                                       ("%v", "1 +")] {
            let q = """
            {"resourceType": "Questionnaire", "item": [\(scoredPair),
              {"linkId": "t", "type": "decimal", "extension": [
                {"url": "http://hl7.org/fhir/StructureDefinition/variable", "valueExpression": {"name": "v", "language": "text/fhirpath", "expression": "\(variable)"}},
                {"url": "http://hl7.org/fhir/uv/sdc/StructureDefinition/sdc-questionnaire-calculatedExpression", "valueExpression": {"language": "text/fhirpath", "expression": "\(expression)"}}]}]}
            """
            let (calculations, report) = try translation(q)
            #expect(calculations == nil, "\(expression)")
            #expect(report.contains("unsupportedExpression"), "\(expression)")
            #expect(report.contains("unsupportedExtension") == (variable == "1 +"), "\(expression)")
        }
    }

    @Test func deepestFunctionsAndConditionsTranslateOnASmallStack() throws {
        // FHIRPath at the parser's bounds (30 levels of parentheses around a path whose where()
        // is the 32nd, a 60-long chain of function calls) as an enableWhenExpression and a
        // calculatedExpression: translated or declined, on a 256 KiB stack, never past it.
        final class Box: @unchecked Sendable { var report: [String] = []; var done = false }
        let box = Box()
        let path = "%resource.item.item.where(linkId='n').answer.value"
        let nested = String(repeating: "(", count: 30) + path + String(repeating: ")", count: 30) + ".abs() > 1"
        let chained = path + String(repeating: ".abs()", count: 58)
        // 50 operators deep, each operand a function call: the operators do not deepen the result.
        let sum = Array(repeating: path + ".abs()", count: 50).joined(separator: " + ") + " > 1"
        func ext(_ url: String, _ text: String) -> String {
            #"{"url": "\#(url)", "valueExpression": {"language": "text/fhirpath", "expression": "\#(text)"}}"#
        }
        let q = """
        {"resourceType": "Questionnaire", "item": [{"linkId": "g", "type": "group", "item": [
          {"linkId": "n", "type": "decimal"},
          {"linkId": "a", "type": "string", "extension": [\(ext(FHIRCalculations.enableWhenURL, nested))]},
          {"linkId": "b", "type": "decimal", "readOnly": true, "extension": [\(ext(FHIRCalculations.url, chained))]},
          {"linkId": "c", "type": "string", "extension": [\(ext(FHIRCalculations.enableWhenURL, sum))]}]}]}
        """
        #expect(onThread(stack: 256 << 10) {
            guard let parsed = try? JSONParser.parse(q), let t = try? FHIRImporter.translate(parsed) else { return }
            box.report = t.report.entries.map { $0.linkId + " " + $0.code }
            box.done = true
        })
        #expect(box.done)
        // The nested condition translates; the 58 calls exceed the expression language's 32 levels: declined.
        #expect(box.report == ["b unsupportedExpression"])
    }

    @Test func fhirPathIsBounded() throws {
        // Nesting past the bound and text past the length are refused, not recursed into.
        let deep = String(repeating: "(", count: 200) + "1" + String(repeating: ")", count: 200)
        #expect(FHIRPathNode.parse(deep) == nil)
        #expect(FHIRPathNode.parse(String(repeating: "1 + ", count: 3_000) + "1") == nil)
        // A flat chain is one operator with every operand; past the tree's depth bound (each
        // operand deepens the tree by one) the parser refuses it as it builds it.
        let calcs = FHIRCalculations(prepared: [:], locations: [:], order: [], index: FHIRItemIndex([], Diagnostics()))
        let forty = Array(repeating: "1", count: 40).joined(separator: " + ")
        #expect(calcs.translate(forty) == .object(["+": .array(Array(repeating: .int(1), count: 40))]))
        let hundred = Array(repeating: "1", count: 100).joined(separator: " + ")
        #expect(FHIRPathNode.parse(hundred) == nil)
        #expect(calcs.translate(hundred) == nil)
        #expect(FHIRPathNode.parse(Array(repeating: "1", count: 64).joined(separator: " + ")) != nil)
        #expect(FHIRPathNode.parse("iif(true, 1, 2)") == .invocation(base: nil, name: "iif", arguments: [.boolean(true), .number(1), .number(2)]))
        #expect(FHIRPathNode.parse("a.b(") == nil)
        #expect(FHIRPathNode.parse("'unclosed") == nil)
    }
}
