/// Values by step (or section, or action) index: the task's rules, read on every move and
/// written only while the task compiles, and a session's answers and latest visits, read and
/// written on every move.
///
/// An array with a slot for every index up to the highest one written, so a read is a bounds
/// check and a load. A dictionary hashed the index on every read and write: with SipHash a
/// tenth of what a step cost, and still about 0.4k instructions a step with a cheaper fixed mix
/// (`benchmarks/README.md`, sixth round). The slots cost one value's size per step up to the
/// highest index written (for a session's answers, 32 bytes a step of the task): a
/// compiled task holds far more per step than that, and a session that reaches a step has
/// paid for its presentation already. Iterates in index order.
///
/// Generic and read on every step from the modules above, so its members are `@inlinable`: a
/// caller gets them specialized for its `Value` (unspecialized, a read went through the runtime's
/// generic metadata and cost several times the step itself). The type is `public` only because
/// this toolchain serializes no `@inlinable` body whose type is `package` (docs/architecture.md,
/// "Facts of this toolchain"); nothing outside the package imports StepKitBase.
public struct IndexTable<Value: Sendable>: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    @usableFromInline var slots: [Value?] = []
    /// How many indexes hold a value.
    @usableFromInline package private(set) var count = 0

    @inlinable init() {}

    @inlinable public init(dictionaryLiteral elements: (Int, Value)...) {
        for (key, value) in elements { self[key] = value }
    }

    @inlinable package var isEmpty: Bool { count == 0 }

    /// The value at `index`; nil for an index never written (a negative one included).
    @inlinable package subscript(index: Int) -> Value? {
        get { slots[ifPresent: index] ?? nil }
        set {
            guard makeSlot(index, for: newValue != nil) else { return }
            count += (newValue != nil ? 1 : 0) - (slots[index] != nil ? 1 : 0)
            slots[index] = newValue
        }
    }

    @inlinable package subscript(index: Int, default value: @autoclosure () -> Value) -> Value {
        get { self[index] ?? value() }
        set { self[index] = newValue }
    }

    /// Sets `value` at `index` and returns the value it replaces.
    @inlinable @discardableResult
    package mutating func updateValue(_ value: Value, forKey index: Int) -> Value? {
        guard makeSlot(index, for: true) else { return nil }
        let old = slots[index]
        if old == nil { count += 1 }
        slots[index] = value
        return old
    }

    /// Whether `index` has a slot, making one when a value is to be written there. Indexes are
    /// the task's own, never negative; a negative one has no slot (nothing is written).
    @inlinable mutating func makeSlot(_ index: Int, for value: Bool) -> Bool {
        assert(index >= 0, "IndexTable indexes are step, section and action indexes")
        if index < slots.count { return index >= 0 }
        guard value else { return false }
        if index == slots.count {
            // A walk through the task: the array's own growth (by doubling).
            slots.append(nil)
        } else {
            if index >= slots.capacity { slots.reserveCapacity(Swift.max(index + 1, 2 * slots.capacity)) }
            slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
        }
        return true
    }

    /// The indexes that hold a value, ascending.
    @inlinable package var keys: [Int] { map { $0.key } }

    /// The values, in index order.
    @inlinable package var values: [Value] { map { $0.value } }

    public struct Iterator: IteratorProtocol {
        @usableFromInline let slots: [Value?]
        @usableFromInline var position = 0

        @inlinable init(slots: [Value?]) { self.slots = slots }

        @inlinable public mutating func next() -> (key: Int, value: Value)? {
            while position < slots.count {
                let i = position
                position += 1
                if let value = slots[i] { return (i, value) }
            }
            return nil
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(slots: slots) }
}

/// Equal when the same indexes hold equal values (however far each one's slots have grown).
extension IndexTable: Equatable where Value: Equatable {
    @inlinable public static func == (lhs: IndexTable, rhs: IndexTable) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (index, value) in lhs where rhs[index] != value { return false }
        return true
    }
}
