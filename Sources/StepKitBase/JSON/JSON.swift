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
/// Each key sits next to its value in one array of entries, so an object is one allocation
/// (parsing, copying and freeing a definition's objects cost one allocation each, not one for
/// the keys and one for the values: `benchmarks/README.md`, wave 6), and walking an object, as
/// every output does, hashes nothing; a small object (most of them: every state read builds
/// dozens) finds a key by comparing, a larger one through a dictionary from key to position,
/// built once it grows. `public` with its reads `@inlinable`, as `JSON`.
public struct JSONObject: Equatable, Sendable {
    /// A key and its value. A struct, not a tuple: arrays of tuples are copied and destroyed
    /// through the runtime's generic tuple witnesses, member by member (2 % of a compile).
    public struct Entry: Sendable {
        public var key: String
        public var value: JSON
        @inlinable init(key: String, value: JSON) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline private(set) var storage: [Entry] = []
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
        storage.reserveCapacity(capacity)
    }

    /// An object of `keys` (all different: the caller has checked) and their `values`, in order.
    package init(distinctKeys keys: [String], values: [JSON]) {
        assert(keys.count == values.count && Set(keys).count == keys.count, "init(distinctKeys:values:)")
        var entries: [Entry] = []
        entries.reserveCapacity(keys.count)
        for i in keys.indices { entries.append(Entry(key: keys[i], value: values[i])) }
        self.init(distinctEntries: entries)
    }

    /// An object of `entries`, their keys all different (the caller has checked), in order.
    package init(distinctEntries entries: [Entry]) {
        assert(Set(entries.lazy.map(\.key)).count == entries.count, "init(distinctEntries:)")
        storage = entries
        if entries.count > JSONObject.linearLimit {
            for (i, e) in entries.enumerated() { positions[e.key] = i }
        }
    }

    /// An object written out in the source (`["step": ..., "date": ...]`), its keys all
    /// different (checked in debug builds, as `init(distinctKeys:values:)` checks): built in one
    /// pass, without looking each key up first (the state, the result and the events build
    /// hundreds of these, and the look-ups were a third of building one).
    package init(_ pairs: KeyValuePairs<String, JSON>) {
        var entries: [Entry] = []
        entries.reserveCapacity(pairs.count)
        for (key, value) in pairs { entries.append(Entry(key: key, value: value)) }
        self.init(distinctEntries: entries)
    }

    @inlinable package var count: Int { storage.count }

    /// The keys in order, read in place (a view: nothing is copied out).
    @inlinable package var keys: Keys { Keys(storage: storage) }

    /// The keys of an object, in order, as a collection read in place.
    public struct Keys: RandomAccessCollection, Equatable {
        @usableFromInline let storage: [Entry]
        @inlinable init(storage: [Entry]) { self.storage = storage }
        @inlinable public var startIndex: Int { 0 }
        @inlinable public var endIndex: Int { storage.count }
        @inlinable public subscript(i: Int) -> String { storage[i].key }
        /// The keys are `list`, in its order (tests compare an object's keys with a literal list).
        @inlinable public static func == (keys: Keys, list: [String]) -> Bool { keys.elementsEqual(list) }
        @inlinable public static func == (lhs: Keys, rhs: Keys) -> Bool { lhs.elementsEqual(rhs) }
    }

    /// The entries in order, as pairs (copied out: `forEachEntry` reads them in place).
    package var entries: [(key: String, value: JSON)] { storage.map { ($0.key, $0.value) } }

    /// Room for `capacity` keys in all, for an object about to grow by a known number of keys.
    package mutating func reserveCapacity(_ capacity: Int) {
        storage.reserveCapacity(capacity)
    }

    /// Calls `body` with the entries in order, read in place (nothing is copied out, so nothing
    /// shared is retained: `JSONWriter`).
    func withUnsafeEntries<R>(_ body: (UnsafeBufferPointer<Entry>) -> R) -> R {
        storage.withUnsafeBufferPointer { body($0) }
    }

    /// Calls `body` with every key in order, allocating nothing.
    @inlinable package func forEachKey(_ body: (String) -> Void) {
        for e in storage { body(e.key) }
    }

    /// Calls `body` with every key and value in order, allocating nothing.
    @inlinable package func forEachEntry(_ body: (String, JSON) -> Void) {
        for e in storage { body(e.key, e.value) }
    }

    /// Whether `other` holds the same keys, in any order, with values that `same` matches.
    /// Objects made from the same source mostly list their keys in the same order, so each key
    /// is looked for at its own position first (comparing a saved form answer with the one the
    /// replay rebuilt looked up each of its keys, and copied every entry out first).
    func sameEntries(as other: JSONObject, _ same: (JSON, JSON) -> Bool) -> Bool {
        guard storage.count == other.storage.count else { return false }
        for i in storage.indices {
            let theirs: Int
            if other.storage[i].key == storage[i].key {
                theirs = i
            } else if let j = other.position(of: storage[i].key) {
                theirs = j
            } else {
                return false
            }
            guard same(storage[i].value, other.storage[theirs].value) else { return false }
        }
        return true
    }

    /// Where `key` stands among the keys, for a reader that marks keys by position.
    @inlinable func position(of key: String) -> Int? {
        if storage.count <= JSONObject.linearLimit {
            // Most keys asked of an object are not in it (a reader asks for every optional
            // field): comparing lengths first settles most of them without comparing text.
            let length = key.utf8.count
            return storage.withUnsafeBufferPointer { entries in
                for i in entries.indices where entries[i].key.utf8.count == length && entries[i].key == key { return i }
                return nil
            }
        }
        return positions[key]
    }

    /// The value at `position` when the key there is `key`; nil otherwise (the key may still be
    /// elsewhere). For readers that expect keys in a known order.
    @inlinable package func value(at position: Int, ifKeyIs key: String) -> JSON? {
        guard let entry = storage[ifPresent: position], entry.key == key else { return nil }
        return entry.value
    }

    /// The value at a position `position(of:)` gave; nil for any other.
    @inlinable package func value(at position: Int) -> JSON? {
        storage[ifPresent: position]?.value
    }

    /// Replaces the value at a position `position(of:)` gave (keys and order stay); any other
    /// position changes nothing.
    @inlinable package mutating func replaceValue(at position: Int, with value: JSON) {
        guard storage.indices.contains(position) else { return }
        storage[position].value = value
    }

    package subscript(key: String) -> JSON? {
        @inlinable get { position(of: key).map { storage[$0].value } }
        set {
            if let newValue {
                if let i = position(of: key) {
                    storage[i].value = newValue
                    return
                }
                appendNew(key, newValue)
            } else if let i = position(of: key) {
                storage.remove(at: i)
                if storage.count > JSONObject.linearLimit {
                    positions[key] = nil
                    for j in i..<storage.count { positions[storage[j].key] = j }
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
        storage.append(Entry(key: key, value: value))
        if storage.count > JSONObject.linearLimit {
            if positions.isEmpty {
                for (i, e) in storage.enumerated() { positions[e.key] = i }
            } else {
                positions[key] = storage.count - 1
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.storage.count == rhs.storage.count else { return false }
        for i in lhs.storage.indices where lhs.storage[i].key != rhs.storage[i].key || lhs.storage[i].value != rhs.storage[i].value {
            return false
        }
        return true
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
