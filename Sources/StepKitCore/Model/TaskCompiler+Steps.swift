import StepKitBase

// Steps and sections: the first pass, which flattens sections and compiles answer formats.

extension TaskCompiler {
    private static let commonStepKeys = ["title", "text", "detailText", "footnote"]
    private static let stepTypes = ["instruction", "completion", "question", "form", "section", "active", "countdown", "wait", "review", "page"] + HostedStep.types + GameSettings.stepTypes + ["sensorTask"]
    // Every type the format reserves is implemented now; kept for a type reserved later.
    private static let laterStepTypes: [String] = []

    static func compileSteps(_ items: [JSON], at path: JSONPath, in sections: [Int], _ b: Builder) {
        for (i, item) in items.enumerated() {
            let itemPath = path.index(i)
            // Identifiers are checked for duplicates even on steps with other problems.
            if let id = item.objectValue?["identifier"]?.stringValue, !id.isEmpty, !b.seen.insert(id).inserted {
                b.d.error("duplicateIdentifier", "Another step or section is already called \"\(id)\".", at: itemPath.key("identifier"))
                // Its other problems are reported too; the step itself is left out.
                if item.objectValue?["type"] == .string("sensorTask") {
                    _ = SensorTaskTemplate.expand(item, at: itemPath, b.d)
                } else if item.objectValue?["type"] != .string("section") {
                    _ = compileStep(item, at: itemPath, in: sections, b)
                }
                continue
            }
            if item.objectValue?["type"] == .string("section") {
                compileSection(item, at: itemPath, in: sections, b)
                continue
            }
            // A sensor task template becomes the section of ordinary steps it stands for.
            if item.objectValue?["type"] == .string("sensorTask") {
                if let section = SensorTaskTemplate.expand(item, at: itemPath, b.d) { compileSection(section, at: itemPath, in: sections, b) }
                continue
            }
            guard let step = compileStep(item, at: itemPath, in: sections, b) else { continue }
            b.stepIndex[step.identifier] = b.steps.count
            b.steps.append(step)
        }
    }

    private static func compileSection(_ value: JSON, at path: JSONPath, in outer: [Int], _ b: Builder) {
        guard let r = FieldReader(value, at: path, b.d, what: "a section") else { return }
        _ = r.string("type")
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        r.accept(strings: commonStepKeys)
        let visibleWhen = r.value("visibleWhen")
        let shuffled = r.bool("shuffleSteps") ?? false
        // A repeating section (`TaskCompiler+StepBlocks`): its steps once per instance.
        let repeatValue = r.value("repeat")
        let first = b.steps.count
        let index = b.sections.count
        // Reserve the section's place so nested sections get later indexes.
        b.sections.append(Section(identifier: identifier ?? "", firstStep: first, lastStep: first, sections: outer))
        if let items = r.array("steps", required: true) {
            if items.isEmpty {
                b.d.error("emptySection", "A section needs at least one step.", at: path.key("steps"))
            }
            compileSteps(items, at: path.key("steps"), in: outer + [index], b)
            // A shuffled section moves steps among its positions: a nested section would be
            // cut apart (docs/randomization.md).
            // (A sensor task template is a section too.)
            if shuffled, let nested = items.firstIndex(where: { [.string("section"), .string("sensorTask")].contains($0.objectValue?["type"]) }) {
                b.d.error("sectionInShuffledSection", "A section with \"shuffleSteps\" holds steps only, not sections.",
                          at: path.key("steps").index(nested))
            }
            if let repeatValue, let bounds = stepBlockBounds(repeatValue, items: items, shuffled: shuffled, at: path, b.d) {
                b.pendingStepBlocks.append((index, bounds, path))
            }
        }
        r.finish()
        let last = b.steps.count - 1
        b.sections[index] = Section(identifier: identifier ?? "", firstStep: first, lastStep: max(first, last), sections: outer, definitionPath: path,
                                    shuffled: shuffled)
        if let identifier, last >= first { b.sectionIndex[identifier] = index }
        if let visibleWhen { b.pendingSections.append((index, visibleWhen, path.key("visibleWhen"))) }
    }

    private static func compileStep(_ value: JSON, at path: JSONPath, in sections: [Int], _ b: Builder) -> Step? {
        let d = b.d
        guard let r = FieldReader(value, at: path, d, what: "a step") else { return nil }
        let before = d.problems.count
        let type = r.string("type", required: true)
        let identifier = r.string("identifier", required: true, nonEmpty: true)
        let optional = r.bool("optional") ?? false
        // An author's mark that the task may deliberately end after this step (a screening
        // that stops); only the checker reads it (`endsBeforeCompletion`).
        _ = r.bool("terminal")
        // Kept in place when its section shuffles its steps (`Randomization`, read from the
        // presentation).
        _ = r.bool("pinned")
        r.accept(strings: commonStepKeys)
        // Read again, with their bounds, by `compileTimeLimits` once every step is known.
        _ = r.value("timeLimit")
        _ = r.value("onTimeLimit")
        var calculationNames: [String] = []
        for (i, name) in (r.array("calculations") ?? []).enumerated() {
            if let name = name.stringValue { calculationNames.append(name) } else {
                d.error("wrongType", "\"calculations\" lists calculation names (strings).", at: path.key("calculations").index(i))
            }
        }
        var content: Step.Content?
        var active: ActiveStepSettings?
        var hosted: TaskCompiler.HostedCompiled?
        switch type {
        case "instruction", "completion":
            _ = r.string("image")
            content = .message
        case "active", "countdown", "wait":
            let kind = ActiveStepSettings.Kind(rawValue: type ?? "") ?? .active
            active = ActiveStepSettings.parse(r, kind: kind, path: path, seenRecorders: &b.recorders)
            content = .message
        case "question":
            _ = r.string("placeholder")
            _ = r.string("question")
            if let initial = r.value("initial") { b.pendingInitials.append((b.steps.count, nil, initial, path.key("initial"))) }
            let repeatValue = r.value("repeat")
            if let format = r.value("answerFormat", required: true).map({ withSourceChoices($0, b) }) {
                content = AnswerFormat.compile(format, at: path.key("answerFormat"), d).map { .question($0) }
                // `repeat`: several answers to the one question (`RepeatingFormat`).
                if let repeatValue, case .question(let single)? = content {
                    content = repeatingFormat(repeatValue, groupItems: nil, single: single, at: path, stepIndex: b.steps.count, item: nil, b).map { .question($0) }
                }
                // By its type and not a cast (a cast on every question step): a repeating
                // question keeps its question's type, and its rules are the repeat's.
                if case .question(let f)? = content, f.repeating == nil, f.type == "confirmText" {
                    d.error("confirmTextOutsideForm", "A \"confirmText\" answer confirms another item of the same form; use it in a form step.", at: path.key("answerFormat").key("type"))
                }
            }
        case "form":
            _ = r.bool("useCardView")
            // The items are shown in the session's seeded order (`Randomization`).
            _ = r.bool("shuffleItems")
            if let validations = r.value("validations") {
                b.pendingValidations.append((b.steps.count, validations, path.key("validations")))
            }
            if let items = r.array("formItems", required: true) {
                content = compileForm(items, at: path.key("formItems"), stepIndex: b.steps.count, b).map { .form($0) }
            }
        case "review":
            // Lists the answers of the path before it (`Session+Review.swift`); it asks nothing.
            content = .message
        case "page":
            if let validations = r.value("validations") {
                b.pendingValidations.append((b.steps.count, validations, path.key("validations")))
            }
            if let subSteps = r.array("steps", required: true) {
                content = compilePage(subSteps, at: path.key("steps"), stepIndex: b.steps.count, b).map { .form($0) }
            }
        // After the literal types, which most steps have: each `where` searches a list of names.
        case let game? where GameSettings.stepTypes.contains(game):
            // A game is an active step that starts by itself and moves on when the game is over.
            active = ActiveStepSettings.parse(r, kind: .active, path: path, seenRecorders: &b.recorders, game: true)
            active?.game = GameSettings.parse(type: game, r, at: path)
            if active?.game == nil { active = nil }
            content = .message
        case let other? where HostedStep.types.contains(other):
            _ = r.string("image")
            hosted = compileHosted(other, r, at: path, b)
            content = hosted?.content
        case let other?:
            let later = laterStepTypes.contains(other) ? " (\"\(other)\" steps are not supported yet)" : ""
            d.error("unknownStepType", "Unknown step type \"\(other)\"\(later); expected one of: " + stepTypes.joined(separator: ", ") + ".", at: path.key("type"))
            return nil
        case nil:
            return nil
        }
        r.finish()
        guard let type, let identifier, let content, d.problems.count == before else { return nil }
        var presentation = r.object
        presentation["optional"] = .bool(optional)
        hosted?.presentation.forEachEntry { key, value in presentation[key] = value }
        switch content {
        case .message:
            break
        case .question(let format):
            presentation["answerFormat"] = .object(format.presentation)
            if presentation["repeat"] != nil { presentation["repeat"] = effectiveRepeat(presentation["repeat"], format) }
        case .form(let form) where type == "page":
            // A host renders a page's sub-steps as it renders a form's items (`TaskCompiler+Page`).
            presentation["formItems"] = withEffectiveFormats(.array(presentation["steps"]?.arrayValue?.map(pageEntry) ?? []), of: form)
        case .form(let form):
            presentation["formItems"] = presentation["formItems"].map { withEffectiveFormats($0, of: form) }
        }
        if let active {
            // The host reads the effective settings, ResearchKit's defaults included.
            presentation["stepDuration"] = .number(Double(active.duration) / 1000)
            presentation["shouldStartTimerAutomatically"] = .bool(active.startsAutomatically)
            presentation["shouldContinueOnFinish"] = .bool(active.continuesOnFinish)
        }
        return Step(type: type, identifier: identifier, optional: optional, content: content, presentation: presentation,
                    sections: sections, definitionPath: path, active: active, calculationNames: calculationNames, hosted: hosted?.hosted)
    }

    /// A form's `formItems` with each item's answer format as `AnswerFormat.presentation`.
    private static func withEffectiveFormats(_ entries: JSON, of form: Form) -> JSON {
        guard case .array(let items) = entries else { return entries }
        return .array(items.map { entry in
            guard var item = entry.objectValue, let id = item["identifier"]?.stringValue,
                  let format = form.item(id)?.format else { return entry }
            if item["repeat"] != nil { item["repeat"] = effectiveRepeat(item["repeat"], format) }
            if let group = (format.rules as? RepeatingFormat)?.form, let inner = item["items"] {
                // A repeating group's items, each with its effective format.
                item["items"] = withEffectiveFormats(inner, of: group)
                return .object(item)
            }
            item["answerFormat"] = .object(format.presentation)
            return .object(item)
        })
    }
}
