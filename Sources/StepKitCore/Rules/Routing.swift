import StepKitBase

/// The one place that says which rule governs leaving a step and where a destination leads, with
/// ResearchKit's `ORKNavigableOrderedTask` semantics: a step's own rule, else the rule of the
/// innermost section it ends (a section's rule applies when its last step is left), else the next
/// step in order. The session's `Navigator` evaluates the rule this names, the `RuleGraph` and the
/// checker take every edge it lists, and `stepkit_task_graph` hands those edges to hosts, so a
/// drawing of the task shows exactly the moves a session makes.
///
/// Built from the parts of a task rather than the task, since the rule graph is worked out while
/// the task is being put together.
///
/// A class, immutable: the navigator reads it on every move, from every session of the task at
/// once. As a struct each read copied it, retaining and releasing the twenty-odd tables it holds,
/// counts that every thread running the task writes (`benchmarks/README.md`, fourth round).
package final class Routing: Sendable {
    let steps: [Step]
    let sections: [Section]
    let rules: TaskRules
    /// The sections of step `i`, outermost first, are `sectionList[sectionStart[i]..<sectionStart[i + 1]]`;
    /// section `s` runs from step `firstStep[s]` to `lastStep[s]`. Plain integers, so a move
    /// reads them without retaining the shared `Step` and `Section` values they come from.
    let sectionStart: [Int]
    let sectionList: [Int]
    let firstStep: [Int]
    let lastStep: [Int]
    /// For each step, the section that shuffles it among its movable steps (-1: none; a section
    /// with fewer than two movable steps moves nothing); for each section, its movable steps.
    /// What `StepOrder` reads to list every order a seed can give.
    let movable: [Int]
    let movableSteps: [[Int]]

    init(steps: [Step], sections: [Section], rules: TaskRules) {
        self.steps = steps
        self.sections = sections
        self.rules = rules
        var start = [0]
        var list: [Int] = []
        start.reserveCapacity(steps.count + 1)
        list.reserveCapacity(steps.reduce(0) { $0 + $1.sections.count })
        for step in steps {
            list.append(contentsOf: step.sections)
            start.append(list.count)
        }
        sectionStart = start
        sectionList = list
        firstStep = sections.map(\.firstStep)
        lastStep = sections.map(\.lastStep)
        var movable = [Int](repeating: -1, count: steps.count)
        var movableSteps = [[Int]](repeating: [], count: sections.count)
        for (s, section) in sections.enumerated() where section.shuffled && section.lastStep < steps.count {
            let indexes = (section.firstStep...section.lastStep).filter { steps[$0].presentation["pinned"]?.boolValue != true }
            guard indexes.count >= 2 else { continue }
            for i in indexes { movable[i] = s }
            movableSteps[s] = indexes
        }
        self.movable = movable
        self.movableSteps = movableSteps
    }

    /// Where step `index`'s sections are in `sectionList` (empty for an index out of range).
    func sectionPositions(of index: Int) -> Range<Int> {
        guard index >= 0, index + 1 < sectionStart.count else { return 0..<0 }
        return sectionStart[index]..<sectionStart[index + 1]
    }

    /// Whether section `s` holds step `index`.
    func section(_ s: Int, contains index: Int) -> Bool {
        firstStep.indices.contains(s) && index >= firstStep[s] && index <= lastStep[s]
    }

    /// Whose rule it is: a step's or a section's (indexes into `steps`, `sections`).
    enum Owner: Sendable, Equatable {
        case step(Int)
        case section(Int)
    }

    /// The rule that governs a move, and whose it is.
    struct Governing: Sendable {
        let owner: Owner
        let rule: NavigationRule
    }

    /// One way navigation can go when a step is left.
    struct Edge: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            /// No rule applies: the next step in order.
            case next
            /// A direct rule's destination.
            case direct
            /// Branch `index` of a predicate rule.
            case branch(Int)
            /// A predicate rule's `defaultDestination`, when no branch matches.
            case fallback
            /// A predicate rule without a `defaultDestination`, when no branch matches: the next
            /// step in order.
            case otherwise
        }

        let kind: Kind
        /// The step reached (before skip rules), nil for the end of the task.
        let target: Int?
        /// Whose rule gives the move (nil for `.next`).
        let owner: Owner?
        /// The section the destination names, when it names one (the move enters its first step).
        let section: Int?
        /// A branch's condition as the definition wrote it.
        var condition: JSON? = nil
        /// The section whose skip rule passes it over, for the move that leaves it then (the
        /// edge leaves the section's first step, where navigation enters it).
        var passedOver: Int? = nil
        /// Why it is passed over: its skip rule, or (a repeating section) having no instance.
        var passedOverBy: SkipReason? = nil
    }

    /// The rule that governs leaving step `index`, shown at `position` of the run's order (its
    /// own index unless a section shuffles its steps); nil when none does (navigation goes to
    /// the step at the next position). A section's rule applies when the step at its last
    /// position is left. With `fromSectionDepth`, the section at that depth of the step's
    /// sections is being left as a whole (passed over by its skip rule, `index` being the step at
    /// its last position): the step's own rule and the rules of sections nested deeper do not apply.
    func governing(leaving index: Int, at position: Int? = nil, fromSectionDepth: Int? = nil) -> Governing? {
        guard steps.indices.contains(index) else { return nil }
        if fromSectionDepth == nil, let rule = rules.stepRules[index] {
            return Governing(owner: .step(index), rule: rule)
        }
        let place = position ?? index
        let positions = sectionPositions(of: index)
        let depth = fromSectionDepth.map { min($0, positions.count - 1) } ?? (positions.count - 1)
        guard depth >= 0 else { return nil }
        for position in stride(from: positions.lowerBound + depth, through: positions.lowerBound, by: -1) {
            let s = sectionList[position]
            guard lastStep.indices.contains(s), lastStep[s] == place else { break }
            if let rule = rules.sectionRules[s] { return Governing(owner: .section(s), rule: rule) }
        }
        return nil
    }

    /// The step after `index` in the run's `order`, nil past the last one (the end of the task).
    func next(after index: Int, in order: StepOrder = .definition) -> Int? {
        let position = order.position(of: index)
        return position >= -1 && position < steps.count - 1 ? order.step(at: position + 1) : nil
    }

    /// The step a destination leads to: a step, the step at a section's first position in the
    /// run's `order`, or nil for the end.
    func resolve(_ destination: Destination, in order: StepOrder = .definition) -> Int? {
        switch destination {
        case .step(let s): return s
        case .section(let s): return firstStep[ifPresent: s].map { order.step(at: $0) }
        case .end: return nil
        }
    }

    /// The identifier of a rule's owner (the key of its rule in `navigationRules`).
    func identifier(of owner: Owner) -> String {
        switch owner {
        case .step(let i): return steps[ifPresent: i]?.identifier ?? ""
        case .section(let s): return sections[ifPresent: s]?.identifier ?? ""
        }
    }

    /// Every way navigation can go when step `index` is left, in the order the rule lists them:
    /// its branches, then the default (or the next step in order); then, when `index` is the
    /// first step of sections navigation may pass over (`passOverReasons`: a skip rule, a
    /// repeating section that may have no instance), the moves that leave each of them passed
    /// over (`passedOver`, outermost first, each reason in `skipReason`'s order): the section's
    /// own rule's, else an enclosing section's ending with it, else the step after it — never
    /// its last step's own rule.
    ///
    /// A task is drawn for every run, so where a section shuffles its steps the edges are those
    /// of every order a seed can give (`StepOrder.positions(of:)`, `steps(at:)`): each position
    /// the step may be shown at, and each step that may follow it there. The navigator takes the
    /// one edge its run's order gives, by the same rules.
    func edges(leaving index: Int) -> [Edge] {
        var edges: [Edge] = []
        forEachMove(leaving: index) { edge in if !edges.contains(edge) { edges.append(edge) } }
        return edges
    }

    /// Calls `body` with each edge `edges(leaving:)` lists, in its order, repeats included:
    /// for a reader that wants only their targets (`RuleGraph`), without the array of edges
    /// and the comparisons that take the repeats out (a tenth of compiling a task, by callgrind:
    /// `benchmarks/README.md`, issue 36).
    func forEachMove(leaving index: Int, _ body: (Edge) -> Void) {
        guard steps.indices.contains(index) else { return }
        for position in StepOrder.positions(of: index, self) {
            moves(leaving: index, at: position, fromSectionDepth: nil, body)
        }
        for (depth, s) in steps[index].sections.enumerated()
        where sections.indices.contains(s) && mayPassOver(section: s)
            && StepOrder.steps(at: sections[s].firstStep, self).contains(index) {
            for reason in passOverReasons(section: s) {
                for last in StepOrder.steps(at: sections[s].lastStep, self) {
                    moves(leaving: last, at: sections[s].lastStep, fromSectionDepth: depth) { edge in
                        var edge = edge
                        edge.passedOver = s
                        edge.passedOverBy = reason
                        body(edge)
                    }
                }
            }
        }
    }

    /// Why navigation entering section `s` may pass over it, whatever the answers: the reasons
    /// `skipReason(section:_:)` can give for it, in its order, but `visibleWhen` (a sensor
    /// task's section, which the graph has never listed a move for: its steps count as
    /// skippable in `skippable`). A repeating section may have no instance when its `minCount`
    /// is 0 (its `count` then 0 or unanswered).
    func passOverReasons(section s: Int) -> [SkipReason] {
        var reasons: [SkipReason] = []
        if rules.sectionSkips[s] != nil { reasons.append(.skipRule) }
        if mayHaveNoInstance(section: s) { reasons.append(.noInstances) }
        return reasons
    }

    /// `passOverReasons` is not empty (without making the list).
    private func mayPassOver(section s: Int) -> Bool {
        rules.sectionSkips[s] != nil || mayHaveNoInstance(section: s)
    }

    /// Whether repeating section `s` may have no instance, so that `skipReason` passes it over
    /// (`noInstances`): its `minCount` is 0.
    private func mayHaveNoInstance(section s: Int) -> Bool {
        guard let n = rules.blockOfSection[s], let block = rules.stepBlocks[ifPresent: n] else { return false }
        return block.bounds.minCount == 0
    }

    /// The moves of the rule that governs leaving step `index` at `position` (`governing`), in
    /// every order, each handed to `emit`: where no rule governs or a predicate rule falls
    /// through, each step that may be at the next position.
    private func moves(leaving index: Int, at position: Int, fromSectionDepth: Int?, _ emit: (Edge) -> Void) {
        guard steps.indices.contains(index) else { return }
        func following(_ kind: Edge.Kind, owner: Owner?) {
            guard position + 1 < steps.count else {
                emit(Edge(kind: kind, target: nil, owner: owner, section: nil))
                return
            }
            for s in StepOrder.steps(at: position + 1, self) where s != index {
                emit(Edge(kind: kind, target: s, owner: owner, section: nil))
            }
        }
        guard let governing = governing(leaving: index, at: position, fromSectionDepth: fromSectionDepth) else {
            following(.next, owner: nil)
            return
        }
        func edge(_ kind: Edge.Kind, _ destination: Destination, condition: JSON? = nil) {
            if case .section(let s) = destination, let first = firstStep[ifPresent: s] {
                for target in StepOrder.steps(at: first, self) {
                    emit(Edge(kind: kind, target: target, owner: governing.owner, section: s, condition: condition))
                }
                return
            }
            var section: Int?
            if case .section(let s) = destination { section = s }
            emit(Edge(kind: kind, target: resolve(destination), owner: governing.owner, section: section, condition: condition))
        }
        switch governing.rule {
        case .direct(let destination):
            edge(.direct, destination)
        case .predicate(let branches, let fallback):
            for (i, branch) in branches.enumerated() {
                edge(.branch(i), branch.destination, condition: branch.condition)
            }
            if let fallback {
                edge(.fallback, fallback)
            } else {
                following(.otherwise, owner: governing.owner)
            }
        }
    }

    /// The edges as `stepkit_task_graph` lists them: where navigation starts (`from` null), then
    /// every edge of every step in step order; `to` is null for the end of the task.
    package var json: JSON {
        var list: [JSON] = []
        if let first = steps.first {
            list.append(.object(["from": .null, "to": .string(first.identifier), "kind": .string("start")]))
        }
        for (i, step) in steps.enumerated() {
            for edge in edges(leaving: i) {
                var fields = JSONObject([
                    "from": .string(step.identifier),
                    "to": edge.target.flatMap { steps[ifPresent: $0] }.map { .string($0.identifier) } ?? .null,
                ])
                switch edge.kind {
                case .next: fields["kind"] = .string("next")
                case .direct: fields["kind"] = .string("direct")
                case .branch: fields["kind"] = .string("branch")
                case .fallback: fields["kind"] = .string("default")
                case .otherwise: fields["kind"] = .string("otherwise")
                }
                if let owner = edge.owner { fields["rule"] = .string(identifier(of: owner)) }
                if case .branch(let b) = edge.kind {
                    fields["branch"] = .int(Int64(b))
                    fields["when"] = edge.condition ?? .null
                }
                if let s = edge.section, sections.indices.contains(s) { fields["section"] = .string(sections[s].identifier) }
                if let s = edge.passedOver, sections.indices.contains(s) {
                    fields["passedOver"] = .string(sections[s].identifier)
                    if edge.passedOverBy == .noInstances { noInstancesFields(section: s, into: &fields) }
                }
                list.append(.object(fields))
            }
            if let edge = nextInstanceEdge(leaving: i) { list.append(edge) }
        }
        return .array(list)
    }

    /// What a move past a repeating section with no instance says of it, as its loop's edge
    /// does: `"by": "noInstances"`, its bounds, and its `count` as the definition wrote it (the
    /// section has no instance while that is 0 or null).
    private func noInstancesFields(section s: Int, into fields: inout JSONObject) {
        guard let n = rules.blockOfSection[s], let block = rules.stepBlocks[ifPresent: n] else { return }
        fields["by"] = .string(SkipReason.noInstances.rawValue)
        fields["minCount"] = .int(Int64(block.bounds.minCount))
        fields["maxCount"] = .int(Int64(block.bounds.maxCount))
        if let count = block.bounds.countSource { fields["count"] = count }
    }

    /// The loop of a repeating section (`Session+StepBlocks`), leaving its last step: going
    /// forward from an instance that is not the last goes to the next instance's first step,
    /// `{"from": LAST, "to": FIRST, "kind": "nextInstance", "section": S, "minCount", "maxCount"}`.
    /// Listed for hosts and drawings only: `RuleGraph` and the checker do not follow it, since
    /// a new instance starts unanswered (no answer carries round the loop, so it is no path for
    /// "answered before") and progress counts one instance of a section ahead.
    private func nextInstanceEdge(leaving i: Int) -> JSON? {
        guard let n = rules.blockOfStep[i], let block = rules.stepBlocks[ifPresent: n], block.last == i,
              let first = steps[ifPresent: block.first], let last = steps[ifPresent: i] else { return nil }
        return .object([
            "from": .string(last.identifier),
            "to": .string(first.identifier),
            "kind": .string("nextInstance"),
            "section": .string(block.identifier),
            "minCount": .int(Int64(block.bounds.minCount)),
            "maxCount": .int(Int64(block.bounds.maxCount)),
        ])
    }

    /// Whether a skip rule (the step's own or one of its sections'), a section's `visibleWhen`,
    /// or a repeating section having no instance, may pass over the step.
    func skippable(_ index: Int) -> Bool {
        guard steps.indices.contains(index) else { return false }
        return rules.stepSkips[index] != nil
            || steps[index].sections.contains { rules.sectionSkips[$0] != nil || rules.sectionVisibility[$0] != nil || mayHaveNoInstance(section: $0) }
    }

    /// Why navigation passes over a step or section (the names are those the arrival shows).
    enum SkipReason: String, Sendable, Equatable {
        /// Its skip rule holds.
        case skipRule
        /// A section's `visibleWhen` does not hold.
        case visibleWhen
        /// A repeating section has no instance (`Session+StepBlocks`).
        case noInstances
    }

    /// Why navigation entering section `s` passes over it, or nil when it shows the section.
    /// The one decision the session, the replay of a restore and the projection of progress
    /// share (they all walk through `Navigator`).
    func skipReason(section s: Int, _ answers: some AnswerLookup) -> SkipReason? {
        if rules.sectionSkips[s]?.evaluate(answers) == true { return .skipRule }
        if let visible = rules.sectionVisibility[s], !visible.evaluate(answers) { return .visibleWhen }
        if let n = rules.blockOfSection[s], answers.sectionInstanceCount(n) == 0 { return .noInstances }
        return nil
    }

    /// Whether navigation reaching step `index` passes over it: its skip rule holds.
    func skipsStep(_ index: Int, _ answers: some AnswerLookup) -> Bool {
        rules.stepSkips[index]?.evaluate(answers) == true
    }
}
