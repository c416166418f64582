import StepKitBase

/// A review step no path reaches after a step that takes answers: it would list nothing.
extension TaskChecker {
    mutating func checkReviewsHaveAnswers() {
        let n = task.steps.count
        let reviews = (0..<n).filter { task.steps[$0].isReview }
        guard !reviews.isEmpty else { return }
        // The steps some path reaches after a question, form or page step has been left.
        let afterAnswers = (0..<n).filter { task.steps[$0].takesAnswers }.flatMap { liveSuccessors($0) }
        let reached = graph.reach(from: afterAnswers, over: { liveSuccessors($0) })
        for r in reviews where !reached[r] {
            report(.warning, "nothingToReview",
                   "No path reaches the review step \"\(task.steps[r].identifier)\" after a question, form or page step: it would list no answers.",
                   at: stepPath(r))
        }
    }
}
