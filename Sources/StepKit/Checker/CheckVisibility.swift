/// Form items hidden on every path: a `visibleWhen` that can never hold (it contradicts itself,
/// or reads answers that cannot be there yet).
extension TaskChecker {
    mutating func checkHiddenItems() {
        for site in ruleSites() {
            guard case .visibility(let item) = site.kind, let step = task.step(at: site.step) else { continue }
            guard analysis(at: site, usingUnanswerable: true).never(site.predicate) else { continue }
            let required = !(step.format(item: item) == nil) && {
                if case .form(let form) = step.content { return !(form.item(item)?.optional ?? true) }
                return false
            }()
            if required {
                report(.warning, "requiredItemHidden",
                       "The required item \"\(item)\" of the form \"\(step.identifier)\" is hidden on every path: its visibleWhen can never hold, so it is never asked.",
                       at: site.path)
            } else {
                report(.warning, "itemAlwaysHidden",
                       "The item \"\(item)\" of the form \"\(step.identifier)\" is hidden on every path: its visibleWhen can never hold.",
                       at: site.path)
            }
        }
    }
}
