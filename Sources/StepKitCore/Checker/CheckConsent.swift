import StepKitBase

extension TaskChecker {
    /// A signature step in a task without a consent document: the signature is recorded, but
    /// signs nothing the result can name (no document version or digest, no signed document).
    mutating func checkConsent() {
        guard !task.steps.contains(where: { $0.hosted?.consentDocument != nil }) else { return }
        for (i, step) in task.steps.enumerated() where step.hosted?.reportKind == .signature {
            report(.warning, "signatureWithoutConsent", "The signature step \"\(step.identifier)\" signs no consent document: the task has no consent review step (and no \"consentDocument\"), so no result names what was signed.", at: stepPath(i))
        }
    }
}
