"""Checking a plan against a graph: overlaps of conflicting buffers, alignment, the slab's end."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conflicts.conflict_model import conflict_model
from ..model.bitset import members
from ..model.graph import Graph
from ..model.intervals import overlap_lists
from ..model.plan import Plan


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: `problems` is empty exactly when the plan is sound."""

    problems: tuple[str, ...]
    clobbered: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems


def verify(graph: Graph, plan: Plan, conflicts=None) -> Verification:
    """Every problem with `plan` on `graph`, under `conflicts` (default: the plan's own model).

    Reports conflicting pairs whose byte ranges overlap, misaligned offsets, buffers past the
    slab's end, wrong reserved sizes, and buffers missing from or unknown to the plan.
    """
    model = conflicts if conflicts is not None else conflict_model(graph, plan.conflict_model)
    problems: list[str] = []
    by_name = plan.by_name
    for buf in graph.buffers:
        if buf.name not in by_name:
            problems.append(f"buffer {buf.name!r} is not placed")
    for p in plan.placements:
        if p.name not in graph.buffer_index:
            problems.append(f"plan places unknown buffer {p.name!r}")
            continue
        want = graph.reserved[graph.buffer_index[p.name]]
        if p.reserved != want:
            problems.append(f"{p.name!r} reserves {p.reserved:,} bytes, needs {want:,}")
        if p.offset % graph.alignment:
            problems.append(f"{p.name!r} at offset {p.offset:,} is not aligned to {graph.alignment}")
        if p.offset < 0 or p.end > plan.slab_bytes:
            problems.append(f"{p.name!r} [{p.offset:,}, {p.end:,}) lies past the slab's end "
                            f"{plan.slab_bytes:,}")
    clobbered = []
    spans = {graph.buffer_index[p.name]: (p.offset, p.end) for p in plan.placements
             if p.name in graph.buffer_index}
    for a, b in _sharing_conflicts(model, spans):
        (lo, hi), (other_lo, other_hi) = spans[a], spans[b]
        pair = (graph.buffers[a].name, graph.buffers[b].name)
        clobbered.append(pair)
        problems.append(f"{pair[0]!r} and {pair[1]!r} conflict but share bytes "
                        f"[{max(lo, other_lo):,}, {min(hi, other_hi):,})")
    return Verification(tuple(problems), tuple(clobbered))


def _sharing_conflicts(model, spans: dict[int, tuple[int, int]]) -> list[tuple[int, int]]:
    """Conflicting pairs (a, b), a < b, whose byte ranges overlap, by a's place in `spans`.

    Interval models are checked pair by pair over their overlap lists, O(pairs); others through
    each buffer's conflict bitset."""
    if model.intervals is None:
        return [(a, b) for a, (lo, hi) in spans.items() for b in members(model.conflict_mask(a))
                if b > a and b in spans and spans[b][0] < hi and lo < spans[b][1]]
    n = len(model.intervals[0])
    starts, neighbours = overlap_lists(*model.intervals)
    rows = np.repeat(np.arange(n), np.diff(starts))
    keep = rows < neighbours
    rows, cols = rows[keep], neighbours[keep]
    placed = np.zeros(n, dtype=bool)
    placed[list(spans)] = True
    ends = [hi for _, hi in spans.values()]
    # Offsets past 2**63 (sizes up to 2**64 - 1) compare as Python integers.
    dtype = np.int64 if max(ends, default=0) < 2**63 else object
    lo, hi = np.zeros(n, dtype=dtype), np.zeros(n, dtype=dtype)
    for i, (start, end) in spans.items():
        lo[i], hi[i] = start, end
    both = placed[rows] & placed[cols]
    rows, cols = rows[both], cols[both]
    share = (lo[cols] < hi[rows]) & (lo[rows] < hi[cols])
    rows, cols = rows[share], cols[share]
    position = np.zeros(n, dtype=np.int64)
    position[list(spans)] = np.arange(len(spans))
    ranked = np.lexsort((cols, position[rows]))
    return list(zip(rows[ranked].tolist(), cols[ranked].tolist()))
