/// Reading a position that may be past either end: the engine's tables are indexed by step,
/// section and calculation indexes that come from other tables, and a missing entry reads as
/// nil rather than trapping.
extension RandomAccessCollection {
    /// The element at `position`, or nil when `position` is not a valid index (a negative one
    /// included). A bounds check and a load: the comparison with `startIndex` and `endIndex` is
    /// what `indices.contains` did, spelled once.
    /// `@inlinable`: generic, and read on every step from the modules above.
    @inlinable package subscript(ifPresent position: Index) -> Element? {
        position >= startIndex && position < endIndex ? self[position] : nil
    }
}

