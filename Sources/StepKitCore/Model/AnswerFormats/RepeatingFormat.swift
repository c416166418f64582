import StepKitBase

/// The bounds of a repeating block (`repeat` on a form item or a question): how many instances
/// there may be, how many the participant must give, the expression that adds instances, and
/// the per-instance title.
struct RepeatBounds: Sendable {
    /// Instances that always exist (the participant need not add them) and, when the task's
    /// required answers are checked, must each be answered as their items require.
    let minCount: Int
    /// Instances there may be at most; adding past it is refused, and so is an answer or saved
    /// data with more.
    let maxCount: Int
    /// `count`: how many instances the participant said they have (compiled by
    /// `TaskCompiler+Repeats` once every step is known; nil when the block has none).
    let countSource: JSON?
    /// `title` with `{{index}}` (the instance's number from 1) and `{{item}}` (an item's answer
    /// in that instance) placeholders.
    let title: String?

    /// The most instances any block may declare: bounds every loop over instances, and keeps an
    /// instance's answers (an array) far below the input limits.
    static let limit = 1000

    /// Reads `repeat` (an object) at `r`'s path; nil (reported) when it is not valid.
    static func parse(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> RepeatBounds? {
        guard let r = FieldReader(value, at: path, d, what: "a repeat (minCount, maxCount, count, title)") else { return nil }
        let before = d.problems.count
        let minCount = r.integer("minCount", in: 0...limit) ?? 0
        let maxCount = r.integer("maxCount", in: 1...limit) ?? limit
        let count = r.value("count")
        if let count, count.isNull {
            d.error("wrongType", "\"count\" is an expression of a number (how many instances the participant has); null is none: leave it out.", at: path.key("count"))
        }
        let title = r.string("title")
        r.finish()
        if minCount > maxCount {
            d.error("boundsNeverMet", "\"minCount\" (\(minCount)) is more than \"maxCount\" (\(maxCount)): no number of instances is allowed.", at: path.key("minCount"))
        }
        guard d.problems.count == before else { return nil }
        return RepeatBounds(minCount: minCount, maxCount: maxCount, countSource: count, title: title)
    }
}

/// A repeating block's answer format: a repeating group of form items (each instance an object
/// of its items' answers, like a form's) or a repeating question (each instance one answer of
/// the question's format). The answer is an array of the instances in order.
///
/// An answer's array is applied over the previous one instance by instance (an instance's
/// object item by item, as a form's answer is), so a host that sends the instances it changes
/// never clears another; instances are added and removed only by their own calls
/// (`Session+Instances.swift`), never by an answer. The array may be shorter than the block's
/// instance count (the instances after it are empty), never longer than `maxCount`.
struct RepeatingFormat: AnswerFormatRules {
    enum Content: Sendable {
        case group(Form)
        case question(AnswerFormat)
    }

    let content: Content
    let bounds: RepeatBounds

    /// A block answers with several values: expressions read it through aggregates only.
    var resultType: ResultType { .multipleComponent }
    var expressionType: ExpressionType? { nil }

    var form: Form? {
        if case .group(let form) = content { return form }
        return nil
    }

    func validate(_ answer: JSON, previous: JSON?) throws(AnswerRejection) -> JSON? {
        guard case .array(let instances) = answer else {
            throw AnswerRejection("wrongType", "repeat.wrongType")
        }
        guard instances.count <= bounds.maxCount else {
            throw AnswerRejection("tooManyInstances", "repeat.tooMany", ["count": .count(bounds.maxCount)])
        }
        let before = previous?.arrayValue ?? []
        var kept = before
        for (i, instance) in instances.enumerated() {
            let old = before[ifPresent: i]
            let value: JSON
            switch content {
            case .group(let form):
                guard case .object(let changes) = instance else {
                    throw AnswerRejection("wrongType", "repeat.instanceWrongType", ["number": .count(i + 1)])
                }
                let applied = form.validate(changes, previous: old?.objectValue ?? JSONObject(), confirming: .changed)
                if let problem = applied.problems.first {
                    throw AnswerRejection(problem.code, Message("repeat.inInstance", ["number": .count(i + 1), "problem": .message(problem.text ?? Message("repeat.instanceWrongType", ["number": .count(i + 1)]))]))
                }
                value = .object(applied.updated)
            case .question(let format):
                // A repeating question's instance is one answer; null keeps an instance empty.
                do throws(AnswerRejection) {
                    value = try format.validate(instance, previous: old == .null ? nil : old) ?? .null
                } catch {
                    throw AnswerRejection(error.code, Message("repeat.inInstance", ["number": .count(i + 1), "problem": .message(error.text)]))
                }
            }
            if i < kept.count { kept[i] = value } else { kept.append(value) }
        }
        // Nothing in any instance, and no instance added: no answer.
        return kept.isEmpty ? nil : .array(kept)
    }
}

extension RepeatingFormat {
    /// A block's answer saved on another version of the task, carried over instance by
    /// instance (migration): the instances up to `maxCount`, in each the items that still exist
    /// and fit (a group's) or the answers that still fit (a question's). `dropped`: where
    /// (`[1].dose`, `[4]`) and why each part was left out.
    func migrated(_ saved: JSON) -> (value: JSON?, dropped: [(place: String, reason: String)]) {
        guard case .array(let instances) = saved else { return (nil, [("", "The answer is no longer a repeating block's.")]) }
        var dropped: [(place: String, reason: String)] = []
        var kept: [JSON] = []
        for (k, instance) in instances.enumerated() {
            guard k < bounds.maxCount else {
                dropped.append(("[\(k)]", "The block now has at most \(bounds.maxCount) instances."))
                continue
            }
            switch content {
            case .group(let form):
                var object = JSONObject()
                for (key, value) in (instance.objectValue ?? JSONObject()).entries {
                    guard let inner = form.item(key) else { dropped.append(("[\(k)].\(key)", "The item no longer exists in the group.")); continue }
                    // A repeating group inside the group: carried over instance by instance too
                    // (groups nest one level, so this recursion is bounded).
                    if let nested = inner.format.repeating, case .group = nested.content {
                        let carried = nested.migrated(value)
                        if let v = carried.value { object[key] = v }
                        dropped += carried.dropped.map { ("[\(k)].\(key)" + $0.place, $0.reason) }
                        continue
                    }
                    let one = form.validate(JSONObject([key: value]), previous: JSONObject(), confirming: .never)
                    if one.problems.isEmpty, let v = one.updated[key] { object[key] = v } else {
                        dropped.append(("[\(k)].\(key)", "The answer no longer fits the item's answer format."))
                    }
                }
                kept.append(.object(object))
            case .question(let format):
                do throws(AnswerRejection) {
                    kept.append(try format.validate(instance, previous: nil) ?? .null)
                } catch {
                    dropped.append(("[\(k)]", "The answer no longer fits the question's answer format."))
                    kept.append(.null)
                }
            }
        }
        return (kept.isEmpty ? nil : .array(kept), dropped)
    }
}
