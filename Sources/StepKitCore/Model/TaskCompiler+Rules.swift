import StepKitBase

// Rules keyed by step or section: navigation rules, skip rules, step modifiers.

extension TaskCompiler {
    /// Calls `body` on each entry of a rules object (step or section identifier → rule) with its
    /// path and whose it is (nil: no step or section of this task, reported); reports a `value`
    /// that is not an object (`"name" is an object: step identifier → shape.`).
    /// Each entry compiles as a rule of its step (`CompileScope.owned`: inside a repeating
    /// section it reads the instance the participant is in).
    private static func forEachEntry(of value: JSON, _ name: String, shape: String, what: String, _ b: Builder, _ scope: CompileScope,
                                     _ body: (_ key: String, _ value: JSON, _ path: JSONPath, _ owner: Routing.Owner?) -> Void) {
        let path = JSONPath.root.key(name)
        guard case .object(let object) = value else {
            b.d.error("wrongType", "\"\(name)\" is an object: step identifier → \(shape).", at: path)
            return
        }
        // Read in place (`entries` copied every entry out), each entry's path made once.
        object.forEachEntry { key, entry in
            let entryPath = path.key(key)
            let owner = owner(key, at: entryPath, b, what: what)
            var step: Int?
            if case .step(let i)? = owner { step = i }
            scope.owned(by: step) { body(key, entry, entryPath, owner) }
        }
    }

    private static func owner(_ key: String, at path: JSONPath, _ b: Builder, what: String) -> Routing.Owner? {
        if let i = b.stepIndex[key] { return .step(i) }
        if let s = b.sectionIndex[key] { return .section(s) }
        if !b.seen.contains(key) {
            b.d.error("unknownStep", "\(what) names \"\(key)\", which is no step or section of this task.", at: path)
        }
        return nil
    }

    private static func destination(_ value: JSON, at path: JSONPath, _ b: Builder) -> Destination? {
        guard let id = value.stringValue else {
            b.d.error("wrongType", "A destination is a step or section identifier, or \"$end\".", at: path)
            return nil
        }
        if id == "$end" { return .end }
        if let i = b.stepIndex[id] { return .step(i) }
        if let s = b.sectionIndex[id] { return .section(s) }
        if !b.seen.contains(id) {
            b.d.error("unknownDestination", "No step or section is called \"\(id)\".", at: path)
        }
        return nil
    }

    /// Read once, not made per rule (an array literal is allocated on each call).
    private static let navigationRuleTypes = ["predicate", "direct"]

    static func compileNavigationRules(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        forEachEntry(of: value, "navigationRules", shape: "rule", what: "A navigation rule", b, predicates.scope) { _, ruleValue, rulePath, target in
            guard let r = FieldReader(ruleValue, at: rulePath, b.d, what: "a navigation rule") else { return }
            var rule: NavigationRule?
            switch r.choice("type", of: navigationRuleTypes, required: true) {
            case "direct":
                rule = r.value("destination", required: true).flatMap { destination($0, at: rulePath.key("destination"), b) }.map { .direct($0) }
            case "predicate":
                var branches: [NavigationRule.Branch] = []
                var complete = true
                let branchesPath = rulePath.key("branches")
                for (i, item) in (r.array("branches", required: true) ?? []).enumerated() {
                    let branchPath = branchesPath.index(i)
                    guard let br = FieldReader(item, at: branchPath, b.d, what: "a branch") else { complete = false; continue }
                    let condition = br.value("when", required: true)
                    let when = condition.flatMap { predicates.compile($0, at: branchPath.key("when")) }
                    let to = br.value("destination", required: true).flatMap { destination($0, at: branchPath.key("destination"), b) }
                    br.finish()
                    if let when, let condition, let to {
                        branches.append(.init(when: when, condition: condition, destination: to))
                    } else {
                        complete = false
                    }
                }
                let fallback = r.value("defaultDestination").flatMap { destination($0, at: rulePath.key("defaultDestination"), b) }
                if r.has("defaultDestination") && fallback == nil { complete = false }
                if complete { rule = .predicate(branches: branches, defaultDestination: fallback) }
            default:
                break
            }
            r.finish()
            switch (target, rule) {
            case (.step(let i)?, let rule?): rules.stepRules[i] = rule
            case (.section(let s)?, let rule?): rules.sectionRules[s] = rule
            default: break
            }
        }
    }

    static func compileSkipRules(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        forEachEntry(of: value, "skipRules", shape: "predicate", what: "A skip rule", b, predicates.scope) { _, predicateValue, predicatePath, target in
            guard let predicate = predicates.compile(predicateValue, at: predicatePath) else { return }
            switch target {
            case .step(let i)?: rules.stepSkips[i] = predicate
            case .section(let s)?: rules.sectionSkips[s] = predicate
            case nil: break
            }
        }
    }

    static func compileModifiers(_ value: JSON, _ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        forEachEntry(of: value, "stepModifiers", shape: "{\"when\", \"set\"}", what: "A step modifier", b, predicates.scope) { key, modifierValue, modifierPath, target in
            if case .section? = target {
                b.d.error("sectionModifier", "Step modifiers apply to steps; \"\(key)\" is a section.", at: modifierPath)
            }
            guard let r = FieldReader(modifierValue, at: modifierPath, b.d, what: "a step modifier") else { return }
            let when = r.value("when", required: true).flatMap { predicates.compile($0, at: modifierPath.key("when")) }
            var fields = JSONObject()
            if let set = r.value("set", required: true) {
                if case .object(let object) = set, object.count > 0 {
                    for (field, fieldValue) in object.entries {
                        if !StepModifier.settableFields.contains(field) {
                            b.d.error("unknownKey", "A step modifier sets " + StepModifier.settableFields.joined(separator: ", ") + "; not \"\(field)\".", at: modifierPath.key("set").key(field))
                        } else if fieldValue.stringValue == nil {
                            b.d.error("wrongType", "\"\(field)\" must be a string.", at: modifierPath.key("set").key(field))
                        } else {
                            fields[field] = fieldValue
                        }
                    }
                } else {
                    b.d.error("wrongType", "\"set\" is a non-empty object of the fields to set.", at: modifierPath.key("set"))
                }
            }
            r.finish()
            if case .step(let i)? = target, let when {
                rules.modifiers[i] = StepModifier(when: when, fields: fields)
            }
        }
    }
}
