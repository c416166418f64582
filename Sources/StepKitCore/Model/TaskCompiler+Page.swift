import StepKitBase

// Page steps (ResearchKit's `ORKPageStep`, `ORKNavigablePageStep`): sub-steps shown together,
// compiled as a form whose items are the sub-steps, so a page has a form's one answer, one
// combined validation (required sub-steps, `validations`) and item visibility.

extension TaskCompiler {
    /// The keys a page's sub-step may have: a question step's, or an instruction step's.
    private static let subStepKeys: Set<String> = ["type", "identifier", "title", "question", "text", "detailText", "placeholder",
                                                    "optional", "answerFormat", "visibleWhen", "initial", "learnMoreText"]

    static func compilePage(_ subSteps: [JSON], at path: JSONPath, stepIndex: Int, _ b: Builder) -> Form? {
        let d = b.d
        let before = d.problems.count
        if subSteps.isEmpty { d.error("emptyPage", "A page needs at least one question sub-step.", at: path) }
        for (i, sub) in subSteps.enumerated() {
            guard let o = sub.objectValue else {
                d.error("wrongType", "A page's sub-step is an object (a question or an instruction step).", at: path.index(i))
                continue
            }
            let type = o["type"]?.stringValue
            if type != "question" && type != "instruction" {
                d.error("unknownStepType", "A page's sub-step is a \"question\" or an \"instruction\" step, not \(o["type"].map { JSONWriter.string($0) } ?? "one without a type").",
                        at: path.index(i).key("type"))
            }
            if type == "instruction", o["answerFormat"] != nil {
                d.error("unknownKey", "An instruction sub-step asks nothing; make it a \"question\" to give it an answer format.", at: path.index(i).key("answerFormat"))
            }
            for key in o.keys where !subStepKeys.contains(key) {
                d.error("unknownKey", "Unknown key \"\(key)\" in a page's sub-step.", at: path.index(i).key(key))
            }
        }
        guard d.problems.count == before else { return nil }
        return compileForm(subSteps.map(pageEntry), at: path, stepIndex: stepIndex, b)
    }

    /// A sub-step as a form entry: a question as an item (its `question`, else `title`, is the
    /// item's text, and its `text` the detail), an instruction as a section header.
    static func pageEntry(_ sub: JSON) -> JSON {
        guard let o = sub.objectValue else { return sub }
        var entry = JSONObject()
        let heading = o["question"] ?? o["title"]
        if o["type"]?.stringValue == "instruction" {
            entry["sectionTitle"] = heading ?? o["text"] ?? o["identifier"] ?? .string("")
            if heading != nil, let text = o["text"] { entry["detailText"] = text } else if let detail = o["detailText"] { entry["detailText"] = detail }
            // Hides the sub-steps after it, up to the next instruction, as a form's header does.
            if let visibleWhen = o["visibleWhen"] { entry["visibleWhen"] = visibleWhen }
            return .object(entry)
        }
        for (key, value) in o.entries where !["type", "title", "question", "text", "detailText"].contains(key) { entry[key] = value }
        if let heading { entry["text"] = heading } else if let text = o["text"] { entry["text"] = text }
        if heading != nil, let text = o["text"] { entry["detailText"] = text } else if let detail = o["detailText"] { entry["detailText"] = detail }
        return .object(entry)
    }
}
