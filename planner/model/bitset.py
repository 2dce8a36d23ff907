"""Sets of small integers as Python ints: bit i set means member i."""

import numpy as np

# Past this many members, unpacking with NumPy beats peeling bits one by one.
_DENSE_MEMBERS = 48


def members(bits: int) -> list[int]:
    """The indices of the set bits of `bits`, ascending."""
    if bits.bit_count() <= _DENSE_MEMBERS:
        found = []
        while bits:
            low = bits & -bits
            found.append(low.bit_length() - 1)
            bits ^= low
        return found
    raw = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()


def from_indices(indices) -> int:
    """The set holding exactly `indices`."""
    bits = 0
    for i in indices:
        bits |= 1 << i
    return bits
