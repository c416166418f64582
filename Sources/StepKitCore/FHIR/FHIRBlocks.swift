import StepKitBase

/// The repeating groups of an imported Questionnaire, and how a read of an item inside one is
/// written (docs/fhir.md, "Repeating groups"). FHIR R4 (`Questionnaire.item.enableWhen.question`)
/// says a linkId that occurs several times means "the nearest question occurrence reachable by
/// tracing first the ancestor axis and then the preceding axis and then the following axis":
/// - read from inside the same group (a condition, a variable or an expression on the group or
///   on one of its items): the item of the same repetition, StepKit's read in the instance in
///   scope;
/// - read from after the group: the nearest preceding occurrence, the last repetition's
///   (`"index": -1`);
/// - read from before it: the nearest following, the first repetition's (`"index": 0`).
struct FHIRBlocks {
    /// Each item inside a repeating group: the group's linkId (groups do not nest).
    private(set) var groupOf: [String: String] = [:]
    /// Each item's position in document order.
    private(set) var position: [String: Int] = [:]

    init() {}

    init(_ top: [FHIRItem], prepared: [String: FHIRPrepared]) {
        var next = 0
        func walk(_ items: [FHIRItem], group: String?) {
            for item in items {
                position[item.linkId] = next
                next += 1
                if let group { groupOf[item.linkId] = group }
                let repeating = item.type == "group" && prepared[item.linkId]?.extra["repeat"] != nil
                walk(item.children, group: group ?? (repeating ? item.linkId : nil))
            }
        }
        walk(top, group: nil)
    }

    /// The group `context` is in, or is (nil: outside every repeating group).
    func scope(of context: String?) -> String? {
        guard let context else { return nil }
        return groupOf[context] ?? (groupOf.values.contains(context) ? context : nil)
    }

    /// The selector of `linkId`'s answer read from `context` (an item's linkId; nil: the
    /// Questionnaire), at `location` (its step and form item).
    func selector(_ linkId: String, location: (step: String, item: String?), context: String?) -> JSON {
        guard let group = groupOf[linkId] else {
            return location.item.map { .object(["step": .string(location.step), "item": .string($0)]) } ?? .string(location.step)
        }
        var read = JSONObject(["step": .string(location.step), "block": .string(group), "item": .string(linkId)])
        if scope(of: context) != group {
            let before = (position[group] ?? 0) < (context.flatMap { position[$0] } ?? 0)
            read["index"] = .int(before ? -1 : 0)
        }
        return .object(read)
    }
}

extension FHIRBlocks {
    /// The repeating group `group` as a block of its form step (`{"step", "block"}`), the step
    /// its asked items are on; nil when none of them is asked.
    func reference(_ group: String, locations: [String: (step: String, item: String?)]) -> JSON? {
        var step: String?
        for (linkId, g) in groupOf where g == group {
            if let loc = locations[linkId] { step = loc.step; break }
        }
        return step.map { .object(["step": .string($0), "block": .string(group)]) }
    }

    /// Whether `group` is a repeating group.
    func isRepeatingGroup(_ group: String) -> Bool { groupOf.values.contains(group) }

    /// `{key: sel}` for an item outside repeating groups; for one inside, the sum over every
    /// repetition (`%resource.answers()` reads them all): `{"sum": {"over": ..., "of": {key: read}}}`.
    func everyRepetition(_ linkId: String, _ selector: JSON, of key: String) -> JSON {
        guard let group = groupOf[linkId], case .object(var read) = selector, let step = read["step"] else { return .object([key: selector]) }
        read["index"] = nil
        return .object(["sum": .object(["over": .object(["step": step, "block": .string(group)]), "of": .object([key: .object(read)])])])
    }
}
