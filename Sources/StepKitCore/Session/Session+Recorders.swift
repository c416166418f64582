import StepKitBase

/// Recorders: the host owns the sensors and pushes samples; the engine checks that the recorder
/// is running, writes the samples under the output directory, and reports the files as
/// ResearchKit's file results. A recorder that cannot write fails, and the task finishes with
/// reason "failed" (ResearchKit's behaviour) unless the host chose to continue.
extension Session {
    /// A recorder's first state: running, or failed at once when there is nowhere to write.
    func startRecorder(_ settings: RecorderSettings, at time: Int64) -> RecorderRun {
        var run = RecorderRun(identifier: settings.identifier, type: settings.type)
        if let directory = options.outputDirectory {
            if !Recording.canWrite(directory) {
                run.fail("The output directory \(directory) cannot be written.")
            }
        } else {
            run.fail("No outputDirectory was given in the session options.")
        }
        return run
    }

    mutating func announceStart(_ settings: RecorderSettings, _ run: RecorderRun, at time: Int64) {
        guard run.status == .running else { return }
        emit("recorderStarted", ["recorder": .string(settings.identifier), "recorderType": .string(settings.type),
                                 "configuration": .object(settings.configuration)], at: time)
    }

    /// Reports a failed recorder and, unless the host continues on failure, fails the task.
    mutating func recorderFailed(_ run: RecorderRun, lost: Int, at time: Int64) {
        emit("recorderFailed", ["recorder": .string(run.identifier), "message": .string(run.failure ?? "The recorder failed."),
                                "samplesLost": .int(Int64(lost))], at: time)
        if !options.continueOnRecorderFailure && !isFinished {
            endRun(.failed, at: time)
        }
    }

    /// Stops the current active step's running recorders, closing their files.
    mutating func stopActiveRecorders(at time: Int64) {
        // Read in place: `current` copies the whole visit, and this runs on every move.
        guard let last = path.indices.last, let recorders = path[last].active?.recorders,
              recorders.contains(where: { $0.status == .running }) else { return }
        var stopped: [RecorderRun] = []
        for var run in recorders {
            if run.status == .running { stop(&run, at: time) }
            stopped.append(run)
        }
        updateCurrent { $0.active?.recorders = stopped }
    }

    private mutating func stop(_ run: inout RecorderRun, at time: Int64) {
        run.status = .stopped
        if let last = run.files.indices.last, run.files[last].endDate == nil {
            run.files[last].endDate = time
            if let directory = options.outputDirectory { Recording.settle(run.files[last], in: directory) }
        }
        emit("recorderStopped", ["recorder": .string(run.identifier), "samples": .int(Int64(run.samples))], at: time)
    }

    // MARK: Async actions

    mutating func startAsyncActions(at step: Int, time: Int64) {
        // Most tasks have none; an empty loop still retained and released the list, every move.
        guard !task.asyncActions.isEmpty else { return }
        for (i, action) in task.asyncActions.enumerated() where action.startStep == step && actions[action: i] == nil {
            let run = startRecorder(action.recorder, at: time)
            actions[action: i] = run
            announceStart(action.recorder, run, at: time)
            if run.status == .failed { recorderFailed(run, lost: 0, at: time) }
        }
    }

    /// Stops the async actions that stop after `step` (nil: all of them, the task is ending).
    mutating func stopAsyncActions(leaving step: Int?, time: Int64) {
        guard !actions.isEmpty else { return }
        for (i, action) in task.asyncActions.enumerated() {
            guard var run = actions[action: i], run.status == .running, step == nil || action.stopStep == step else { continue }
            stop(&run, at: time)
            actions[action: i] = run
        }
    }

    // MARK: Samples

    /// `stepkit_session_record`: one sample object or an array of them for a running recorder.
    package mutating func record(_ recorder: String, _ samples: JSON) throws(StepKitError) {
        try requireInProgress()
        let items: [JSON]
        switch samples {
        case .array(let list): items = list
        case .object: items = [samples]
        default:
            throw StepKitError(.invalidArgument, code: "wrongType", message: "Samples are a JSON object or an array of objects.")
        }
        for (i, item) in items.enumerated() where item.objectValue == nil {
            throw StepKitError(.invalidArgument, code: "wrongType", message: "Each sample is a JSON object.", path: JSONPath.root.index(i))
        }
        let time = now
        let uuid = taskRunUUID
        if let runs = current?.active?.recorders, let index = runs.firstIndex(where: { $0.identifier == recorder && $0.status == .running }) {
            var run = runs[index]
            let step = currentStep?.identifier ?? ""
            let visit = path.count
            let ok = write(items, into: &run, at: time) { n throws(StepKitError) in
                try RecorderFileName.step(run: uuid, step: step, visit: visit, recorder: recorder, file: n)
            }
            updateCurrent { $0.active?.recorders[index] = run }
            if !ok { recorderFailed(run, lost: items.count, at: time) }
        } else if let (i, action) = task.asyncActions.enumerated().first(where: { $0.element.recorder.identifier == recorder }),
                  var run = actions[action: i], run.status == .running {
            let ok = write(items, into: &run, at: time) { n throws(StepKitError) in
                try RecorderFileName.async(run: uuid, recorder: recorder, file: n)
            }
            actions[action: i] = run
            _ = action
            if !ok { recorderFailed(run, lost: items.count, at: time) }
        } else {
            throw stateError("recorderNotRunning", "The recorder \"\(recorder)\" is not recording now.")
        }
        clock.touched = true
        _checkInvariants()
    }

    /// Writes a batch, rolling to a new file past the size limit (`name`: the name of file n,
    /// which fails only when a long identifier's digest cannot be taken: `Digest`).
    /// False when writing failed (the recorder is then failed; the samples before this batch
    /// stay in their file, and a file the batch would have started is not listed).
    private func write(_ items: [JSON], into run: inout RecorderRun, at time: Int64,
                       name: (Int) throws(StepKitError) -> String) -> Bool {
        guard let directory = options.outputDirectory else {
            run.fail("No outputDirectory was given in the session options.")
            return false
        }
        let texts = items.map { JSONWriter.string($0) }
        let size = Int64(texts.reduce(0) { $0 + $1.utf8.count + 1 })
        if let last = run.files.last, last.items > 0, last.bytes.addingSaturated(size) > options.recorderFileSizeLimit {
            let index = run.files.count - 1
            run.files[index].endDate = time
            Recording.settle(run.files[index], in: directory)
        }
        if run.files.last.map({ $0.endDate != nil }) ?? true {
            do throws(StepKitError) {
                run.files.append(RecordedFile(fileName: try name(run.files.count), startDate: time))
            } catch {
                run.fail(error.problems.first?.message)
                return false
            }
        }
        guard let index = run.files.indices.last else { return false }
        do throws(StepKitError) {
            try Recording.append(texts, to: &run.files[index], in: directory, durable: options.autosavePath != nil)
            run.samples = run.samples.addingSaturated(items.count)
            return true
        } catch {
            run.fail(error.problems.first?.message)
            if run.files[index].items == 0 {
                run.files.remove(at: index)  // never written: no file result for it
            } else {
                run.files[index].endDate = time
            }
            return false
        }
    }

    // MARK: Undo

    /// After a call made on a copy of the session could not be autosaved (the copy is dropped
    /// and `old` stays), puts the recorder files back as `old` records them: a batch the call
    /// appended is cut off and the file closed again, a file the call created is removed. Only
    /// `record` writes samples, to the current visit's recorders or an async action's.
    func undoRecorderWrites(back old: Session) {
        undoCapturedFile(back: old)
        guard let directory = options.outputDirectory else { return }
        var recorded: [String: RecordedFile] = [:]
        for run in old.path.compactMap(\.active).flatMap(\.recorders) + Array(old.actions.runs.values) {
            for file in run.files { recorded[file.fileName] = file }
        }
        for run in (current?.active?.recorders ?? []) + Array(actions.runs.values) {
            for file in run.files {
                if let before = recorded[file.fileName] {
                    if before.bytes != file.bytes { Recording.settle(before, in: directory) }
                } else if file.items > 0 {
                    Recording.remove(file, in: directory)
                }
            }
        }
    }

    // MARK: Results

    /// ResearchKit's `ORKFileResult`s of a recorder run.
    static func fileResults(_ run: RecorderRun, now: Int64) -> [JSON] {
        run.files.map { file in
            .object([
                "identifier": .string(run.identifier),
                "type": .string("file"),
                "contentType": .string("application/json"),
                "fileName": .string(file.fileName),
                "startDate": .string(CivilTime.iso8601(milliseconds: file.startDate)),
                "endDate": .string(CivilTime.iso8601(milliseconds: file.endDate ?? now)),
            ])
        }
    }
}
