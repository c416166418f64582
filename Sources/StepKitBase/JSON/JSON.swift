/// A JSON value as the engine sees it: parsed from jansson, built for output, compared by value.
///
/// Integers and reals stay distinct (`5` and `5.0`) so that what a host sent is what it reads
/// back; `numericValue` gives both as a `Double` where only the magnitude matters.
///
/// `public`, with its accessors `@inlinable`, so the modules above read a value without a call
/// (see `IndexTable`); nothing outside the package imports StepKitBase.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The value as a number, for integers and reals alike.
    @inlinable package var numericValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    @inlinable package var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    @inlinable package var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    @inlinable package var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    @inlinable package var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    @inlinable package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON type's name, for error messages ("expected a string, found a number").
    @usableFromInline package var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Equality as a host means it: numbers compare by value (`1 == 1.0`), objects ignore key order.
    package func sameValue(as other: JSON) -> Bool {
        switch (self, other) {
        case (.int, .double), (.double, .int), (.int, .int), (.double, .double):
            return numericValue == other.numericValue
        case (.array(let a), .array(let b)):
            guard a.count == b.count else { return false }
            return zip(a, b).allSatisfy { $0.sameValue(as: $1) }
        case (.object(let a), .object(let b)):
            return a.sameEntries(as: b) { $0.sameValue(as: $1) }
        default:
            return self == other
        }
    }
}

/// A JSON object that keeps its keys in order, so output reads in the order it was written.
/// Values sit in insertion order next to their keys, so walking an object, as every output does,
/// hashes nothing; a small object (most of them: every state read builds dozens) finds a key by
/// comparing, a larger one through a dictionary from key to position, built once it grows.
/// `public` with its reads `@inlinable`, as `JSON`.
public struct JSONObject: Equatable, Sendable {
    @usableFromInline package private(set) var keys: [String] = []
    @usableFromInline private(set) var values: [JSON] = []
    /// Empty while the object has at most `linearLimit` keys.
    @usableFromInline private(set) var positions: [String: Int] = [:]
    /// Up to this many keys, a key is found by comparing (lengths first) rather than hashing: a
    /// saved visit has nine keys and a form answer often twenty, and building and probing a
    /// SipHash index for them cost more than comparing (the restore profile in
    /// `benchmarks/README.md`, fourth round).
    @usableFromInline static let linearLimit = 32

    package init() {}

    /// An empty object with room for `capacity` keys (the parser knows each object's size).
    init(reservingCapacity capacity: Int) {
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// An object of `keys` (all different: the caller has checked) and their `values`, in order.
    package init(distinctKeys keys: [String], values: [JSON]) {
        assert(keys.count == values.count && Set(keys).count == keys.count, "init(distinctKeys:values:)")
        self.keys = keys
        self.values = values
        if keys.count > JSONObject.linearLimit {
            for (i, k) in keys.enumerated() { positions[k] = i }
        }
    }

    /// An object written out in the source (`["step": ..., "date": ...]`), its keys all
    /// different (checked in debug builds, as `init(distinctKeys:values:)` checks): built in one
    /// pass, without looking each key up first (the state, the result and the events build
    /// hundreds of these, and the look-ups were a third of building one).
    package init(_ pairs: KeyValuePairs<String, JSON>) {
        var keys: [String] = []
        var values: [JSON] = []
        keys.reserveCapacity(pairs.count)
        values.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            keys.append(key)
            values.append(value)
        }
        self.init(distinctKeys: keys, values: values)
    }

    @inlinable package var count: Int { keys.count }

    package var entries: [(key: String, value: JSON)] {
        var result: [(key: String, value: JSON)] = []
        result.reserveCapacity(keys.count)
        for i in keys.indices { result.append((keys[i], values[i])) }
        return result
    }

    /// Room for `capacity` keys in all, for an object about to grow by a known number of keys.
    package mutating func reserveCapacity(_ capacity: Int) {
        keys.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    /// Calls `body` with the keys and the values in order, read in place (nothing is copied out,
    /// so nothing shared is retained: `JSONWriter`).
    func withUnsafeEntries<R>(_ body: (UnsafeBufferPointer<String>, UnsafeBufferPointer<JSON>) -> R) -> R {
        keys.withUnsafeBufferPointer { k in values.withUnsafeBufferPointer { v in body(k, v) } }
    }

    /// Calls `body` with every key in order, allocating nothing.
    @inlinable package func forEachKey(_ body: (String) -> Void) {
        for key in keys { body(key) }
    }

    /// Calls `body` with every key and value in order, allocating nothing.
    @inlinable package func forEachEntry(_ body: (String, JSON) -> Void) {
        for i in keys.indices { body(keys[i], values[i]) }
    }

    /// Whether `other` holds the same keys, in any order, with values that `same` matches.
    /// Objects made from the same source mostly list their keys in the same order, so each key
    /// is looked for at its own position first (comparing a saved form answer with the one the
    /// replay rebuilt looked up each of its keys, and copied every entry out first).
    func sameEntries(as other: JSONObject, _ same: (JSON, JSON) -> Bool) -> Bool {
        guard keys.count == other.keys.count else { return false }
        for i in keys.indices {
            let theirs: Int
            if other.keys[i] == keys[i] {
                theirs = i
            } else if let j = other.position(of: keys[i]) {
                theirs = j
            } else {
                return false
            }
            guard same(values[i], other.values[theirs]) else { return false }
        }
        return true
    }

    /// Where `key` stands among `keys`, for a reader that marks keys by position.
    @inlinable func position(of key: String) -> Int? {
        if keys.count <= JSONObject.linearLimit {
            // Most keys asked of an object are not in it (a reader asks for every optional
            // field): comparing lengths first settles most of them without comparing text.
            let length = key.utf8.count
            return keys.firstIndex { $0.utf8.count == length && $0 == key }
        }
        return positions[key]
    }

    /// The value at `position` when the key there is `key`; nil otherwise (the key may still be
    /// elsewhere). For readers that expect keys in a known order.
    @inlinable package func value(at position: Int, ifKeyIs key: String) -> JSON? {
        keys[ifPresent: position] == key ? values[position] : nil
    }

    /// The value at a position `position(of:)` gave; nil for any other.
    @inlinable package func value(at position: Int) -> JSON? {
        values[ifPresent: position]
    }

    /// Replaces the value at a position `position(of:)` gave (keys and order stay); any other
    /// position changes nothing.
    @inlinable package mutating func replaceValue(at position: Int, with value: JSON) {
        guard values.indices.contains(position) else { return }
        values[position] = value
    }

    package subscript(key: String) -> JSON? {
        @inlinable get { position(of: key).map { values[$0] } }
        set {
            if let newValue {
                if let i = position(of: key) {
                    values[i] = newValue
                    return
                }
                appendNew(key, newValue)
            } else if let i = position(of: key) {
                keys.remove(at: i)
                values.remove(at: i)
                if keys.count > JSONObject.linearLimit {
                    positions[key] = nil
                    for j in i..<keys.count { positions[keys[j]] = j }
                } else {
                    positions = [:]
                }
            }
        }
    }

    /// Adds a key the object does not hold yet, without looking for it first: for the parser,
    /// whose input jansson has already checked for duplicate keys. Checked in debug builds.
    package mutating func appendNew(_ key: String, _ value: JSON) {
        assert(position(of: key) == nil, "appendNew: duplicate key \(key)")
        keys.append(key)
        values.append(value)
        if keys.count > JSONObject.linearLimit {
            if positions.isEmpty {
                for (i, k) in keys.enumerated() { positions[k] = i }
            } else {
                positions[key] = keys.count - 1
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.keys == rhs.keys && lhs.values == rhs.values
    }
}

extension JSON {
    /// Convenience for building output: `.object(["a": .int(1)])`.
    package static func object(_ pairs: KeyValuePairs<String, JSON>) -> JSON { .object(JSONObject(pairs)) }

    package static func string(_ s: String?) -> JSON { s.map { .string($0) } ?? .null }

    package static func number(_ d: Double) -> JSON {
        if d == d.rounded(), abs(d) < 9.0e15 { return .int(Int64(d)) }
        return .double(d)
    }
}
