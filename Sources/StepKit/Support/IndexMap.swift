/// A dictionary keyed by step index, for what a session keeps per step (its answers, its
/// latest visits): sparse, since a session holds only the steps it reached, and read and written
/// on every move.
///
/// `[Int: Value]` hashes each key with SipHash under the process's seed, about a hundred
/// instructions a look-up and a tenth of a step (`benchmarks/README.md`). Keys here are step
/// indexes of the task (never chosen by the host), so a fixed integer mix (`IndexKey`) spreads
/// them as well at a tenth of the cost. Iterates in no particular order, like a dictionary.
struct IndexMap<Value>: Sequence, ExpressibleByDictionaryLiteral {
    private var storage: [IndexKey: Value]

    init() { storage = [:] }

    init(dictionaryLiteral elements: (Int, Value)...) {
        storage = [:]
        for (key, value) in elements { storage[IndexKey(key)] = value }
    }

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }

    subscript(index: Int) -> Value? {
        get { storage[IndexKey(index)] }
        set { storage[IndexKey(index)] = newValue }
    }

    subscript(index: Int, default value: @autoclosure () -> Value) -> Value {
        get { storage[IndexKey(index), default: value()] }
        set { storage[IndexKey(index)] = newValue }
    }

    /// Sets `value` at `index` and returns the value it replaces.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey index: Int) -> Value? {
        storage.updateValue(value, forKey: IndexKey(index))
    }

    var keys: [Int] { storage.keys.map(\.index) }
    var values: [Value] { Array(storage.values) }

    struct Iterator: IteratorProtocol {
        fileprivate var base: Dictionary<IndexKey, Value>.Iterator

        mutating func next() -> (key: Int, value: Value)? {
            base.next().map { ($0.key.index, $0.value) }
        }
    }

    func makeIterator() -> Iterator { Iterator(base: storage.makeIterator()) }
}

extension IndexMap: Equatable where Value: Equatable {}
extension IndexMap: Sendable where Value: Sendable {}

/// An integer the library chose (a step index; a handle's address, `HandleRegistry`) as a
/// dictionary key, hashed by a fixed mix (the 64-bit finalizer of MurmurHash3, with the
/// dictionary's seed folded in) instead of SipHash: every bit of the integer reaches the low bits
/// a dictionary's buckets are chosen by. Not for keys a host chooses.
struct IndexKey: Hashable, Sendable {
    let index: Int

    init(_ index: Int) { self.index = index }

    func hash(into hasher: inout Hasher) { hasher.combine(index) }

    func _rawHashValue(seed: Int) -> Int {
        var x = UInt64(bitPattern: Int64(index)) ^ UInt64(bitPattern: Int64(seed))
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return Int(truncatingIfNeeded: x)
    }
}
