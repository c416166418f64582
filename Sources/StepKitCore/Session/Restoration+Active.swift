import StepKitBase

/// The active-step part of restoration data: each visit's timer and recorders, the task-level
/// suspension and the async actions' recorders.
extension Restoration {
    static func encode(_ run: ActiveRun, at time: Int64) -> JSON {
        var fields = JSONObject([
            "status": .string(run.status.rawValue),
            // A running step's time so far; on restore it runs on from the restore.
            "elapsed": .int(run.elapsed(at: time)),
            "startDate": run.startDate.map { .int($0) } ?? .null,
            "finishDate": run.finishDate.map { .int($0) } ?? .null,
            "marksFired": .int(Int64(run.marksFired)),
            "recorders": .array(run.recorders.map(encode)),
        ])
        // A game step's game: its inputs, replayed on restore (`Restoration+Games.swift`).
        if let game = run.game { fields["game"] = encode(game) }
        return .object(fields)
    }

    static func encode(_ run: RecorderRun) -> JSON {
        .object([
            "identifier": .string(run.identifier),
            "type": .string(run.type),
            "status": .string(run.status.rawValue),
            "samples": .int(Int64(run.samples)),
            "failure": .string(run.failure),
            "files": .array(run.files.map { file in
                .object([
                    "fileName": .string(file.fileName),
                    "startDate": .int(file.startDate),
                    "endDate": file.endDate.map { .int($0) } ?? .null,
                    "bytes": .int(file.bytes),
                    "items": .int(Int64(file.items)),
                ])
            }),
        ])
    }

    /// A running step's timer is anchored by the restored session (`Session.anchorRunningSteps`).
    static func decodeActive(_ value: JSON, at path: JSONPath) throws(StepKitError) -> ActiveRun {
        guard let o = value.objectValue, let status = o["status"]?.stringValue.flatMap(ActiveRun.Status.init(rawValue:)),
              case .int(let elapsed)? = o["elapsed"], elapsed >= 0, case .int(let marks)? = o["marksFired"], marks >= 0, marks < 1000,
              let recorders = o["recorders"]?.arrayValue else {
            throw StepKitError(.restore, code: "damaged", message: "A saved active step is not valid.", path: path)
        }
        var run = ActiveRun()
        run.status = status
        run.elapsedBefore = elapsed
        run.startDate = try optionalInt(o["startDate"], path.key("startDate"))
        run.finishDate = try optionalInt(o["finishDate"], path.key("finishDate"))
        run.marksFired = Int(marks)
        for (i, r) in recorders.enumerated() { run.recorders.append(try decodeRecorder(r, at: path.key("recorders").index(i))) }
        return run
    }

    static func decodeRecorder(_ value: JSON, at path: JSONPath) throws(StepKitError) -> RecorderRun {
        guard let o = value.objectValue, let identifier = o["identifier"]?.stringValue, let type = o["type"]?.stringValue,
              let status = o["status"]?.stringValue.flatMap(RecorderRun.Status.init(rawValue:)),
              case .int(let samples)? = o["samples"], samples >= 0, samples <= countLimit, let files = o["files"]?.arrayValue else {
            throw StepKitError(.restore, code: "damaged", message: "A saved recorder is not valid.", path: path)
        }
        var run = RecorderRun(identifier: identifier, type: type)
        run.status = status
        run.samples = Int(clamping: samples)
        run.failure = o["failure"]?.stringValue
        for (i, f) in files.enumerated() {
            // A file name must stay inside the output directory (`RecorderFileName.isSafe`), a
            // file with samples is at least `{"items":[{}]}` long, and no figure is near overflow.
            guard let file = f.objectValue, let name = file["fileName"]?.stringValue, RecorderFileName.isSafe(name),
                  case .int(let start)? = file["startDate"], case .int(let bytes)? = file["bytes"],
                  case .int(let items)? = file["items"], items >= 0, items <= countLimit, bytes <= countLimit,
                  items == 0 ? bytes >= 0 : bytes >= 14 else {
                throw StepKitError(.restore, code: "damaged", message: "A saved recorder file is not valid.", path: path.key("files").index(i))
            }
            var record = RecordedFile(fileName: name, startDate: start)
            record.endDate = try optionalInt(file["endDate"], path.key("files").index(i).key("endDate"))
            record.bytes = bytes
            record.items = Int(clamping: items)
            run.files.append(record)
        }
        return run
    }

    /// A bound on saved sample counts and file lengths (2^52, far past any real recording), so
    /// adding a batch to restored figures can never overflow.
    private static let countLimit: Int64 = 1 << 52
}
