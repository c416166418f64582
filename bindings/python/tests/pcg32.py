"""The seeded generator of docs/randomization.md, written here from that page alone (PCG32 as
O'Neill's pcg_basic.c defines it, FNV-1a 64 for the stream names): a second implementation the
tests compare the library with. It does not call the library."""

M64 = (1 << 64) - 1


class PCG32:
    """pcg32 (XSH-RR 64/32): pcg32_srandom_r, pcg32_random_r, pcg32_boundedrand_r."""

    def __init__(self, initstate: int, initseq: int) -> None:
        self.state = 0
        self.inc = ((initseq << 1) | 1) & M64
        self.next()
        self.state = (self.state + initstate) & M64
        self.next()

    def next(self) -> int:
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & M64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def below(self, bound: int) -> int:
        threshold = (2**32 - bound) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def fnv1a64(name: str) -> int:
    h = 0xCBF29CE484222325
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * 0x100000001B3) & M64
    return h
