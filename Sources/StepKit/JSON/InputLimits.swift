/// Bounds on what a host (or an attacker posing as one) may hand the library, so no input can
/// exhaust memory or the stack: the size of the text, the nesting depth, the length of any one
/// string. Checked before parsing (size) and right after (depth, strings), before any use.
struct InputLimits: Sendable, Equatable {
    var maxBytes: Int
    var maxDepth: Int
    var maxStringBytes: Int

    /// Task definitions: 64 MiB (a 100,000-step task is about 20 MiB), 64 levels, 1 MiB strings.
    static let definition = InputLimits(maxBytes: 64 << 20, maxDepth: 64, maxStringBytes: 1 << 20)
    /// Answers: 1 MiB, 32 levels, 1 MiB strings.
    static let answer = InputLimits(maxBytes: 1 << 20, maxDepth: 32, maxStringBytes: 1 << 20)
    /// One batch of recorder samples: 16 MiB.
    static let samples = InputLimits(maxBytes: 16 << 20, maxDepth: 32, maxStringBytes: 1 << 20)
    /// Session options (which may carry earlier results) and restoration data: 256 MiB.
    static let document = InputLimits(maxBytes: 256 << 20, maxDepth: 128, maxStringBytes: 16 << 20)

    /// The length of `text` if it is within `maxBytes`, without reading past the limit.
    func checkSize(_ text: UnsafePointer<CChar>, argument: String) throws(StepKitError) {
        var n = 0
        while text[n] != 0 {
            n += 1
            if n > maxBytes {
                throw StepKitError(.invalidArgument, code: "tooLarge",
                                   message: "\(argument) is larger than the limit of \(maxBytes) bytes.")
            }
        }
    }

    /// Checks depth and string lengths of a parsed document. The walk builds no paths: only
    /// when it finds a problem does a second walk say where.
    func checkShape(_ value: JSON, argument: String) throws(StepKitError) {
        guard !fits(value, depth: 1) else { return }
        try locate(value, depth: 1, path: .root, argument: argument)
    }

    private func fits(_ value: JSON, depth: Int) -> Bool {
        switch value {
        case .string(let s):
            return s.utf8.count <= maxStringBytes
        case .array(let items):
            guard depth <= maxDepth else { return false }
            for item in items where !fits(item, depth: depth + 1) { return false }
            return true
        case .object(let object):
            guard depth <= maxDepth else { return false }
            for key in object.keys {
                guard key.utf8.count <= maxStringBytes, let item = object[key], fits(item, depth: depth + 1) else { return false }
            }
            return true
        default:
            return true
        }
    }

    private func locate(_ value: JSON, depth: Int, path: JSONPath, argument: String) throws(StepKitError) {
        switch value {
        case .string(let s):
            if s.utf8.count > maxStringBytes {
                throw StepKitError(.invalidArgument, code: "stringTooLong",
                                   message: "A string in \(argument) is longer than the limit of \(maxStringBytes) bytes.", path: path)
            }
        case .array(let items):
            guard depth <= maxDepth else { throw tooDeep(path, argument) }
            for (i, item) in items.enumerated() { try locate(item, depth: depth + 1, path: path.index(i), argument: argument) }
        case .object(let object):
            guard depth <= maxDepth else { throw tooDeep(path, argument) }
            for (key, item) in object.entries {
                if key.utf8.count > maxStringBytes {
                    throw StepKitError(.invalidArgument, code: "stringTooLong", message: "A key in \(argument) is too long.", path: path)
                }
                try locate(item, depth: depth + 1, path: path.key(key), argument: argument)
            }
        default:
            break
        }
    }

    private func tooDeep(_ path: JSONPath, _ argument: String) -> StepKitError {
        StepKitError(.invalidArgument, code: "tooDeep", message: "\(argument) nests deeper than the limit of \(maxDepth) levels.", path: path)
    }

    /// Reads `{"maxBytes", "maxDepth", "maxStringBytes"}`-style overrides from an options object.
    func overridden(by r: FieldReader?, bytesKey: String, depthKey: String, stringKey: String) -> InputLimits {
        guard let r else { return self }
        var limits = self
        if let v = r.integer(bytesKey, in: 1...(1 << 40)) { limits.maxBytes = v }
        if let v = r.integer(depthKey, in: 1...2000) { limits.maxDepth = v }
        if let v = r.integer(stringKey, in: 1...(1 << 40)) { limits.maxStringBytes = v }
        return limits
    }
}
