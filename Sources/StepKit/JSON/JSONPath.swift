/// A place in a JSON document, written as hosts read it: `steps[3].answerFormat.minimum`.
/// The empty path is the document itself.
struct JSONPath: Sendable, CustomStringConvertible, Equatable {
    let description: String

    static let root = JSONPath(description: "")

    func key(_ key: String) -> JSONPath {
        let plain = !key.isEmpty && key.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x24
        }
        if plain {
            return JSONPath(description: description.isEmpty ? key : description + "." + key)
        }
        var escaped = ""
        for ch in key {
            if ch == "\"" || ch == "\\" { escaped.append("\\") }
            escaped.append(ch)
        }
        return JSONPath(description: description + "[\"" + escaped + "\"]")
    }

    func index(_ i: Int) -> JSONPath {
        JSONPath(description: description + "[" + String(i) + "]")
    }
}
