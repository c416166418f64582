import StepKitBase

// Repeating blocks: `repeat` on a form item with `items` (a repeating group) or with an
// `answerFormat` (a repeating question), and on a question step; their `count` expressions,
// compiled once every step is known.

/// A repeating block of a step: where it is (`item`: a form's group or repeating item; nil: the
/// question step itself), its bounds and its compiled `count`.
struct RepeatingBlock: Sendable {
    let item: String?
    let bounds: RepeatBounds
    /// `count`, of type number (nil: the block has none).
    var count: Expression?
}

extension TaskCompiler {
    /// What an item of a repeating group may not have: `items`, unless it is itself a repeating
    /// group (`repeat` with `items`: instances inside instances, one level deep). A `repeat`
    /// without `items` (a repeating question: several answers in each instance) is allowed,
    /// without a `count` of its own, and so is `initial` (evaluated in each instance).
    private static let groupItemUnsupported = ["items"]

    /// What an item of a repeating group nested in another may not have: its `visibleWhen` and
    /// `initial` would need a scope of two instances, which per-instance rules do not have yet.
    private static let nestedItemUnsupported = ["items", "visibleWhen", "initial"]

    /// Refuses what the items of a repeating group cannot have (`unsupportedInGroup`), at
    /// nesting depth `depth` (1: a step's repeating group; 2: one inside it).
    private static func checkGroupItems(_ groupItems: [JSON], depth: Int, at path: JSONPath, _ d: Diagnostics) {
        for (i, entry) in groupItems.enumerated() {
            let nestedGroup = depth == 1 && entry.objectValue?["repeat"] != nil
            for key in depth > 1 ? nestedItemUnsupported : groupItemUnsupported where entry.objectValue?[key] != nil && !nestedGroup {
                d.error("unsupportedInGroup", depth > 1
                        ? "An item of a repeating group inside a repeating group cannot have \"\(key)\" (groups nest one level, and the inner group's items have no conditions or initial values of their own)."
                        : "An item of a repeating group cannot have \"\(key)\" (a group does not nest, and its items' conditions are written on the block).",
                        at: path.key("items").index(i).key(key))
            }
            if nestedGroup, entry.objectValue?["initial"] != nil {
                d.error("unsupportedInGroup", "A repeating group inside a repeating group cannot have an \"initial\": its items' answers are given in each of its instances.",
                        at: path.key("items").index(i).key("initial"))
            }
            if let inner = entry.objectValue?["repeat"]?.objectValue, inner["count"] != nil {
                let what = entry.objectValue?["items"] != nil ? "A repeating group inside a repeating group cannot have a \"count\": its instances are added in each instance of the group around it."
                    : "A repeating question inside a repeating group cannot have a \"count\": its answers are given in each instance."
                d.error("unsupportedInGroup", what, at: path.key("items").index(i).key("repeat").key("count"))
            }
        }
    }

    /// A form item or question's `answerFormat` made repeating by `repeat` (`RepeatingFormat`):
    /// `groupItems` for a group of form items, else `single`, the question's own format.
    static func repeatingFormat(_ repeatValue: JSON, groupItems: [JSON]?, single: AnswerFormat?, at path: JSONPath,
                                stepIndex: Int, item: String?, _ b: Builder) -> AnswerFormat? {
        let d = b.d
        let before = d.problems.count
        let bounds = RepeatBounds.parse(repeatValue, at: path.key("repeat"), d)
        var content: RepeatingFormat.Content?
        if let groupItems {
            checkGroupItems(groupItems, depth: b.groupDepth + 1, at: path, d)
            guard d.problems.count == before else { return nil }
            // The group's items compile as a form of their own: a scratch builder keeps their
            // rules away from the step's.
            let scratch = Builder(d)
            scratch.groupDepth = b.groupDepth + 1
            if let form = compileForm(groupItems, at: path.key("items"), stepIndex: stepIndex, scratch) { content = .group(form) }
            // Its items' `visibleWhen` and `initial` hold per instance: compiled with the block in scope.
            if let item, b.groupDepth == 0 {
                for v in scratch.pendingVisibility { b.pendingInstanceVisibility.append((stepIndex, item, v.item, v.value, v.path)) }
                for v in scratch.pendingInitials {
                    if let inner = v.item { b.pendingInstanceInitials.append((stepIndex, item, inner, v.value, v.path)) }
                }
            }
        } else if let single {
            if single.rules is ConfirmTextFormat || single.rules is RepeatingFormat {
                d.error("unsupportedInGroup", "A \"\(single.type)\" answer cannot repeat.", at: path.key("repeat"))
            } else {
                content = .question(single)
            }
        }
        guard let bounds, let content, d.problems.count == before else { return nil }
        if let count = bounds.countSource { b.pendingCounts.append((stepIndex, item, count, path.key("repeat").key("count"))) }
        let rules = RepeatingFormat(content: content, bounds: bounds)
        let presentation: JSONObject
        switch content {
        case .group: presentation = JSONObject(["type": .string("group")])
        case .question(let format): presentation = format.presentation
        }
        return AnswerFormat(type: groupItems == nil ? (single?.type ?? "group") : "group", rules: rules, allowsDontKnow: false,
                            personalData: nil, presentation: presentation)
    }

    /// Whether a `count` reads instances of a block (directly or through the calculations it
    /// reads), reported: the instances a block has would then depend on instances.
    static func countReadsInstances(_ expression: Expression, _ predicates: PredicateCompiler, at path: JSONPath) -> Bool {
        var reads = expression.readsInstances
        var seen = Set<Int>()
        var pending = ExpressionDependencies(of: expression).calculations
        while !reads, let i = pending.popLast() {
            guard seen.insert(i).inserted else { continue }
            if predicates.calculations.perInstance[i] != nil { reads = true; break }
            if let c = predicates.calculations.compiled[i] {
                reads = c.expression.readsInstances
                pending += c.dependencies.calculations
            }
        }
        if reads {
            predicates.diagnostics.error("countReadsInstances", "A \"count\" may not read the instances of a repeating block (directly or through a calculation): how many instances there are would depend on the instances.", at: path)
        }
        return reads
    }

    /// Repeating groups' items' `visibleWhen`: each compiled with its block's instance in scope.
    static func compileInstanceVisibility(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        for pending in b.pendingInstanceVisibility {
            guard let step = b.steps[ifPresent: pending.step], case .form(let form) = step.content,
                  form.item(pending.block)?.format.rules is RepeatingFormat else { continue }
            let block = BlockReference.answer(step: pending.step, item: pending.block)
            guard let predicate = predicates.scope.within(block, { predicates.compile(pending.value, at: pending.path) }) else { continue }
            var list = rules.instanceVisibility[pending.step] ?? []
            if let i = list.firstIndex(where: { $0.block == pending.block }) {
                list[i].items.append((pending.item, predicate))
            } else {
                list.append((pending.block, [(pending.item, predicate)]))
            }
            rules.instanceVisibility[pending.step] = list
        }
    }

    /// The effective `repeat` of a block as the host is shown it: its bounds with their defaults.
    static func effectiveRepeat(_ value: JSON?, _ format: AnswerFormat) -> JSON? {
        guard var fields = value?.objectValue, let rules = format.rules as? RepeatingFormat else { return value }
        fields["minCount"] = .int(Int64(rules.bounds.minCount))
        fields["maxCount"] = .int(Int64(rules.bounds.maxCount))
        return .object(fields)
    }

    /// Every repeating block of every step, with its `count` compiled (a number expression).
    static func compileRepeats(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        compileInstanceVisibility(b, predicates, &rules)
        for (index, step) in b.steps.enumerated() {
            var blocks: [RepeatingBlock] = []
            switch step.content {
            case .message: break
            case .question(let format):
                if let r = format.rules as? RepeatingFormat { blocks.append(RepeatingBlock(item: nil, bounds: r.bounds)) }
            case .form(let form):
                for item in form.items {
                    if let r = item.format.rules as? RepeatingFormat { blocks.append(RepeatingBlock(item: item.identifier, bounds: r.bounds)) }
                }
            }
            if !blocks.isEmpty { rules.repeats[index] = blocks }
        }
        for pending in b.pendingCounts {
            guard let (expression, _) = ExpressionCompiler(predicates: predicates).compile(pending.value, at: pending.path, expecting: .number),
                  var blocks = rules.repeats[pending.step], let i = blocks.firstIndex(where: { $0.item == pending.item }) else { continue }
            guard !countReadsInstances(expression, predicates, at: pending.path) else { continue }
            blocks[i].count = expression
            rules.repeatCounts = true
            rules.repeats[pending.step] = blocks
        }
    }
}
