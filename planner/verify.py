"""Checking a plan against a graph: overlaps of conflicting buffers, alignment, the slab's end."""

from __future__ import annotations

from dataclasses import dataclass

from .bitset import members
from .conflict_model import conflict_model
from .graph import Graph
from .plan import Plan


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
    for a, (lo, hi) in spans.items():
        for b in members(model.conflict_mask(a)):
            if b > a and b in spans and spans[b][0] < hi and lo < spans[b][1]:
                pair = (graph.buffers[a].name, graph.buffers[b].name)
                clobbered.append(pair)
                problems.append(f"{pair[0]!r} and {pair[1]!r} conflict but share bytes "
                                f"[{max(lo, spans[b][0]):,}, {min(hi, spans[b][1]):,})")
    return Verification(tuple(problems), tuple(clobbered))
