/// An integer the library chose (a handle's address, `HandleRegistry`) as a dictionary key,
/// hashed by a fixed mix (the 64-bit finalizer of MurmurHash3, with the dictionary's seed folded
/// in) instead of SipHash, which cost about a hundred instructions a look-up on every call: every
/// bit of the integer reaches the low bits a dictionary's buckets are chosen by. Not for keys a
/// host chooses.
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
