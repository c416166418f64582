import StepKitBase

/// A FHIR R4 QuestionnaireResponse read into answers by step (the inverse of
/// `FHIR/FHIRResponse.swift`: each item's `answer` back to the StepKit answer its step takes),
/// with the items whose answers the engine computes (calculated, fixed) kept aside to compare
/// with the engine's own response after the replay.
struct SubmittedResponse {
    var steps: [Int: SubmittedStep] = [:]
    /// `status` is "in-progress": the response does not claim every required answer.
    var inProgress = false
    /// Every answered item: where its answers are, what they are, and which repetition it is
    /// in (`place`: "" outside repeating groups, `meds[2]/` in the third item of `meds` in the
    /// response; `SubmittedResponse.place`).
    private var answered: [(linkId: String, place: String, path: JSONPath, answers: [JSON])] = []
    /// `place + linkId` of each entry of `answered`: an item is compared once in each repetition.
    private var answeredIds = Set<String>()
    /// Where each repetition is in the submission, by its place (`meds[2]/`).
    private var repetitionPaths: [String: JSONPath] = [:]
    /// How many items of a repeating group have been read, by `place + linkId`.
    private var repetitions: [String: Int] = [:]
    private var nodes: [String: FHIRNode] = [:]
    /// A repeating group's instances as they are read (one response item each), by step and
    /// block: put into the steps' answers once every item is read.
    private var instances: [Int: [String: [JSON]]] = [:]

    private static let topFields: Set<String> = ["resourceType", "id", "meta", "text", "questionnaire", "status", "authored", "author", "subject",
                                                 "source", "encounter", "basedOn", "partOf", "identifier", "language", "item"]
    private static let itemFields: Set<String> = ["linkId", "text", "definition", "answer", "item"]

    static func read(_ object: JSONObject, task: Task, layout: FHIRLayout, options: VerifyOptions, into report: inout Divergences) -> SubmittedResponse? {
        if let claimed = object["questionnaire"], let own = layout.questionnaire {
            let text = claimed.stringValue ?? ""
            let (url, version) = split(text), (ownURL, ownVersion) = split(own)
            guard url == ownURL else {
                report.add(.otherTask, "The response answers the Questionnaire \"\(text)\", not \"\(own)\".", at: .root.key("questionnaire"))
                return nil
            }
            if let version, version != ownVersion {
                report.add(.otherVersion, "The response answers version \"\(version)\" of the Questionnaire, not \"\(ownVersion ?? "(none)")\".",
                           at: .root.key("questionnaire"))
                return nil
            }
        }
        var response = SubmittedResponse()
        response.index(layout.items, depth: 0)
        if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(object, allowed: topFields, at: .root, into: &report) }
        if let status = object["status"], status.stringValue == nil {
            report.add(.wrongType, "\"status\" is a string.", at: .root.key("status"))
        }
        response.inProgress = object["status"]?.stringValue == "in-progress"
        if let items = object["item"] {
            guard case .array(let list) = items else {
                report.add(.wrongType, "\"item\" is an array.", at: .root.key("item"))
                return response
            }
            response.readItems(list, at: .root.key("item"), depth: 0, place: "", task: task, options: options, into: &report)
        }
        for (index, blocks) in response.instances {
            guard var s = response.steps[index] else { continue }
            var form = s.answer?.objectValue ?? JSONObject()
            for (block, list) in blocks { form[block] = .array(list) }
            s.answer = .object(form)
            response.steps[index] = s
        }
        return response
    }

    private static func split(_ canonical: String) -> (String, String?) {
        guard let bar = canonical.firstIndex(of: "|") else { return (canonical, nil) }
        return (String(canonical[..<bar]), String(canonical[canonical.index(after: bar)...]))
    }

    private mutating func index(_ list: [FHIRNode], depth: Int) {
        guard depth <= FHIRItem.maxDepth else { return }
        for node in list {
            nodes[node.linkId] = nodes[node.linkId] ?? node
            index(node.children, depth: depth + 1)
        }
    }

    /// The place of the `k`th item (from 0) of the repeating group `linkId` at `place`: what an
    /// item inside it is compared by, so that each repetition is checked, not only the first.
    /// The submitted response and the engine's are read alike (the replay takes each item of a
    /// repeating group as one instance, in order), so the same place is the same repetition.
    static func place(_ place: String, group linkId: String, _ k: Int) -> String {
        place + linkId + "[" + String(k) + "]/"
    }

    private mutating func readItems(_ list: [JSON], at path: JSONPath, depth: Int, place: String, task: Task, options: VerifyOptions,
                                    into report: inout Divergences) {
        guard depth <= SubmittedResult.maxNesting else {
            report.add(.wrongType, "Items nest deeper than \(SubmittedResult.maxNesting).", at: path)
            return
        }
        for (i, entry) in list.enumerated() {
            let here = path.index(i)
            guard case .object(let o) = entry, let linkId = o["linkId"]?.stringValue else {
                report.add(.wrongType, "A response item is an object with a \"linkId\".", at: here)
                continue
            }
            guard let node = nodes[linkId] else {
                report.add(.unknownIdentifier, "The Questionnaire has no item \"\(linkId)\".", at: here.key("linkId"), item: linkId)
                continue
            }
            if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(o, allowed: SubmittedResponse.itemFields, at: here, into: &report) }
            if node.repeating {
                readInstance(o, node: node, at: here, place: place, task: task, options: options, into: &report)
                continue
            }
            if case .array(let children)? = o["item"] {
                readItems(children, at: here.key("item"), depth: depth + 1, place: place, task: task, options: options, into: &report)
            }
            guard let answers = o["answer"] else { continue }
            guard case .array(let list) = answers else {
                report.add(.wrongType, "\"answer\" is an array.", at: here.key("answer"), item: linkId)
                continue
            }
            var values: [JSON] = []
            var positions: [JSONPath] = []
            for (j, a) in list.enumerated() {
                guard case .object(let ao) = a else {
                    report.add(.wrongType, "An answer is an object with one value[x].", at: here.key("answer").index(j), item: linkId)
                    continue
                }
                if case .array(let nested)? = ao["item"] {
                    readItems(nested, at: here.key("answer").index(j).key("item"), depth: depth + 1, place: place, task: task, options: options,
                              into: &report)
                }
                var value = ao
                value["item"] = nil
                values.append(.object(value))
                positions.append(here.key("answer").index(j))
            }
            guard !values.isEmpty else { continue }
            guard answeredIds.insert(place + linkId).inserted else {
                report.add(.duplicateItem, "The response lists \"\(linkId)\" twice.", at: here, item: linkId)
                continue
            }
            answered.append((linkId, place, here.key("answer"), values))
            guard let stepName = node.step, node.calculation == nil, node.fixedAnswers.isEmpty else { continue }
            guard let index = task.stepIndex[stepName] else { continue }
            let format = task.step(at: index)?.format(item: node.formItem)
            guard let value = SubmittedResponse.value(values, node: node, format: format) else {
                report.add(.wrongType, "The answer of \"\(linkId)\" is not a \(node.type) answer this item takes.", at: here.key("answer"),
                           step: stepName, item: linkId)
                continue
            }
            var s = steps[index] ?? SubmittedStep(step: index, path: here)
            if let item = node.formItem {
                var form = s.answer?.objectValue ?? JSONObject()
                form[item] = value
                s.answer = .object(form)
                s.places[item] = here.key("answer")
            } else {
                s.answer = value
                s.places[stepName] = here.key("answer")
            }
            // A repeating question: each answer is an instance.
            if format?.rules is RepeatingFormat { s.blocks[node.formItem ?? stepName] = SubmittedBlock(instances: positions) }
            steps[index] = s
        }
    }

    /// One response item of a repeating group: an instance of its block, its items' answers
    /// read as the group's items take them (`SubmittedInstances.swift`), a group inside it
    /// (part of each repetition) read through. Each item is compared with the engine's response
    /// in its own repetition (`place`).
    private mutating func readInstance(_ o: JSONObject, node: FHIRNode, at here: JSONPath, place: String, task: Task, options: VerifyOptions,
                                       into report: inout Divergences) {
        guard let stepName = node.step, let index = task.stepIndex[stepName], let block = node.formItem,
              let repeating = task.step(at: index)?.format(item: block)?.rules as? RepeatingFormat, let form = repeating.form else { return }
        if o["answer"] != nil {
            report.add(.wrongType, "A repeating group's item has no \"answer\": its items have.", at: here.key("answer"), step: stepName, item: node.linkId)
        }
        // Changed in place: a response may repeat the group a great many times.
        if steps[index] == nil { steps[index] = SubmittedStep(step: index, path: here) }
        let k = steps[index]?.blocks[block]?.instances.count ?? 0
        let occurrence = repetitions[place + node.linkId, default: 0]
        repetitions[place + node.linkId] = occurrence + 1
        let inside = SubmittedResponse.place(place, group: node.linkId, occurrence)
        repetitionPaths[inside] = here
        // A repetition past maxCount is refused whole by the replay (`tooManyInstances`, at its
        // item): its items are not compared, so a flood of repetitions adds nothing to compare.
        let compared = occurrence < repeating.bounds.maxCount
        var instance = JSONObject()
        var places: [String: JSONPath] = [:]
        func read(_ children: JSON?, of parent: FHIRNode, at path: JSONPath, depth: Int) {
            guard let children else { return }
            guard case .array(let list) = children else {
                report.add(.wrongType, "\"item\" is an array.", at: path.key("item"), item: parent.linkId)
                return
            }
            for (j, child) in list.enumerated() {
                let cp = path.key("item").index(j)
                guard case .object(let co) = child, let linkId = co["linkId"]?.stringValue else {
                    report.add(.wrongType, "A response item is an object with a \"linkId\".", at: cp)
                    continue
                }
                let inner = parent.children.first(where: { $0.linkId == linkId })
                if let inner, inner.repeating, let nestedForm = form.item(linkId)?.format.repeating?.form {
                    // A repetition of a repeating group nested in this one: an instance of the
                    // inner block, in this instance (R4 nests them so); the replay adds it.
                    var list = instance[linkId]?.arrayValue ?? []
                    list.append(.object(readNestedInstance(co, node: inner, form: nestedForm, at: cp, stepName: stepName, options: options, into: &report)))
                    instance[linkId] = .array(list)
                    if places[linkId] == nil { places[linkId] = cp }
                    continue
                }
                if let inner, inner.calculation != nil || !inner.fixedAnswers.isEmpty {
                    // A calculated or fixed item, given per repetition: compared with the
                    // engine's response in this repetition.
                    if compared, case .array(let given)? = co["answer"], !given.isEmpty {
                        if answeredIds.insert(inside + linkId).inserted {
                            answered.append((linkId, inside, cp.key("answer"), given))
                        } else {
                            report.add(.duplicateItem, "Repetition \(k + 1) of \"\(node.linkId)\" lists \"\(linkId)\" twice.", at: cp, item: linkId)
                        }
                    }
                    continue
                }
                if let inner, inner.type == "group", !inner.repeating, depth < FHIRItem.maxDepth {
                    // A group inside the repeating group: its items are the repetition's.
                    if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(co, allowed: SubmittedResponse.itemFields, at: cp, into: &report) }
                    read(co["item"], of: inner, at: cp, depth: depth + 1)
                    continue
                }
                guard let inner, let format = form.item(linkId)?.format else {
                    report.add(.unknownIdentifier, "The repeating group \"\(node.linkId)\" has no item \"\(linkId)\".", at: cp.key("linkId"), item: linkId)
                    continue
                }
                let twice = places[linkId] == nil ? nil : "Repetition \(k + 1) of \"\(node.linkId)\" lists \"\(linkId)\" twice."
                guard let given = SubmittedResponse.repetitionAnswers(co, item: linkId, at: cp, listedTwice: twice, options: options, into: &report) else {
                    continue
                }
                places[linkId] = cp.key("answer")
                // Compared with the engine's response in this repetition (enabled or not).
                if compared, answeredIds.insert(inside + linkId).inserted { answered.append((linkId, inside, cp.key("answer"), given)) }
                guard let value = SubmittedResponse.repetitionValue(given, node: inner, format: format, at: cp, stepName: stepName, into: &report) else {
                    continue
                }
                instance[linkId] = value
            }
        }
        read(o["item"], of: node, at: here, depth: 0)
        steps[index]?.blocks[block, default: SubmittedBlock()].instances.append(here)
        steps[index]?.blocks[block]?.places.append(places)
        if steps[index]?.places[block] == nil { steps[index]?.places[block] = here }
        instances[index, default: [:]][block, default: []].append(.object(instance))
    }

    /// One response item of a repeating group nested in another's repetition: the inner
    /// instance's answers (its items are questions only: `FHIRAnswerFormat.nests`).
    private mutating func readNestedInstance(_ o: JSONObject, node: FHIRNode, form: Form, at here: JSONPath, stepName: String, options: VerifyOptions,
                                             into report: inout Divergences) -> JSONObject {
        if o["answer"] != nil {
            report.add(.wrongType, "A repeating group's item has no \"answer\": its items have.", at: here.key("answer"), step: stepName, item: node.linkId)
        }
        var instance = JSONObject()
        guard let children = o["item"] else { return instance }
        guard case .array(let list) = children else {
            report.add(.wrongType, "\"item\" is an array.", at: here.key("item"), item: node.linkId)
            return instance
        }
        for (j, child) in list.enumerated() {
            let cp = here.key("item").index(j)
            guard case .object(let co) = child, let linkId = co["linkId"]?.stringValue else {
                report.add(.wrongType, "A response item is an object with a \"linkId\".", at: cp)
                continue
            }
            guard let inner = node.children.first(where: { $0.linkId == linkId }), let format = form.item(linkId)?.format else {
                report.add(.unknownIdentifier, "The repeating group \"\(node.linkId)\" has no item \"\(linkId)\".", at: cp.key("linkId"), item: linkId)
                continue
            }
            let twice = instance[linkId] == nil ? nil : "A repetition of \"\(node.linkId)\" lists \"\(linkId)\" twice."
            guard let given = SubmittedResponse.repetitionAnswers(co, item: linkId, at: cp, listedTwice: twice, options: options, into: &report) else {
                continue
            }
            // Its answers are checked by the replay (each set through the engine), not compared
            // again with the engine's response.
            guard let value = SubmittedResponse.repetitionValue(given, node: inner, format: format, at: cp, stepName: stepName, into: &report) else {
                continue
            }
            instance[linkId] = value
        }
        return instance
    }

    /// The answers a question item of a repetition gives, checked alike at any depth of
    /// repeating groups: nil when it gives none, or when it is reported (listed twice, per
    /// `listedTwice`, or its "answer" is not an array of answer objects).
    private static func repetitionAnswers(_ co: JSONObject, item linkId: String, at cp: JSONPath, listedTwice: String?, options: VerifyOptions,
                                          into report: inout Divergences) -> [JSON]? {
        if options.unknownFieldsAreErrors { SubmittedResult.unknownFields(co, allowed: SubmittedResponse.itemFields, at: cp, into: &report) }
        if let listedTwice {
            report.add(.duplicateItem, listedTwice, at: cp, item: linkId)
            return nil
        }
        guard let answers = co["answer"] else { return nil }
        guard case .array(let given) = answers, given.allSatisfy({ $0.objectValue != nil }) else {
            report.add(.wrongType, "\"answer\" is an array of objects with one value[x].", at: cp.key("answer"), item: linkId)
            return nil
        }
        return given.isEmpty ? nil : given
    }

    /// The StepKit value of a repetition item's answers; nil, reported, when they are not an
    /// answer the item takes.
    private static func repetitionValue(_ given: [JSON], node: FHIRNode, format: AnswerFormat, at cp: JSONPath, stepName: String,
                                        into report: inout Divergences) -> JSON? {
        guard let value = SubmittedResponse.value(given, node: node, format: format) else {
            report.add(.wrongType, "The answer of \"\(node.linkId)\" is not a \(node.type) answer this item takes.", at: cp.key("answer"),
                       step: stepName, item: node.linkId)
            return nil
        }
        return value
    }

    /// The StepKit answer of an item's FHIR answers (nil: they are not what the item takes).
    private static func value(_ answers: [JSON], node: FHIRNode, format: AnswerFormat?) -> JSON? {
        // A repeating question: each answer is one instance's, read as the question takes it.
        if let repeating = format?.rules as? RepeatingFormat, case .question(let one) = repeating.content {
            var list: [JSON] = []
            for a in answers {
                guard let v = value([a], node: node, format: one) else { return nil }
                list.append(v)
            }
            return .array(list)
        }
        /// The spelling the item's format takes: the export adds seconds to a time or a
        /// date-time written without them, which a format without seconds then refuses.
        func spelled(_ text: String, _ shorter: String) -> JSON {
            guard shorter != text, let format else { return .string(text) }
            if (try? format.validate(.string(text), previous: nil)) != nil { return .string(text) }
            return .string(shorter)
        }
        if !node.choices.isEmpty || node.otherValue != nil {
            var selected: [JSON] = []
            for a in answers {
                if let choice = node.choices.first(where: { $0.answer.sameValue(as: a) || sameCoding($0.answer, a) }) {
                    selected.append(choice.value)
                } else if let other = node.otherValue, let text = a.objectValue?["valueString"]?.stringValue {
                    selected.append(.object(["value": other, "text": .string(text)]))
                } else {
                    return nil
                }
            }
            return .array(selected)
        }
        guard answers.count == 1, let a = answers.first?.objectValue, a.count == 1, let (key, v) = a.entries.first else { return nil }
        switch (node.type, key) {
        case ("boolean", "valueBoolean"): return v.boolValue == nil ? nil : v
        case ("integer", "valueInteger"), ("decimal", "valueDecimal"): return v.numericValue == nil ? nil : v
        case ("quantity", "valueQuantity"): return v.objectValue?["value"].flatMap { $0.numericValue == nil ? nil : $0 }
        case ("date", "valueDate"): return v.stringValue == nil ? nil : v
        case ("dateTime", "valueDateTime"): return v.stringValue.map { spelled($0, withoutZeroSeconds($0)) }
        case ("time", "valueTime"): return v.stringValue.map { s in spelled(s, s.utf8.count == 8 && s.hasSuffix(":00") ? String(s.prefix(5)) : s) }
        case ("url", "valueUri"): return v.stringValue == nil ? nil : v
        case ("string", "valueString"), ("text", "valueString"): return v.stringValue == nil ? nil : v
        default: return nil
        }
    }

    /// Two `valueCoding` answers naming the same code of the same system (a display may differ).
    private static func sameCoding(_ a: JSON, _ b: JSON) -> Bool {
        guard let x = a.objectValue?["valueCoding"]?.objectValue, let y = b.objectValue?["valueCoding"]?.objectValue,
              let code = x["code"], let other = y["code"] else { return false }
        return code.sameValue(as: other) && (x["system"] ?? .null).sameValue(as: y["system"] ?? .null)
    }

    /// `2026-01-02T10:30:00Z` → `2026-01-02T10:30Z`: the inverse of `Session.fhirDateTime`.
    private static func withoutZeroSeconds(_ s: String) -> String {
        let b = Array(s.utf8)
        guard b.count > 19, b[10] == UInt8(ascii: "T"), b[16] == UInt8(ascii: ":"), b[17] == UInt8(ascii: "0"), b[18] == UInt8(ascii: "0"),
              b[19] != UInt8(ascii: ".") else { return s }
        return String(decoding: b[0..<16] + b[19...], as: UTF8.self)
    }

    /// After the replay: each submitted item the engine's response does not have is not
    /// enabled; a calculated or fixed item's answers are the engine's. Both are checked in each
    /// repetition of a repeating group, as R4 gives every repetition its own items: a value forged
    /// in the third repetition is found there, and an item disabled in one repetition only is
    /// found in that one.
    func compare(with engine: JSON, session: Session, options: VerifyOptions, into report: inout Divergences) {
        var computed: [String: (place: String, linkId: String, answers: [JSON])] = [:]
        var counts: [String: Int] = [:]
        collect(engine.objectValue?["item"]?.arrayValue ?? [], depth: 0, place: "", counts: &counts, into: &computed)
        // Where the replay reported something already, sorted: whether one is at or under a
        // path is a binary search (a response may have a thousand repetitions of a group).
        let reported = report.list.map(\.path.description).sorted()
        var added: [String] = []
        func reportedAtOrUnder(_ path: JSONPath) -> Bool {
            let p = path.description
            var lo = 0, hi = reported.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if reported[mid] < p { lo = mid + 1 } else { hi = mid }
            }
            return (lo < reported.count && reported[lo].hasPrefix(p)) || added.contains { $0.hasPrefix(p) }
        }
        for entry in answered {
            guard let node = nodes[entry.linkId] else { continue }
            let isComputed = node.calculation != nil || !node.fixedAnswers.isEmpty
            guard let own = computed[entry.place + entry.linkId]?.answers else {
                if reportedAtOrUnder(entry.path) { continue }
                added.append(entry.path.description)
                report.add(.disabledItem, "\"\(entry.linkId)\"\(SubmittedResponse.repetition(entry.place)) is answered, but the item is not enabled by the answers the response gives.",
                           at: entry.path, step: node.step, item: entry.linkId)
                continue
            }
            guard isComputed else { continue }
            if node.calculation != nil && options.ignoreCalculations { continue }
            if !JSON.array(own).sameValue(as: .array(entry.answers)) {
                added.append(entry.path.description)
                report.add(.calculationMismatch, "\"\(entry.linkId)\"\(SubmittedResponse.repetition(entry.place)) is submitted as \(JSONWriter.string(.array(entry.answers))); the engine gives \(JSONWriter.string(.array(own))).",
                           at: entry.path, item: entry.linkId)
            }
        }
        guard !options.ignoreCalculations else { return }
        for (key, (place, linkId, own)) in computed.sorted(by: { $0.key < $1.key }) {
            guard let node = nodes[linkId], node.calculation != nil, !answeredIds.contains(key) else { continue }
            report.add(.calculationMismatch, "The response lacks the calculated item \"\(linkId)\"\(SubmittedResponse.repetition(place)); the engine gives \(JSONWriter.string(.array(own))).",
                       at: place.isEmpty ? .root.key("item") : (repetitionPaths[place].map { $0.key("item") } ?? .root.key("item")), item: linkId)
        }
    }

    /// " in repetition 3 of "meds"" for an item at `place` (nothing outside repeating groups).
    private static func repetition(_ place: String) -> String {
        // The innermost repetition: the last `linkId[k]/` of the place.
        guard place.hasSuffix("]/"), let open = place.dropLast(2).lastIndex(of: "[") else { return "" }
        let before = place[..<open]
        let start = before.lastIndex(of: "/").map { before.index(after: $0) } ?? before.startIndex
        let k = Int(place[place.index(after: open)..<place.index(place.endIndex, offsetBy: -2)]) ?? 0
        return " in repetition \(k + 1) of \"\(before[start...])\""
    }

    /// The engine's answers by `place + linkId`, each repetition of a repeating group at its
    /// own place, counted as `readInstance` counts the submission's.
    private func collect(_ items: [JSON], depth: Int, place: String, counts: inout [String: Int],
                         into map: inout [String: (place: String, linkId: String, answers: [JSON])]) {
        guard depth <= FHIRItem.maxDepth + 1 else { return }
        for item in items {
            guard let o = item.objectValue, let linkId = o["linkId"]?.stringValue else { continue }
            var inside = place
            if nodes[linkId]?.repeating == true {
                let k = counts[place + linkId, default: 0]
                counts[place + linkId] = k + 1
                inside = SubmittedResponse.place(place, group: linkId, k)
            }
            if let answers = o["answer"]?.arrayValue, map[place + linkId] == nil {
                let own = answers.map { a in
                    guard case .object(var ao) = a else { return a }
                    if let nested = ao["item"]?.arrayValue { collect(nested, depth: depth + 1, place: inside, counts: &counts, into: &map) }
                    ao["item"] = nil
                    return .object(ao)
                }
                map[place + linkId] = (place, linkId, own)
            }
            if let children = o["item"]?.arrayValue { collect(children, depth: depth + 1, place: inside, counts: &counts, into: &map) }
        }
    }
}
