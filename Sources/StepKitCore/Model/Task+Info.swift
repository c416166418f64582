import StepKitBase

/// `stepkit_task_info`: what a host reads about a task before running it.
extension Task {
    /// The description `stepkit_task_info` writes. Throws only what taking the fingerprint
    /// throws: `STEPKIT_EIO` "libcryptoUnavailable" when libcrypto cannot be loaded, as a save
    /// would (the fingerprint is the one member that needs a digest; it is worked out on the
    /// first call and kept by `Fingerprint`).
    package var info: JSON {
        get throws(StepKitError) {
            var info = JSONObject([
                "identifier": .string(identifier),
                // The value restoration data names the task by, so a host can tell which of its
                // stored versions a saved run belongs to without saving one.
                "fingerprint": .string(try fingerprint.value()),
                "stepCount": .int(Int64(steps.count)),
                "steps": .array(steps.map(\.infoJSON)),
                "sections": .array(sections.map { section in
                    .object([
                        "identifier": .string(section.identifier),
                        "steps": .array((section.firstStep...section.lastStep).compactMap { step(at: $0).map { .string($0.identifier) } }),
                    ])
                }),
                "branching": .bool(!rules.isEmpty),
                "requestedPermissions": .array(requestedPermissions.map { .string($0) }),
                "recorders": .array(recordersInfo),
                "calculations": calculations.info(self),
            ])
            // A task that declares languages names them, the default first, so a host can offer
            // them (the web presenter's switch, its choice from Accept-Language).
            if languages.isDeclared {
                info["defaultLanguage"] = .string(languages.defaultLanguage)
                info["languages"] = .array(languages.declared.map { .string($0) })
            }
            return .object(info)
        }
    }

    /// Every recorder the task can run, so a host without a sensor can refuse the task before a
    /// participant starts it: each active step's, in step order and as its
    /// `recorderConfigurations` lists them, with the `step` that runs it; then each async
    /// action's, in the order of `asyncActions`, with the step it starts at and the step after
    /// which it stops (`null`: it records until the task ends).
    private var recordersInfo: [JSON] {
        var list: [JSON] = []
        for step in steps {
            for recorder in step.active?.recorders ?? [] {
                var fields = recorder.infoFields
                fields["step"] = .string(step.identifier)
                list.append(.object(fields))
            }
        }
        for action in asyncActions {
            var fields = action.recorder.infoFields
            fields["startStep"] = step(at: action.startStep).map { .string($0.identifier) } ?? .null
            fields["stopStep"] = action.stopStep.flatMap { step(at: $0) }.map { .string($0.identifier) } ?? .null
            list.append(.object(fields))
        }
        return list
    }
}

extension RecorderSettings {
    /// Identifier, type and the permission it needs (`null` for `touch` and `custom`).
    fileprivate var infoFields: JSONObject {
        JSONObject(["identifier": .string(identifier), "type": .string(type), "permission": permission.map { .string($0) } ?? .null])
    }
}
