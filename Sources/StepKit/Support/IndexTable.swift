/// Values by step (or section) index, for the task's rules: read on every move, written only
/// while the task compiles.
///
/// An array with a slot for every index up to the highest one written, so a read is a bounds
/// check and a load. A dictionary hashed the index on every read (SipHash, with the process's
/// seed), a tenth of what a step cost (`benchmarks/README.md`). The task is compiled once and
/// shared by its sessions, so its size (one slot per step, about 8 bytes) is paid once.
/// Iterates in index order.
struct IndexTable<Value: Sendable>: Sendable, Sequence {
    private var slots: [Value?] = []
    /// How many indexes hold a value.
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    /// The value at `index`; nil for an index never written (a negative one included).
    subscript(index: Int) -> Value? {
        get { slots.indices.contains(index) ? slots[index] : nil }
        set {
            assert(index >= 0, "IndexTable indexes are step and section indexes")
            guard index >= 0 else { return }
            if index >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
            }
            let had = slots[index] != nil
            slots[index] = newValue
            count += (newValue != nil ? 1 : 0) - (had ? 1 : 0)
        }
    }

    subscript(index: Int, default value: @autoclosure () -> Value) -> Value {
        get { self[index] ?? value() }
        set { self[index] = newValue }
    }

    /// The indexes that hold a value, ascending.
    var keys: [Int] { map { $0.key } }

    /// The values, in index order.
    var values: [Value] { map { $0.value } }

    struct Iterator: IteratorProtocol {
        fileprivate let slots: [Value?]
        fileprivate var position = 0

        mutating func next() -> (key: Int, value: Value)? {
            while position < slots.count {
                let i = position
                position += 1
                if let value = slots[i] { return (i, value) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(slots: slots) }
}
