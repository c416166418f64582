import StepKitBase

/// A repeating block's part of a submission (docs/task-format.md, "Repeating blocks"): where
/// each of its instances is and where each answer in one is. The answers themselves are the
/// block's answer in `SubmittedStep.answer`: an array, one entry per instance in order, as the
/// session keeps it (an object of its items' answers for a group, one answer for a repeating
/// question).
struct SubmittedBlock: Sendable {
    /// Each instance's place: a group's instance result or response item, a repeating
    /// question's answer.
    var instances: [JSONPath] = []
    /// A group's: where each item's answer is, per instance.
    var places: [[String: JSONPath]] = []

    /// Where instance `k`'s answer to `item` is (its instance where it has none there).
    func place(instance k: Int, item: String?) -> JSONPath? {
        if let item, let p = places[ifPresent: k]?[item] { return p }
        return instances[ifPresent: k]
    }
}

extension SubmittedResult {
    private static let blockFields: Set<String> = ["identifier", "type", "instances", "startDate", "endDate"]
    private static let instanceFields: Set<String> = ["identifier", "index", "results"]

    /// The `type` a block's result has (`StepResult.instances`).
    static func blockType(_ repeating: RepeatingFormat) -> String { repeating.form == nil ? "repeating" : "group" }

    /// A repeating block's result read back into the block's answer (nil: no instance): a
    /// group's `instances` each `{"identifier", "index", "results": [question results]}`, a
    /// repeating question's each a question result. Instances are read in their order (an
    /// instance's `index` is where it is in the list); each answer is read as a question's.
    static func readBlock(_ o: JSONObject, name: String, _ repeating: RepeatingFormat, step: Step, at path: JSONPath, options: VerifyOptions,
                          into report: inout Divergences) -> (answer: JSON?, block: SubmittedBlock) {
        var block = SubmittedBlock()
        if options.unknownFieldsAreErrors { unknownFields(o, allowed: blockFields, at: path, into: &report) }
        let type = blockType(repeating)
        if let given = o["type"], given.stringValue != type {
            report.add(.wrongType, "\"\(name)\" is a repeating block (\(type)), not \(given.stringValue ?? given.typeName).",
                       at: path.key("type"), step: step.identifier, item: name)
        }
        guard case .array(let list)? = o["instances"] else {
            report.add(.wrongType, "A repeating block's result has \"instances\": an array of its instances.", at: path.key("instances"),
                       step: step.identifier, item: name)
            return (nil, block)
        }
        var values: [JSON] = []
        values.reserveCapacity(list.count)
        for (k, entry) in list.enumerated() {
            let here = path.key("instances").index(k)
            switch repeating.content {
            case .group(let form):
                block.instances.append(here)
                var instance = JSONObject()
                var places: [String: JSONPath] = [:]
                defer {
                    values.append(.object(instance))
                    block.places.append(places)
                }
                guard case .object(let io) = entry, case .array(let results)? = io["results"] else {
                    report.add(.wrongType, "An instance of \"\(name)\" is an object with \"results\": its items' question results.", at: here,
                               step: step.identifier, item: name)
                    continue
                }
                if options.unknownFieldsAreErrors { unknownFields(io, allowed: instanceFields, at: here, into: &report) }
                if let id = io["identifier"], id.stringValue != name {
                    report.add(.unknownIdentifier, "An instance of \"\(name)\" names another block.", at: here.key("identifier"), step: step.identifier, item: name)
                }
                for (j, q) in results.enumerated() {
                    let qp = here.key("results").index(j)
                    guard case .object(let qo) = q, let inner = qo["identifier"]?.stringValue else {
                        report.add(.wrongType, "A question result is an object with an \"identifier\".", at: qp, step: step.identifier, item: name)
                        continue
                    }
                    guard let item = form.item(inner) else {
                        report.add(.unknownIdentifier, "The repeating group \"\(name)\" has no item \"\(inner)\".", at: qp.key("identifier"),
                                   step: step.identifier, item: name)
                        continue
                    }
                    guard places[inner] == nil else {
                        report.add(.duplicateItem, "Instance \(k + 1) of \"\(name)\" lists \"\(inner)\" twice.", at: qp, step: step.identifier, item: name)
                        continue
                    }
                    places[inner] = qp.key("answer")
                    if let nested = item.format.repeating {
                        // A repeating question in the instance: its own instances, its answers.
                        if let answer = readBlock(qo, name: inner, nested, step: step, at: qp, options: options, into: &report).answer {
                            instance[inner] = answer
                        }
                    } else if let answer = readQuestion(qo, name: inner, format: item.format, step: step, at: qp, options: options, into: &report) {
                        instance[inner] = answer
                    }
                }
            case .question(let format):
                block.instances.append(here.key("answer"))
                guard case .object(let qo) = entry else {
                    report.add(.wrongType, "An instance of \"\(name)\" is a question result.", at: here, step: step.identifier, item: name)
                    values.append(.null)
                    continue
                }
                if let id = qo["identifier"], id.stringValue != name {
                    report.add(.unknownIdentifier, "An instance of \"\(name)\" names another question.", at: here.key("identifier"), step: step.identifier, item: name)
                }
                // A null answer keeps its instance (empty), as the session does.
                values.append(readQuestion(qo, name: name, format: format, step: step, at: here, extraFields: ["index"], options: options, into: &report) ?? .null)
            }
        }
        return (values.isEmpty ? nil : .array(values), block)
    }
}
