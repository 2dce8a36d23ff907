"""Which lane of the slab bar each buffer is drawn in, so that reused bytes stack visibly."""

from __future__ import annotations

import numpy as np


def slab_lanes(placements) -> list[int]:
    """Per placement (in request order), the lowest lane holding no earlier buffer whose bytes it overlaps.

    Buffers that share bytes therefore sit in different lanes, and a buffer that reuses the bytes
    of earlier ones stacks above them. This is only a drawing choice; the plan decides the bytes.
    """
    count = len(placements)
    starts = np.fromiter((p.offset for p in placements), dtype=float, count=count)
    ends = np.fromiter((p.end for p in placements), dtype=float, count=count)
    lanes = np.zeros(count, dtype=np.int64)
    taken = np.zeros(count + 1, dtype=bool)
    for i in range(count):
        below = lanes[:i][(starts[:i] < ends[i]) & (ends[:i] > starts[i])]
        taken[below] = True
        lanes[i] = int(np.argmin(taken))  # the first lane no overlapping buffer holds
        taken[below] = False
    return lanes.tolist()
