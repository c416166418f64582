/// PCG32: M. E. O'Neill's `pcg32` generator (PCG-XSH-RR, 64-bit state, 32-bit output), exactly as
/// the reference C implementation (`pcg_basic.c`) defines it: `pcg32_srandom_r` to seed,
/// `pcg32_random_r` to draw, `pcg32_boundedrand_r` for an unbiased draw below a bound.
///
/// Why this generator: the randomized order of a session (`docs/randomization.md`) must be
/// reproducible by any host in any language from the seed alone, so it is a published algorithm
/// with published reference output (seed 42, sequence 54: `0xa15c02b7 0x7b47f409 …`), small
/// enough to write again from its description (the tests do, in Python).
package struct PCG32: Sendable {
    private var state: UInt64 = 0
    private var increment: UInt64

    static let multiplier: UInt64 = 6364136223846793005

    /// `pcg32_srandom_r(rng, initstate, initseq)`.
    package init(seed: UInt64, sequence: UInt64) {
        increment = (sequence << 1) | 1
        _ = next()
        state = state &+ seed
        _ = next()
    }

    /// `pcg32_random_r`: the next 32-bit output.
    package mutating func next() -> UInt32 {
        let old = state
        state = old &* PCG32.multiplier &+ increment
        let xorshifted = UInt32(truncatingIfNeeded: ((old >> 18) ^ old) >> 27)
        let rotation = UInt32(truncatingIfNeeded: old >> 59)
        return (xorshifted >> rotation) | (xorshifted << ((0 &- rotation) & 31))
    }

    /// `pcg32_boundedrand_r`: a number in `0..<bound` without modulo bias (outputs below
    /// `2^32 mod bound` are drawn again). `bound` is at least 1.
    package mutating func next(below bound: UInt32) -> UInt32 {
        guard bound > 1 else { return 0 }
        let threshold = (0 &- bound) % bound
        while true {
            let r = next()
            if r >= threshold { return r % bound }
        }
    }

    /// The stream of a named list (`docs/randomization.md`): the FNV-1a 64-bit hash of the
    /// name's UTF-8 bytes (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
    package static func sequence(named name: String) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return hash
    }

    /// The order of `count` entries, those in `pinned` staying where they are: the movable
    /// positions, in order, are shuffled by Fisher–Yates from the last down (`j = next(below:
    /// i + 1)` for `i` from `m - 1` down to `1`, swapping `i` and `j`), then put back into the
    /// movable positions in order. Returns, for each position, the index of the entry shown there.
    package static func order(count: Int, pinned: Set<Int>, seed: UInt64, name: String) -> [Int] {
        var result = Array(0..<max(count, 0))
        let movable = result.filter { !pinned.contains($0) }
        guard movable.count > 1 else { return result }
        var generator = PCG32(seed: seed, sequence: sequence(named: name))
        var shuffled = movable
        var i = shuffled.count - 1
        while i >= 1 {
            let j = Int(generator.next(below: UInt32(truncatingIfNeeded: i + 1)))
            shuffled.swapAt(i, j)
            i -= 1
        }
        for (position, entry) in zip(movable, shuffled) { result[position] = entry }
        return result
    }
}
