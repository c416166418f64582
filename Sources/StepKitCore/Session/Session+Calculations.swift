import StepKitBase

/// The task's calculations on the session's answers: what predicates, the state and the result
/// read (see `CalculationCache`).
extension Session {
    func calculationValues() -> [ExpressionValue] {
        calculationCache.values(task.calculations, view: .path, lookup: self)
    }

    var evaluationTime: Int64 { endDate ?? now }

    /// A question's or a form item's answer without looking its format up (what `answer`
    /// reads, as its value); other tasks' results as `answer` gives them.
    func answerValue(_ selector: Selector) -> JSON? {
        switch selector {
        case .step(let index): return latestAnswer(step: index)
        case .item(let index, let item): return itemAnswer(step: index, item: item)
        case .external: return answer(selector)?.value
        case .instance(let read): return read.value(self, .none)
        }
    }

    /// `{"name": value, ...}` for the named calculations (every one when `indexes` is nil).
    func calculationsJSON(_ indexes: [Int]? = nil) -> JSON {
        let list = task.calculations.list
        let values = calculationValues()
        var object = JSONObject()
        for i in indexes ?? Array(list.indices) where list.indices.contains(i) && values.indices.contains(i) {
            object[list[i].name] = values[i].json
        }
        return .object(object)
    }
}

/// Answer bounds written as expressions (`AnswerBounds`; whether an answer keeps them is
/// decided by `Task.accept`).
extension Session {
    /// The current step's presentation with its expression bounds replaced by their values now
    /// (left out when null) and the calculations it shows as `{"name": value}`.
    func presentingExpressions(_ fields: inout JSONObject, step index: Int) {
        if let shown = task.rules.stepCalculations[index] {
            fields["calculations"] = calculationsJSON(shown)
        }
        guard let bounds = task.rules.answerBounds[index] else { return }
        for bound in bounds {
            let keys = bound.keys
            let (low, high) = bound.evaluated(on: self)
            func place(_ object: inout JSONObject) {
                if bound.minimum != nil { object[keys.minimum] = low.flatMap { $0.isNull ? nil : $0 } }
                if bound.maximum != nil { object[keys.maximum] = high.flatMap { $0.isNull ? nil : $0 } }
            }
            if let item = bound.item {
                guard case .array(var entries)? = fields["formItems"] else { continue }
                for (i, entry) in entries.enumerated() {
                    guard case .object(var object) = entry, object["identifier"]?.stringValue == item,
                          case .object(var formatObject)? = object["answerFormat"] else { continue }
                    place(&formatObject)
                    object["answerFormat"] = .object(formatObject)
                    entries[i] = .object(object)
                }
                fields["formItems"] = .array(entries)
            } else if case .object(var formatObject)? = fields["answerFormat"] {
                place(&formatObject)
                fields["answerFormat"] = .object(formatObject)
            }
        }
    }
}
