"""Placing requests one by one at a clear offset (first fit, Luminal's, or best fit), recording
for each request what it avoided, what it skipped and whose bytes it reuses (`PlacementStep`)."""

from __future__ import annotations

from bisect import bisect_right

from ..model.bitset import members
from ..model.graph import Graph
from ..model.intervals import overlap_lists
from ..model.plan import Placement, PlacementStep, Plan
from ..support.cancel import NEVER, CancelToken
from ..support.errors import CapacityError


class _Occupancy:
    """Which buffer last took each byte range of the slab, to tell whose bytes a request reuses."""

    def __init__(self):
        self.starts = [0]
        self.owners: list[int | None] = [None]

    def take(self, lo: int, hi: int, who: int) -> list[int]:
        """Give [lo, hi) to `who`; return the previous holders of any of it, by offset."""
        starts, owners = self.starts, self.owners
        i = bisect_right(starts, lo) - 1
        j = bisect_right(starts, hi - 1) - 1
        previous = [o for o in dict.fromkeys(owners[i:j + 1]) if o is not None]
        new_starts, new_owners = [], []
        if starts[i] < lo:
            new_starts.append(starts[i])
            new_owners.append(owners[i])
        new_starts.append(lo)
        new_owners.append(who)
        if j + 1 == len(starts) or starts[j + 1] != hi:
            new_starts.append(hi)
            new_owners.append(owners[j])
        starts[i:j + 1] = new_starts
        owners[i:j + 1] = new_owners
        return previous


class _PlacedConflicts:
    """The placed buffers a request conflicts with, ascending by index: from interval conflict
    lists when the model has intervals (O(pairs) in all), else from its bitset masks."""

    def __init__(self, model, n: int):
        self.model = model
        self.placed = [False] * n
        self.placed_bits = 0
        self.lists = None
        if model.intervals is not None:
            starts, neighbours = overlap_lists(*model.intervals)
            self.lists = (starts.tolist(), neighbours.tolist())

    def conflicting(self, i: int) -> list[int]:
        if self.lists is None:
            return members(self.model.conflict_mask(i) & self.placed_bits)
        starts, neighbours = self.lists
        placed = self.placed
        return [j for j in neighbours[starts[i]:starts[i + 1]] if placed[j]]

    def add(self, i: int) -> None:
        self.placed[i] = True
        if self.lists is None:
            self.placed_bits |= 1 << i


def _choose(spans: list[tuple[int, int]], size: int, fit: str) -> tuple[int, list[tuple[int, int]]]:
    """The offset for `size` bytes clear of `spans` (sorted by start), and the gaps passed over."""
    cursor = 0
    gaps = []
    for lo, hi in spans:
        if lo > cursor:
            gaps.append((cursor, lo))
            if fit == "first" and lo - cursor >= size:
                return cursor, gaps[:-1]
        cursor = max(cursor, hi)
    if fit == "best":
        fitting = [g for g in gaps if g[1] - g[0] >= size]
        if fitting:
            chosen = min(fitting, key=lambda g: (g[1] - g[0], g[0]))
            return chosen[0], [g for g in gaps if g != chosen]
    return cursor, gaps


def place(graph: Graph, conflicts, order: tuple[int, ...], *, fit: str = "first",
          capacity: int | None = None, algorithm: str | None = None,
          cancel: CancelToken = NEVER) -> Plan:
    """Place buffers in `order`, each at the `fit` ("first" or "best") clear offset.

    A request only avoids already-placed buffers it conflicts with under `conflicts` (a
    `ConflictModel`). Exceeding `capacity` raises `CapacityError` naming the request.
    """
    conflicts.prepare(cancel)
    placed = _PlacedConflicts(conflicts, len(graph.buffers))
    reserved = graph.reserved
    buffers = graph.buffers
    names = [b.name for b in buffers]
    offset = [0] * len(buffers)
    end = [0] * len(buffers)
    occupancy = _Occupancy()
    placements, steps = [], []
    for request, i in enumerate(order):
        if not request & 63:
            cancel.report("placement", request / len(order))
        size = reserved[i]
        blocking = placed.conflicting(i)
        blocking.sort(key=offset.__getitem__)  # stable: ties stay in index order
        at, skipped = _choose([(offset[j], end[j]) for j in blocking], size, fit)
        if capacity is not None and at + size > capacity:
            raise CapacityError(
                f"capacity exceeded while placing request {request} {names[i]!r} ({size:,} bytes): "
                f"lowest clear offset is {at:,}, and {at + size:,} > capacity {capacity:,}",
                request, names[i], size)
        offset[i], end[i] = at, at + size
        placed.add(i)
        reuses = occupancy.take(at, at + size, i)
        placements.append(Placement(names[i], at, buffers[i].bytes, size))
        steps.append(PlacementStep(request, names[i], size, tuple([names[j] for j in blocking]),
                                   tuple(skipped), at, tuple([names[j] for j in reuses])))
    return Plan(
        placements=tuple(placements),
        steps=tuple(steps),
        slab_bytes=max(end, default=0),
        no_reuse_bytes=sum(reserved),
        algorithm=algorithm or f"{fit}-fit",
        conflict_model=conflicts.name,
        alignment=graph.alignment,
    )
