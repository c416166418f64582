import StepKitBase

// Async actions: recorders that run across steps.

extension TaskCompiler {
    static func compileAsyncActions(_ items: [JSON], _ b: Builder) -> [AsyncAction] {
        var actions: [AsyncAction] = []
        for (i, item) in items.enumerated() {
            let path = JSONPath.root.key("asyncActions").index(i)
            guard let r = FieldReader(item, at: path, b.d, what: "an async action") else { continue }
            let recorder = RecorderSettings.parse(r, at: path, seen: &b.recorders)
            let start = r.string("startStepIdentifier", required: true)
            let stop = r.string("stopStepIdentifier")
            r.finish()
            var startIndex: Int?, stopIndex: Int?
            if let start {
                startIndex = b.stepIndex[start]
                if startIndex == nil { b.d.error("unknownStep", "No step is called \"\(start)\".", at: path.key("startStepIdentifier")) }
            }
            if let stop {
                stopIndex = b.stepIndex[stop]
                if stopIndex == nil { b.d.error("unknownStep", "No step is called \"\(stop)\".", at: path.key("stopStepIdentifier")) }
            }
            if let recorder, let startIndex, stop == nil || stopIndex != nil {
                actions.append(AsyncAction(recorder: recorder, startStep: startIndex, stopStep: stopIndex))
            }
        }
        return actions
    }
}
