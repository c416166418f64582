/// A place in a JSON document, written as hosts read it: `steps[3].answerFormat.minimum`.
/// The empty path is the document itself.
///
/// A compiler passes a path to every field it reads but shows one only with a problem, so a
/// path is a chain of components sharing its parent, and its text is written only when asked
/// for (`description`). Building `steps[3].answerFormat` costs one small allocation instead of
/// copying the whole text at every level (which took about a tenth of a compile).
@usableFromInline package struct JSONPath: Sendable, CustomStringConvertible, Equatable {
    /// One component and the path it extends. Immutable; its depth is bounded by the nesting of
    /// the document it names, so releasing a chain never recurses deeper than that.
    private final class Node: Sendable {
        let parent: Node?
        /// The key, or nil for an array index.
        let key: String?
        let index: Int

        init(parent: Node?, key: String?, index: Int) {
            self.parent = parent
            self.key = key
            self.index = index
        }
    }

    private let node: Node?

    package static let root = JSONPath(node: nil)

    private init(node: Node?) { self.node = node }

    @usableFromInline package func key(_ key: String) -> JSONPath {
        JSONPath(node: Node(parent: node, key: key, index: 0))
    }

    package func index(_ i: Int) -> JSONPath {
        JSONPath(node: Node(parent: node, key: nil, index: i))
    }

    /// `a.b[2]["odd key"]`: a plain key (letters, digits, `_`, `$`) after a dot, any other in
    /// brackets and quotes with `"` and `\` escaped.
    @usableFromInline package var description: String {
        var components: [Node] = []
        var next = node
        while let n = next {
            components.append(n)
            next = n.parent
        }
        var text = ""
        for n in components.reversed() {
            guard let key = n.key else {
                text += "[" + String(n.index) + "]"
                continue
            }
            if JSONPath.isPlain(key) {
                if !text.isEmpty { text += "." }
                text += key
            } else {
                var escaped = ""
                for ch in key {
                    if ch == "\"" || ch == "\\" { escaped.append("\\") }
                    escaped.append(ch)
                }
                text += "[\"" + escaped + "\"]"
            }
        }
        return text
    }

    private static func isPlain(_ key: String) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24
        }
    }

    @usableFromInline package static func == (lhs: JSONPath, rhs: JSONPath) -> Bool {
        lhs.node === rhs.node || lhs.description == rhs.description
    }
}
