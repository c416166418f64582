import StepKitBase

// Repeating blocks of steps: `repeat` on a section. The section's steps are walked once per
// instance (`Session+StepBlocks.swift`); the bounds are a repeating group's (`RepeatBounds`).

/// A repeating block of steps: a section with `repeat`.
struct StepBlock: Sendable {
    /// The section's index in `Task.sections`, and its identifier (the block's name).
    let section: Int
    let identifier: String
    /// Its first and last step (a repeating section holds steps only, so they are contiguous).
    let first: Int
    let last: Int
    let bounds: RepeatBounds
    /// `count`, of type number (nil: the block has none).
    var count: Expression?
    /// Whether a step of it has a skip rule or a step modifier: then arriving in an instance
    /// reads that instance's answers (`Session.instanceRoute`).
    var arrivalReadsAnswers = false

    func contains(_ step: Int) -> Bool { step >= first && step <= last }
}

extension TaskCompiler {
    /// Reads a section's `repeat` (nil, reported, when it is not valid) and checks what a
    /// repeating section may hold: steps only (no section, which a block's instances would cut
    /// apart), not shuffled.
    static func stepBlockBounds(_ value: JSON, items: [JSON], shuffled: Bool, at path: JSONPath, _ d: Diagnostics) -> RepeatBounds? {
        let before = d.problems.count
        let bounds = RepeatBounds.parse(value, at: path.key("repeat"), d)
        if shuffled {
            d.error("unsupportedInGroup", "A repeating section cannot shuffle its steps: its instances are walked in order.", at: path.key("shuffleSteps"))
        }
        if let nested = items.firstIndex(where: { $0.objectValue?["type"] == .string("section") }) {
            d.error("sectionInRepeatingSection", "A repeating section holds steps only, not sections.", at: path.key("steps").index(nested))
        }
        if let bounds, bounds.minCount == 0, bounds.countSource == nil {
            d.error("boundsNeverMet", "A repeating section with \"minCount\" 0 needs a \"count\": with neither, it has no instance and navigation always passes over it.",
                    at: path.key("repeat"))
        }
        guard d.problems.count == before else { return nil }
        return bounds
    }

    /// Section `s` when it holds steps (a repeating section without any makes no block).
    private static func stepBlockSection(_ b: Builder, _ s: Int) -> Section? {
        guard let section = b.sections[ifPresent: s], section.lastStep >= section.firstStep,
              b.steps.indices.contains(section.lastStep) else { return nil }
        return section
    }

    /// The repeating sections as expressions read them, numbered as `compileStepBlocks` numbers
    /// the blocks: known before any rule compiles, since a rule's reads of a section's steps
    /// are scoped to it (`Expressions/InstanceCompiler.swift`).
    static func repeatingSections(_ b: Builder) -> RepeatingSections {
        var table = RepeatingSections()
        for pending in b.pendingStepBlocks {
            guard let section = stepBlockSection(b, pending.section) else { continue }
            table.append(.init(identifier: section.identifier, first: section.firstStep, last: section.lastStep, bounds: pending.bounds))
        }
        return table
    }

    /// Every repeating section as a `StepBlock`, its `count` compiled; the rules of its steps
    /// checked: a block is entered at its first step and left after an instance's last step
    /// (`Session+StepBlocks`), so a rule may not lead into its middle from outside, nor from
    /// inside anywhere but forward within it, and its steps have no repeating block of their own.
    static func compileStepBlocks(_ b: Builder, _ predicates: PredicateCompiler, _ rules: inout TaskRules) {
        let d = b.d
        for pending in b.pendingStepBlocks {
            guard let section = stepBlockSection(b, pending.section) else { continue }
            var block = StepBlock(section: pending.section, identifier: section.identifier, first: section.firstStep,
                                  last: section.lastStep, bounds: pending.bounds)
            if let source = pending.bounds.countSource {
                let path = pending.path.key("repeat").key("count")
                block.count = ExpressionCompiler(predicates: predicates).compile(source, at: path, expecting: .number)?.0
                // Reading instances (its own, through an aggregate) it would count itself.
                if let count = block.count, countReadsInstances(count, predicates, at: path) { block.count = nil }
            }
            block.arrivalReadsAnswers = (block.first...block.last).contains { rules.stepSkips[$0] != nil || rules.modifiers[$0] != nil }
            if block.count != nil { rules.repeatCounts = true }
            for step in block.first...block.last where rules.repeats[step] != nil {
                d.error("unsupportedInGroup", "A step of a repeating section cannot hold a repeating block of its own (instances do not nest).",
                        at: b.steps[step].definitionPath)
            }
            let number = rules.stepBlocks.count
            rules.stepBlocks.append(block)
            rules.blockOfSection[pending.section] = number
            for step in block.first...block.last { rules.blockOfStep[step] = number }
        }
        guard !rules.stepBlocks.isEmpty else { return }
        func target(_ destination: Destination) -> Int? {
            switch destination {
            case .step(let s): return s
            case .section(let s): return b.sections[ifPresent: s]?.firstStep
            case .end: return nil
            }
        }
        func check(_ rule: NavigationRule, leaving step: Int?, owner: String) {
            let destinations: [Destination]
            switch rule {
            case .direct(let destination): destinations = [destination]
            case .predicate(let branches, let fallback): destinations = branches.map(\.destination) + (fallback.map { [$0] } ?? [])
            }
            let inside = step.flatMap { rules.blockOfStep[$0] }.flatMap { rules.stepBlocks[ifPresent: $0] }
            for destination in destinations {
                let to = target(destination)
                if let inside, let step {
                    guard let to, inside.contains(to), to > step else {
                        d.error("outOfRepeatingBlock", "The rule of \"\(owner)\", inside the repeating section \"\(inside.identifier)\", may lead only forward within it: an instance is left after its last step.",
                                at: .root.key("navigationRules").key(owner))
                        return
                    }
                } else if let to, let n = rules.blockOfStep[to], let block = rules.stepBlocks[ifPresent: n], to != block.first {
                    d.error("intoRepeatingBlock", "The rule of \"\(owner)\" leads into the middle of the repeating section \"\(block.identifier)\": a block is entered at its first step (name the section).",
                            at: .root.key("navigationRules").key(owner))
                    return
                }
            }
        }
        for (step, rule) in rules.stepRules { check(rule, leaving: step, owner: b.steps[ifPresent: step]?.identifier ?? "") }
        for (section, rule) in rules.sectionRules {
            // A repeating section's own rule applies once it is left: it is outside the block.
            check(rule, leaving: nil, owner: b.sections[ifPresent: section]?.identifier ?? "")
        }
    }
}
