/// A regular expression of a definition (`validationRegularExpression`, a `matches` condition),
/// compiled when the task is and shared by every session, with the outcome of its latest matches
/// kept so a condition read again and again (every state read re-evaluates navigation) matches
/// each answer once.
package struct Pattern: Sendable {
    let expression: RegularExpression
    private let memo: MatchMemo

    package var source: String { expression.source }

    package init(_ source: String) throws(RegularExpression.CompileError) {
        expression = try RegularExpression(source)
        memo = MatchMemo()
    }

    /// The outcome of matching `text`: remembered for the last few texts, computed otherwise.
    package func match(_ text: String) -> RegularExpression.Outcome {
        if let known = memo.outcome(for: text) { return known }
        let outcome = expression.firstMatch(in: text)
        memo.remember(text, outcome)
        return outcome
    }

    /// Whether the pattern matches somewhere in `text`; a match past its bound counts as none
    /// (an answer is refused before that can happen: see `Task.accept`, its match bounds).
    package func matches(_ text: String) -> Bool {
        match(text) == .match
    }
}

/// The outcomes of a pattern's latest matches, keyed by the text. A handful of entries is enough:
/// a condition reads one answer (or a choice's few values) per session, and the key is the
/// answer's own string, so an entry costs no copy and a hit is usually an identity comparison.
/// Shared by the sessions of a task, hence the lock; the match itself runs outside it.
final class MatchMemo: Sendable {
    private static let capacity = 4
    private let entries = Locked<[(text: String, outcome: RegularExpression.Outcome)]>([])

    func outcome(for text: String) -> RegularExpression.Outcome? {
        entries.withLock { list in list.first { $0.text == text }?.outcome }
    }

    func remember(_ text: String, _ outcome: RegularExpression.Outcome) {
        entries.withLock { list in
            list.removeAll { $0.text == text }
            list.insert((text, outcome), at: 0)
            if list.count > MatchMemo.capacity { list.removeLast(list.count - MatchMemo.capacity) }
        }
    }
}
