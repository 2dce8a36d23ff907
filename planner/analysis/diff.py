"""Compare two runs: the live peak, slab, lower bound and reserved bytes of each, and the live
peak's difference attributed to ops, kinds, modules or frames.

Both sides are read with `peak.live_peak` and grouped with `peak.group`, the definitions
`explain` and the window share, so each grouping's rows add up exactly to a's live peak, to b's
and to their difference (b minus a): every buffer live at a side's peak is in exactly one row.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..allocator.allocator_replay import replay_graph
from ..conflicts.conflict_model import conflict_model, default_conflicts
from ..model.graph import Graph
from ..placement.greedy import first_fit
from ..support.cancel import NEVER, CancelToken
from ..support.gc_pause import paused_collection
from .peak import GROUPINGS, LivePeak, group, live_peak, supported_groupings


@dataclass(frozen=True)
class Side:
    """One run: its file, its live peak and who is live there, its slab and lower bound under
    `conflicts`, and its reserved bytes (recorded in a snapshot, else the caching allocator's
    model of the schedule)."""

    file: str
    graph: Graph
    peak: LivePeak
    slab_bytes: int
    lower_bound_bytes: int
    reserved_bytes: int
    reserved_recorded: bool
    conflicts: str

    def to_dict(self) -> dict:
        """The side as the JSON of `slabscope diff --json`."""
        return {"file": self.file, "peak_live_bytes": self.peak.bytes, "peak_step": self.peak.step,
                "slab_bytes": self.slab_bytes, "lower_bound_bytes": self.lower_bound_bytes,
                "conflicts": self.conflicts, "reserved_bytes": self.reserved_bytes}


@dataclass(frozen=True)
class Row:
    """One key of a grouping: the bytes and buffers live at each side's own live peak."""

    key: str
    a_bytes: int
    b_bytes: int
    a_count: int
    b_count: int
    a_buffers: tuple[int, ...]  # indices into a's graph.buffers
    b_buffers: tuple[int, ...]

    @property
    def difference_bytes(self) -> int:
        """b's bytes minus a's."""
        return self.b_bytes - self.a_bytes

    def to_dict(self) -> dict:
        """The row as the JSON of `slabscope diff --json`."""
        return {"key": self.key, "a_bytes": self.a_bytes, "b_bytes": self.b_bytes,
                "difference_bytes": self.difference_bytes, "a_count": self.a_count,
                "b_count": self.b_count}


@dataclass(frozen=True)
class Diff:
    """Two runs side by side, and the live peak's difference attributed by each grouping both
    sides support (rows sorted by the size of their difference, largest first)."""

    a: Side
    b: Side
    attribution: dict[str, tuple[Row, ...]]

    @property
    def peak_live_difference_bytes(self) -> int:
        """b's live peak minus a's."""
        return self.b.peak.bytes - self.a.peak.bytes

    def to_dict(self) -> dict:
        """The comparison as the JSON of `slabscope diff --json`."""
        return {"a": self.a.to_dict(), "b": self.b.to_dict(),
                "peak_live_difference_bytes": self.peak_live_difference_bytes,
                "attribution": {name: [row.to_dict() for row in rows]
                                for name, rows in self.attribution.items()}}


def attribute(a: Graph, a_peak: LivePeak, b: Graph, b_peak: LivePeak, grouping: str
              ) -> tuple[Row, ...]:
    """The buffers live at each side's peak grouped by `grouping`, one row per key of either
    side, sorted by the size of the difference (largest first, then by key)."""
    a_groups = {g.key: g for g in group(a, a_peak, grouping)}
    b_groups = {g.key: g for g in group(b, b_peak, grouping)}
    rows = []
    for key in a_groups.keys() | b_groups.keys():
        ga, gb = a_groups.get(key), b_groups.get(key)
        rows.append(Row(key, ga.bytes if ga else 0, gb.bytes if gb else 0,
                        ga.count if ga else 0, gb.count if gb else 0,
                        ga.buffers if ga else (), gb.buffers if gb else ()))
    return tuple(sorted(rows, key=lambda r: (-abs(r.difference_bytes), r.key)))


def common_groupings(a: Graph, b: Graph) -> tuple[str, ...]:
    """The groupings both graphs carry keys for (kind at least), in `GROUPINGS` order."""
    both = set(supported_groupings(a)) & set(supported_groupings(b))
    return tuple(g for g in GROUPINGS if g in both)


def side(graph: Graph, file: str = "", conflicts: str | None = None, *,
         cancel: CancelToken = NEVER) -> Side:
    """One run's figures: live peak, first-fit slab and lower bound under `conflicts` (default:
    the graph's own model), and reserved bytes."""
    conflicts = conflicts or default_conflicts(graph)
    with paused_collection():
        model = conflict_model(graph, conflicts)
        slab = first_fit(graph, model, graph.request_order(None), None, 0.0, cancel=cancel).slab_bytes
        cancel.check()
        bound = model.lower_bound(cancel).bytes
        peak = live_peak(graph)
    if graph.allocator is not None:
        reserved, recorded = graph.allocator.peak_reserved_bytes, True
    else:
        reserved, recorded = replay_graph(graph).peak_reserved_bytes, False
    return Side(file or graph.name, graph, peak, slab, bound, reserved, recorded, conflicts)


def compare(a: Side, b: Side) -> Diff:
    """The difference between two sides, attributed by every grouping both support."""
    return Diff(a, b, {g: attribute(a.graph, a.peak, b.graph, b.peak, g)
                       for g in common_groupings(a.graph, b.graph)})


def diff(a: Graph, b: Graph, conflicts: str | None = None, *, a_file: str = "",
         b_file: str = "", cancel: CancelToken = NEVER) -> Diff:
    """Compare run `a` with run `b` (any two graphs: snapshots, programs, training steps).

    `conflicts` is the conflict model of both slabs and lower bounds (default: each graph's
    own); `a_file` and `b_file` name the sides (default: the graphs' names)."""
    first = side(a, a_file, conflicts, cancel=cancel)
    cancel.check()
    return compare(first, side(b, b_file, conflicts, cancel=cancel))
