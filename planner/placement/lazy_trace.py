"""The placement trace of a finished plan, step by step, built only for the steps asked for.

A placer computes offsets with the array kernels of `dense_kernels`; the window's replay wants,
for the step on show, the placed buffers the request avoided, the gaps it passed over and whose
bytes it reuses. `PlacementTrace` derives each from the plan itself (the request order and the
offsets) when indexed, exactly as `traced_placement.place` would have recorded it, so `plan
--json` never pays for a trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from ..model.bitset import members
from ..model.plan import PlacementStep
from .traced_placement import _choose, _Occupancy


class PlacementTrace(Sequence):
    """`PlacementStep`s of placing `order` (buffer indices) at `offsets` (per buffer index) with
    `fit` under `model`; step k is computed when first asked for, then kept."""

    def __init__(self, graph, model, order, offsets, fit: str):
        self.graph = graph
        self.model = model
        self.order = np.asarray(order, dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.fit = fit
        self._steps: dict[int, PlacementStep] = {}

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        k = index + len(self) if index < 0 else index
        if not 0 <= k < len(self):
            raise IndexError("placement step out of range")
        if k not in self._steps:
            self._steps[k] = self._step(k)
        return self._steps[k]

    def __eq__(self, other) -> bool:
        if isinstance(other, PlacementTrace):
            # The same placement of equal graphs under one model gives the same steps.
            return (self.model.name == other.model.name and self.fit == other.fit
                    and np.array_equal(self.order, other.order)
                    and np.array_equal(self.offsets, other.offsets)
                    and (self.graph is other.graph or self.graph == other.graph))
        if isinstance(other, (tuple, list)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    @cached_property
    def _position(self) -> np.ndarray:
        """Per buffer index, its request number."""
        position = np.empty(len(self.order), dtype=np.int64)
        position[self.order] = np.arange(len(self.order))
        return position

    @cached_property
    def _size(self) -> np.ndarray:
        return np.asarray(self.graph.reserved, dtype=np.int64)

    def _placed_conflicts(self, k: int) -> np.ndarray:
        """The buffers placed before request k that conflict with it, ascending by index."""
        i = int(self.order[k])
        intervals = self.model.intervals
        if intervals is not None:
            first, last = intervals
            hit = (first <= last[i]) & (last >= first[i]) & (self._position < k)
            hit[i] = False
            return np.flatnonzero(hit)
        found = np.asarray(members(self.model.conflict_mask(i)), dtype=np.int64)
        return found[self._position[found] < k]

    def _step(self, k: int) -> PlacementStep:
        i = int(self.order[k])
        names = self.graph.buffers
        size = int(self._size[i])
        blocking = self._placed_conflicts(k)
        blocking = blocking[np.argsort(self.offsets[blocking], kind="stable")]
        spans = [(int(self.offsets[j]), int(self.offsets[j] + self._size[j])) for j in blocking]
        at, skipped = _choose(spans, size, self.fit)
        return PlacementStep(k, names[i].name, size, tuple(names[j].name for j in blocking),
                             tuple(skipped), at, tuple(names[j].name for j in self._reuses(k)))

    def _reuses(self, k: int) -> list[int]:
        """The buffers that last took the bytes request k lands on, by offset: earlier requests
        overlapping its bytes, the latest first, each owning what no later one took."""
        i = int(self.order[k])
        lo, hi = int(self.offsets[i]), int(self.offsets[i] + self._size[i])
        earlier = self.order[:k]
        start, end = self.offsets[earlier], self.offsets[earlier] + self._size[earlier]
        touching = np.flatnonzero((start < hi) & (end > lo))[::-1]
        free = [(lo, hi)]  # bytes of [lo, hi) no later request took, by offset
        owned: list[tuple[int, int]] = []  # (lowest byte owned, buffer)
        for r in touching:
            if not free:
                break
            a, b = int(start[r]), int(end[r])
            rest = []
            for x, y in free:
                if a < y and b > x:
                    owned.append((max(a, x), int(earlier[r])))
                    if x < a:
                        rest.append((x, a))
                    if b < y:
                        rest.append((b, y))
                else:
                    rest.append((x, y))
            free = rest
        return list(dict.fromkeys(j for _, j in sorted(owned)))

    def reuses_by_name(self) -> dict[str, tuple[str, ...]]:
        """Every request's `reuses`, by buffer name, in one replay of the slab's occupancy."""
        names = [b.name for b in self.graph.buffers]
        occupancy = _Occupancy()
        result = {}
        for i, at in zip(self.order.tolist(), self.offsets[self.order].tolist()):
            previous = occupancy.take(at, at + int(self._size[i]), i)
            result[names[i]] = tuple(names[j] for j in previous)
        return result


def reuses_by_name(plan) -> dict[str, tuple[str, ...]]:
    """Each placed buffer's `reuses` (the buffers that last held its bytes), by name: from the
    lazy trace in one pass, or from a trace recorded step by step."""
    steps = plan.steps
    if isinstance(steps, PlacementTrace):
        return steps.reuses_by_name()
    return {s.name: s.reuses for s in steps}
