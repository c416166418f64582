import StepKitBase

/// Rules that name a step of a section that shuffles its steps (docs/randomization.md): they
/// work — navigation goes to the step wherever the run shows it, and on in the run's order —
/// but the steps the run shows before it are then passed over, which is rarely what an author
/// who meant "enter the block" wants: naming the section enters it at its first step.
extension TaskChecker {
    mutating func checkDestinationsInShuffledSections() {
        let routing = task.routing
        for (key, rule, _, path) in navigationRules() {
            var named: [(Destination, JSONPath)] = []
            switch rule {
            case .direct(let destination):
                named.append((destination, path.key("destination")))
            case .predicate(let branches, let fallback):
                for (b, branch) in branches.enumerated() { named.append((branch.destination, path.key("branches").index(b).key("destination"))) }
                if let fallback { named.append((fallback, path.key("defaultDestination"))) }
            }
            for (destination, at) in named {
                guard case .step(let i) = destination, let s = routing.movable[ifPresent: i], s >= 0,
                      let step = task.step(at: i), let section = task.section(at: s) else { continue }
                report(.warning, "destinationInShuffledSection",
                       "The rule of \"\(key)\" goes to \"\(step.identifier)\", a step of the section \"\(section.identifier)\", which shuffles its steps: "
                           + "the steps a run shows before it are passed over. Name \"\(section.identifier)\" to enter the section at its first step.",
                       at: at)
            }
        }
    }
}
