import StepKitBase

/// The order a run shows its steps in: the step at each position. Positions are the steps'
/// indexes in the definition; a section with `"shuffleSteps": true` shows its movable steps
/// (those not `"pinned"`) in its run's seeded order among their own positions
/// (`Randomization.stepOrder`, docs/randomization.md), and every other step stays where it is.
///
/// What follows a step, which step a section starts and ends with, and so which section rule
/// applies, are read through it (`Routing.next(after:in:)`, `resolve(_:in:)`, `governing`), so
/// the navigator walks the run's order; the checker and the task graph take every order a seed
/// can give (`positions(of:_:)`, `steps(at:_:)`).
package struct StepOrder: Sendable, Equatable {
    /// The step at each position; empty for the definition's order.
    private let stepAt: [Int]
    /// The position of each step; empty for the definition's order.
    private let positionOf: [Int]

    /// Every step where the definition puts it.
    static let definition = StepOrder(stepAt: [])

    init(stepAt: [Int]) {
        if stepAt.enumerated().allSatisfy({ $0.offset == $0.element }) {
            self.stepAt = []
            self.positionOf = []
            return
        }
        self.stepAt = stepAt
        var positionOf = [Int](repeating: 0, count: stepAt.count)
        for (position, step) in stepAt.enumerated() { positionOf[step] = position }
        self.positionOf = positionOf
    }

    /// The step shown at `position` (a position out of range is its own step, as for the
    /// definition's order: `-1` before the first, the count past the last).
    func step(at position: Int) -> Int { stepAt[ifPresent: position] ?? position }

    /// Where step `index` is shown.
    func position(of index: Int) -> Int { positionOf[ifPresent: index] ?? index }

    /// Whether the run shows every step where the definition puts it.
    var isDefinition: Bool { stepAt.isEmpty }

    /// Every position step `index` may be shown at in some run.
    static func positions(of index: Int, _ routing: Routing) -> [Int] {
        let s = routing.movable[ifPresent: index] ?? -1
        return s >= 0 ? routing.movableSteps[s] : [index]
    }

    /// Every step that may be shown at `position` in some run (a movable position holds any of
    /// its section's movable steps).
    static func steps(at position: Int, _ routing: Routing) -> [Int] {
        positions(of: position, routing)
    }
}
