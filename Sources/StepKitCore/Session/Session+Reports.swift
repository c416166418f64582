import StepKitBase

/// `stepkit_session_report`: what the host observed on a step StepKit cannot see (a signature
/// drawn, an image captured, a video played, a web view's message, a table or PDF shown, the
/// permissions granted), recorded as the step's answer once it is checked (`ReportedFormat`).
/// A captured file is written into the output directory first and recorded with its digest; a
/// refused report writes nothing and changes nothing.
extension Session {
    package mutating func report(_ report: JSON) throws(StepKitError) {
        try requireInProgress()
        guard var fields = report.objectValue else {
            throw StepKitError(.invalidArgument, code: "wrongType", message: "A report is a JSON object: {\"step\": identifier, ...what happened}.")
        }
        guard let stepID = fields["step"]?.stringValue else {
            throw StepKitError(.invalidArgument, code: "missingKey", message: "A report names the step it is about: \"step\".", path: .root.key("step"))
        }
        guard let step = currentStep, let index = currentIndex, step.identifier == stepID else {
            throw stateError("notCurrentStep", "The report is about \"\(stepID)\"; the current step is \"\(currentStep?.identifier ?? "")\".")
        }
        guard let kind = step.hosted?.reportKind, let rules = step.format()?.rules as? ReportedFormat else {
            throw stateError("notReported", "The step \"\(stepID)\" is not one the host reports (" + ReportedFormat.Kind.allCases.map(\.rawValue).joined(separator: ", ") + ").")
        }
        fields["step"] = nil
        let record: JSON
        switch try rules.read(fields) {
        case .value(let value):
            record = value
        case .file(let bytes, let captured, let contentType, let fileExtension):
            guard let directory = options.outputDirectory else {
                throw stateError("noOutputDirectory", "A \(kind.rawValue) report is written to a file: the session needs \"outputDirectory\" in its options.")
            }
            let digest = try Digest.sha256(bytes: bytes)
            let name = try CapturedFile.name(run: taskRunUUID, step: step.identifier, visit: path.count, sha256: digest, fileExtension: fileExtension)
            record = .object(["kind": .string(captured), "fileName": .string(name), "contentType": .string(contentType),
                              "bytes": .int(Int64(bytes.count)), "sha256": .string(digest)])
            // The last thing that can fail: after it, the record is kept.
            try CapturedFile.write(bytes, name: name, in: directory, durable: options.autosavePath != nil)
        }
        let previous = answers[index]
        answers[index] = record
        if audit.isOn && previous != record {
            audit.record(.answerSet, at: now, step: index, old: previous, new: record)
        }
        clock.touched = true
        emit("resultDidChange", ["step": .string(step.identifier)])
        _checkInvariants()
    }

    /// Keeps `record`, a report as a result holds it, as the current step's answer after the
    /// checks restore makes (`Task.accept`, `.restore`): the verifier's replay
    /// (`Verify/Replay.swift`). Nothing is written.
    mutating func keepReportRecord(_ record: JSON) throws(StepKitError) {
        try requireInProgress()
        guard let step = currentStep, let index = currentIndex, step.hosted?.reportKind != nil else {
            throw stateError("notReported", "The current step is not one the host reports.")
        }
        let accepted = task.accept(record, to: step, at: index, previous: nil, parts: .restore) { _ in NoAnswers() }
        guard accepted.problems.isEmpty else { throw StepKitError(.answer, problems: accepted.problems) }
        answers[index] = accepted.value
        clock.touched = true
    }

    /// After a report made on a copy of the session could not be autosaved, removes the file it
    /// wrote (unless `old` records the same file: the same content reported again).
    func undoCapturedFile(back old: Session) {
        guard let directory = options.outputDirectory, let index = currentIndex, currentStep?.hosted?.reportKind?.capturesFile == true,
              let name = answers[index]?.objectValue?["fileName"]?.stringValue else { return }
        let before = old.path.indices.compactMap { old.path[$0].answer?.objectValue?["fileName"]?.stringValue } + [old.answers[index]?.objectValue?["fileName"]?.stringValue].compactMap { $0 }
        if !before.contains(name) { CapturedFile.remove(name, in: directory) }
    }
}
