import StepKitBase

/// An edit begun from a review step (`Session.editFromReview`): the review to come back to, the
/// step being edited, and the steps whose visits the edit took off the path (in path order).
///
/// While it is set, leaving a step goes back toward the review over the steps the participant
/// already answered (`Session.continueTowardReview`); reaching the review drops the answers of
/// the steps in `offPath` that the path no longer holds (an edit that re-routed the task).
struct ReviewReturn: Sendable, Equatable {
    var review: Int
    var edited: Int
    var offPath: [Int]

    /// As saved in restoration data (`reviewReturn`).
    func json(in task: Task) -> JSON {
        .object([
            "review": .string(task.step(at: review)?.identifier ?? ""),
            "edited": .string(task.step(at: edited)?.identifier ?? ""),
            "offPath": .array(offPath.map { .string(task.step(at: $0)?.identifier ?? "") }),
        ])
    }

    /// Read back from restoration data; nil for null or absent (data saved before there was any).
    static func decode(_ value: JSON?, task: Task) throws(StepKitError) -> ReviewReturn? {
        guard let value, !value.isNull else { return nil }
        let path = JSONPath.root.key("reviewReturn")
        guard let o = value.objectValue, o.count == 3,
              let review = o["review"]?.stringValue.flatMap({ task.stepIndex[$0] }), task.step(at: review)?.isReview == true,
              let edited = o["edited"]?.stringValue.flatMap({ task.stepIndex[$0] }),
              let list = o["offPath"]?.arrayValue else {
            throw Restoration.refuse("damaged", "\"reviewReturn\" is {\"review\", \"edited\", \"offPath\"}: a review step, the step edited and the steps left off the path.", path)
        }
        var offPath: [Int] = []
        for (i, entry) in list.enumerated() {
            guard let index = entry.stringValue.flatMap({ task.stepIndex[$0] }) else {
                throw Restoration.refuse("damaged", "\"reviewReturn.offPath\" names steps of the task.", path.key("offPath").index(i))
            }
            offPath.append(index)
        }
        return ReviewReturn(review: review, edited: edited, offPath: offPath)
    }
}
