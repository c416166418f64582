import StepKitBase

/// Decides where navigation goes, with ResearchKit's `ORKNavigableOrderedTask` semantics: after a
/// step, its rule (or the rule of a section it ends) gives the destination, else the next step in
/// order; a destination whose skip rule holds is passed over as if it were left, its own rule
/// applying; the step reached gets its modifier when the modifier's predicate holds.
///
/// Every decision is also written down (`ArrivalNote`), so an author can see why the engine went
/// where it went.
///
/// It reads the session it decides for as a borrowed argument rather than holding a copy:
/// copying a `Session` retains and releases each of its fields, on every move. It holds the
/// task's routing itself, taken once: the rules and predicates it reads from there need no
/// retain of their own while they are evaluated on the session (read from the session's
/// memory, each was retained first: writes into the task every session shares).
struct Navigator {
    let routing: Routing
    /// Whether to write down each decision (and apply step modifiers); a projection of progress
    /// needs neither.
    var explains = true

    init(_ task: Task, explains: Bool = true) {
        self.routing = task.routing
        self.explains = explains
    }

    private func note(_ notes: inout ArrivalNotes, _ entry: ArrivalNote) {
        if explains { notes.append(entry) }
    }

    struct Route {
        /// The step reached, or nil when the task ends.
        var step: Int?
        var modified = false
        /// How navigation got there, in order (nothing when it does not explain).
        var notes = ArrivalNotes()
        /// For a step of a repeating section, the instance it is reached in
        /// (`Session.instanceRoute`).
        var instance = 0
    }

    /// Where leaving step `index` leads.
    func route(leaving index: Int, in session: borrowing Session) -> Route {
        var notes = ArrivalNotes()
        let target = destination(leaving: index, fromSectionDepth: nil, notes: &notes, in: session)
        return arrive(at: target, from: index, notes: notes, in: session)
    }

    /// The step a destination resolves to, after skip rules; `from` is the step left (for
    /// knowing which sections are being entered).
    func arrive(at candidate: Int?, from: Int?, notes explanation: ArrivalNotes, in session: borrowing Session) -> Route {
        var notes = explanation
        var target = candidate
        var previous = from
        // Each pass skips a step or a section; more passes than there are of them means the skip
        // rules send navigation round in a circle: the task ends there rather than spinning.
        var budget = routing.steps.count + routing.firstStep.count + 1
        while let step = target, routing.steps.indices.contains(step) {
            guard budget > 0 else {
                note(&notes, .skipLoop)
                return Route(step: nil, notes: notes)
            }
            budget -= 1
            var reason: Routing.SkipReason?
            var skipped: (section: Int, depth: Int)?
            let positions = routing.sectionPositions(of: step)
            for position in positions {
                let s = routing.sectionList[position]
                let entering = previous.map { !routing.section(s, contains: $0) } ?? true
                guard entering else { continue }
                reason = routing.skipReason(section: s, session)
                if reason != nil {
                    skipped = (s, position - positions.lowerBound)
                    break
                }
            }
            if let (s, depth) = skipped, routing.lastStep.indices.contains(s) {
                note(&notes, .skippedSection(s, reason ?? .skipRule))
                // Left as a whole: from the step at its last position in the run's order.
                let last = session.stepOrder.step(at: routing.lastStep[s])
                target = destination(leaving: last, fromSectionDepth: depth, notes: &notes, in: session)
                previous = last
                continue
            }
            if routing.skipsStep(step, session) {
                note(&notes, .skippedStep(step))
                target = destination(leaving: step, fromSectionDepth: nil, notes: &notes, in: session)
                previous = step
                continue
            }
            var route = Route(step: step)
            if explains, let modifier = routing.rules.modifiers[step], modifier.when.evaluate(session) {
                route.modified = true
                note(&notes, .modified(step))
            }
            route.notes = notes
            return route
        }
        if target == nil { notes.append(.end) }
        return Route(step: nil, notes: notes)
    }

    /// The destination after leaving step `index` (or, with `fromSectionDepth`, after leaving
    /// the section at that depth of the step's sections, whose last step `index` is); which rule
    /// governs is `Routing`'s to say, this evaluates it.
    func destination(leaving index: Int, fromSectionDepth: Int?, notes: inout ArrivalNotes, in session: borrowing Session) -> Int? {
        guard routing.steps.indices.contains(index) else { return nil }
        let order = session.stepOrder
        guard let governing = routing.governing(leaving: index, at: order.position(of: index), fromSectionDepth: fromSectionDepth) else {
            return routing.next(after: index, in: order)
        }
        return apply(governing.rule, owner: governing.owner, after: index, notes: &notes, in: session)
    }

    private func apply(_ rule: NavigationRule, owner: Routing.Owner, after index: Int, notes: inout ArrivalNotes,
                       in session: borrowing Session) -> Int? {
        switch rule {
        case .direct(let destination):
            note(&notes, .rule(owner, .direct))
            return routing.resolve(destination, in: session.stepOrder)
        case .predicate(let branches, let fallback):
            // By index, reading only the predicate and the destination: a branch copied whole
            // retained its condition's JSON too (written for the task graph, never read here).
            for i in branches.indices where branches[i].when.evaluate(session) {
                note(&notes, .rule(owner, .branch(i)))
                return routing.resolve(branches[i].destination, in: session.stepOrder)
            }
            if let fallback {
                note(&notes, .rule(owner, .defaultDestination))
                return routing.resolve(fallback, in: session.stepOrder)
            }
            note(&notes, .rule(owner, .nextInOrder))
            return routing.next(after: index, in: session.stepOrder)
        }
    }
}
