"""Which lane of the slab bar each buffer is drawn in, so that reused bytes stack visibly."""

from __future__ import annotations

import numpy as np


def slab_lanes(placements) -> list[int]:
    """Per placement (in request order), the lowest lane holding no earlier buffer whose bytes it overlaps.

    Buffers that share bytes therefore sit in different lanes, and a buffer that reuses the bytes
    of earlier ones stacks above them. This is only a drawing choice; the plan decides the bytes.
    """
    starts = np.array([p.offset for p in placements], dtype=float)
    ends = np.array([p.end for p in placements], dtype=float)
    lanes = np.zeros(len(placements), dtype=int)
    for i in range(len(placements)):
        below = (starts[:i] < ends[i]) & (ends[:i] > starts[i])
        taken = np.unique(lanes[:i][below])
        # The first lane number missing from the sorted taken lanes.
        free = np.flatnonzero(taken != np.arange(taken.size))
        lanes[i] = free[0] if free.size else taken.size
    return lanes.tolist()
