import StepKitBase

/// Form items hidden on every path: a `visibleWhen` that can never hold (it contradicts itself,
/// or reads answers that cannot be there yet).
extension TaskChecker {
    mutating func checkHiddenItems() {
        for site in ruleSites() {
            if case .headerVisibility(let title, let entry) = site.kind {
                checkHiddenHeader(site, title: title, entry: entry)
                continue
            }
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

    /// A section header whose `visibleWhen` never holds hides its items on every path.
    private mutating func checkHiddenHeader(_ site: RuleSite, title: String, entry: Int) {
        guard let step = task.step(at: site.step), case .form(let form) = step.content,
              let header = task.rules.formHeaders[site.step]?.first(where: { $0.entry == entry }),
              analysis(at: site, usingUnanswerable: true).never(site.predicate) else { return }
        let required = header.items.filter { !(form.item($0)?.optional ?? true) }
        if let first = required.first {
            report(.warning, "requiredItemHidden",
                   "The section header \"\(title)\" of the form \"\(step.identifier)\" is hidden on every path: its visibleWhen can never hold, so its required item \"\(first)\" is never asked.",
                   at: site.path)
        } else {
            report(.warning, "itemAlwaysHidden",
                   "The section header \"\(title)\" of the form \"\(step.identifier)\" is hidden on every path, with its items: its visibleWhen can never hold.",
                   at: site.path)
        }
    }
}
