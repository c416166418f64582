import CStepKit
import StepKitBase
import StepKitCore

// stepkit_task_*: compiling a task definition and describing it.

@c @implementation
public func stepkit_task_compile(_ task_json: UnsafePointer<CChar>?, _ out_task: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    compile(task_json, nil, out_task)
}

@c @implementation
public func stepkit_task_compile_with_options(_ task_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                                              _ out_task: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    compile(task_json, options_json, out_task)
}

private func compile(_ task_json: UnsafePointer<CChar>?, _ options_json: UnsafePointer<CChar>?,
                     _ out_task: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    Boundary.create(out_task, argument: "out_task") { () throws(StepKitError) in
        let options = try CompileOptions.parse(options_json == nil ? nil : Boundary.json(options_json, argument: "options_json", limits: .compileOptions))
        let definition = try Boundary.json(task_json, argument: "task_json", limits: options.input)
        return TaskHandle(try TaskCompiler.compile(definition, maxSteps: options.maxSteps))
    }
}

@c @implementation
public func stepkit_task_info(_ task: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task").task.info
    }
}

@c @implementation
public func stepkit_task_graph(_ task: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        .object(["edges": try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task").task.routing.json])
    }
}

@c @implementation
public func stepkit_task_check(_ task: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Boundary.output(out) { () throws(StepKitError) in
        TaskChecker.check(try HandleRegistry.resolve(task, as: TaskHandle.self, argument: "task").task)
    }
}

@c @implementation
public func stepkit_task_free(_ task: OpaquePointer?) {
    HandleRegistry.release(task, as: TaskHandle.self)
}
