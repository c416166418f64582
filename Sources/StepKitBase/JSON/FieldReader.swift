/// Reads the fields of one JSON object of a definition, reporting to `Diagnostics` every field of
/// the wrong type, every missing required field and, at `finish()`, every key nobody asked for.
///
/// Each accessor returns `nil` both when the key is absent and when it is wrong (the problem is
/// already reported), so a compiler can go on and find the next problem.
///
/// `public`, with the readers `@inlinable`: the compilers above read every field of a definition
/// through it (see `IndexTable`).
public final class FieldReader {
    @usableFromInline package let object: JSONObject
    @usableFromInline package let path: JSONPath
    @usableFromInline package let diagnostics: Diagnostics
    /// Which of the object's keys were asked for, by position in `object.keys`: a bit each for
    /// the first 64 (every object a definition has, in practice: no array to allocate and free
    /// per object read), then one `Bool` each. A reader lives on one thread for one object's
    /// reading and its methods never nest, so the run-time exclusivity check each write would
    /// cost (3 % of compiling a small task) is left out.
    @exclusivity(unchecked) @usableFromInline var usedBits: UInt64 = 0
    @exclusivity(unchecked) @usableFromInline var usedBeyond: [Bool]
    /// Bit `n % 64` is set when a key of `n` UTF-8 bytes is in the object. A reader asks for
    /// every optional field and most are absent: a key of a length no key has is settled here,
    /// without comparing it with each key (`position(of:)`).
    @usableFromInline let keyLengths: UInt64

    /// Nil (with a problem reported) when `value` is not an object.
    @inlinable package init?(_ value: JSON, at path: JSONPath, _ diagnostics: Diagnostics, what: String) {
        guard case .object(let object) = value else {
            diagnostics.error("wrongType", "Expected \(what) (an object), found \(value.typeName).", at: path)
            return nil
        }
        self.object = object
        self.usedBeyond = object.count > 64 ? Array(repeating: false, count: object.count - 64) : []
        var lengths: UInt64 = 0
        object.forEachKey { lengths |= 1 << UInt64($0.utf8.count & 63) }
        self.keyLengths = lengths
        self.path = path
        self.diagnostics = diagnostics
    }

    @inlinable package func has(_ key: String) -> Bool { position(of: key) != nil }

    /// Where `key` is in the object: `JSONObject.position(of:)`, after the length check.
    @inlinable func position(of key: String) -> Int? {
        guard keyLengths & (1 << UInt64(key.utf8.count & 63)) != 0 else { return nil }
        return object.position(of: key)
    }

    /// The raw value of `key`, marked as understood.
    @inlinable package func value(_ key: String, required: Bool = false) -> JSON? {
        guard let i = position(of: key) else {
            if required {
                diagnostics.error("missingKey", "\"\(key)\" is required.", at: path.key(key))
            }
            return nil
        }
        markUsed(i)
        return object.value(at: i)
    }

    @inlinable func markUsed(_ i: Int) {
        if i >= 0, i < 64 {
            usedBits |= 1 << UInt64(i)
        } else if usedBeyond.indices.contains(i - 64) {
            usedBeyond[i - 64] = true
        }
    }

    func isUsed(_ i: Int) -> Bool {
        i < 64 ? usedBits & (1 << UInt64(i)) != 0 : usedBeyond[i - 64]
    }

    @inlinable package func string(_ key: String, required: Bool = false, nonEmpty: Bool = false) -> String? {
        guard let value = value(key, required: required) else { return nil }
        guard case .string(let s) = value else {
            wrongType(key, expected: "a string", found: value)
            return nil
        }
        if nonEmpty && s.isEmpty {
            diagnostics.error("emptyValue", "\"\(key)\" must not be empty.", at: path.key(key))
            return nil
        }
        return s
    }

    @inlinable package func bool(_ key: String, required: Bool = false) -> Bool? {
        guard let value = value(key, required: required) else { return nil }
        guard case .bool(let b) = value else {
            wrongType(key, expected: "true or false", found: value)
            return nil
        }
        return b
    }

    @inlinable package func number(_ key: String, required: Bool = false) -> Double? {
        guard let value = value(key, required: required) else { return nil }
        guard let d = value.numericValue else {
            wrongType(key, expected: "a number", found: value)
            return nil
        }
        return d
    }

    /// A whole number within `range` (the check protects the arithmetic that follows).
    package func integer(_ key: String, required: Bool = false, in range: ClosedRange<Int> = -1_000_000_000...1_000_000_000) -> Int? {
        guard let d = number(key, required: required) else { return nil }
        guard d == d.rounded() else {
            diagnostics.error("notAnInteger", "\"\(key)\" must be a whole number.", at: path.key(key))
            return nil
        }
        guard d >= Double(range.lowerBound), d <= Double(range.upperBound) else {
            diagnostics.error("outOfRange", "\"\(key)\" must be between \(range.lowerBound) and \(range.upperBound).", at: path.key(key))
            return nil
        }
        return Int(d)
    }

    @inlinable package func array(_ key: String, required: Bool = false) -> [JSON]? {
        guard let value = value(key, required: required) else { return nil }
        guard case .array(let items) = value else {
            wrongType(key, expected: "an array", found: value)
            return nil
        }
        return items
    }

    /// One of a fixed set of strings.
    package func choice(_ key: String, of allowed: [String], required: Bool = false) -> String? {
        guard let s = string(key, required: required) else { return nil }
        guard allowed.contains(s) else {
            let list = allowed.map { "\"" + $0 + "\"" }.joined(separator: ", ")
            diagnostics.error("invalidValue", "\"\(key)\" must be one of \(list); found \"\(s)\".", at: path.key(key))
            return nil
        }
        return s
    }

    /// Marks keys as understood without reading them (display-only fields checked elsewhere).
    package func accept(strings keys: [String]) {
        for key in keys { _ = string(key) }
    }

    package func accept(bools keys: [String]) {
        for key in keys { _ = bool(key) }
    }

    /// Reports every key that no accessor asked for.
    package func finish() {
        for (i, key) in object.keys.enumerated() where !isUsed(i) {
            diagnostics.error("unknownKey", "Unknown key \"\(key)\".", at: path.key(key))
        }
    }

    @usableFromInline func wrongType(_ key: String, expected: String, found: JSON) {
        diagnostics.error("wrongType", "\"\(key)\" must be \(expected), found \(found.typeName).", at: path.key(key))
    }
}
