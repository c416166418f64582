import CStepKit
import StepKitBase
import StepKitCore

// stepkit_task_compile_fhir, stepkit_task_translate_fhir, stepkit_session_result_fhir: FHIR
// Questionnaire in, QuestionnaireResponse out (the work is in FHIR/).

@c @implementation
public func stepkit_task_compile_fhir(_ questionnaire_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                      _ out_task: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    Boundary.create(out_task, argument: "out_task") { () throws(StepKitError) in
        let options = try FHIRImportOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .compileOptions))
        let questionnaire = try Boundary.json(questionnaire_json, argument: "questionnaire_json", limits: options.compile.input)
        return TaskHandle(try FHIRImporter.compile(questionnaire, options: options).task)
    }
}

@c @implementation
public func stepkit_task_translate_fhir(_ questionnaire_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                        _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        let options = try FHIRImportOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .compileOptions))
        let questionnaire = try Boundary.json(questionnaire_json, argument: "questionnaire_json", limits: options.compile.input)
        let result = try FHIRImporter.compile(questionnaire, options: options)
        return .object(["task": result.definition, "report": result.report.json])
    }
}

@c @implementation
public func stepkit_session_result_fhir(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        let handle = try HandleRegistry.resolve(session, as: SessionHandle.self, argument: "session")
        guard let layout = handle.store.read({ $0.task.fhir }) else {
            throw StepKitError(.invalidArgument, code: "notFHIR",
                               message: "The session's task was not imported from a FHIR Questionnaire (stepkit_task_compile_fhir).")
        }
        return handle.store.read { $0.fhirResponse(layout) }
    }
}
