"""Conflict model B, a serial schedule: each buffer lives over an interval of one execution order.

Only safe when the runtime enforces that order (SPEC.md §3). Works from schedule positions alone,
never from the graph's transitive closure, so it scales to traces with tens of thousands of
buffers.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .errors import PlanError
from .graph import Graph
from .reachability import topological_order


def serial_schedule(graph: Graph) -> tuple[int, ...]:
    """Node indices in execution order: the graph's `schedule`, or a topological order.

    A given schedule must list every node once and respect every edge; otherwise `PlanError`.
    """
    if graph.schedule is None:
        return tuple(topological_order([n.name for n in graph.nodes], graph.successors))
    position: dict[str, int] = {}
    for step, name in enumerate(graph.schedule):
        if name in position:
            raise PlanError(f"schedule lists node {name!r} twice")
        position[name] = step
    for node in graph.nodes:
        if node.name not in position:
            raise PlanError(f"schedule misses node {node.name!r}")
    for src, dst in graph.edges:
        if position[src] > position[dst]:
            raise PlanError(f"schedule runs {dst!r} before {src!r}, "
                            f"against edge {src!r} -> {dst!r}")
    index = graph.node_index
    return tuple(index[name] for name in graph.schedule)


class SerialConflicts:
    """Interval lifetimes over one serial schedule: buffers conflict when their intervals overlap.

    Buffer i lives over the closed step range [`first[i]`, `last[i]`] of the schedule (the
    positions of its first and last use).
    """

    name = "serial"

    def __init__(self, graph: Graph):
        self.graph = graph
        self.schedule = serial_schedule(graph)
        step_of = np.empty(len(graph.nodes), dtype=np.int64)
        step_of[np.asarray(self.schedule, dtype=np.int64)] = np.arange(len(self.schedule))
        uses = graph.use_indices
        counts = np.fromiter((len(u) for u in uses), dtype=np.int64, count=len(uses))
        flat = np.fromiter((u for us in uses for u in us), dtype=np.int64, count=int(counts.sum()))
        steps = step_of[flat]
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        # Every buffer has at least one use (a load error otherwise), so no reduce segment is empty.
        self.first = np.minimum.reduceat(steps, starts) if len(uses) else np.zeros(0, np.int64)
        self.last = np.maximum.reduceat(steps, starts) if len(uses) else np.zeros(0, np.int64)

    def precedes(self, a: int, b: int) -> bool:
        """Whether buffer `a`'s last use comes before buffer `b`'s first use in the schedule."""
        return bool(self.last[a] < self.first[b])

    def conflicts(self, a: int, b: int) -> bool:
        """Whether the lifetimes of buffers `a` and `b` overlap (so they must not share bytes)."""
        return a != b and not self.precedes(a, b) and not self.precedes(b, a)

    def conflict_mask(self, b: int) -> int:
        """The set of buffers whose lifetime overlaps buffer `b`'s, as a bitset over indices."""
        live = (self.first <= self.last[b]) & (self.last >= self.first[b])
        live[b] = False
        return int.from_bytes(np.packbits(live, bitorder="little").tobytes(), "little")

    @cached_property
    def conflict_pairs(self) -> int:
        """How many unordered pairs of buffers conflict (without listing them)."""
        started = np.searchsorted(np.sort(self.first), self.last, side="right")
        ended = np.searchsorted(np.sort(self.last), self.first, side="left")
        return int((started - ended - 1).sum()) // 2

    def explain(self, a: int, b: int) -> str:
        """Why buffers `a` and `b` may or may not share bytes, naming the steps that decide it."""
        names = self.graph.buffers
        if a == b:
            return f"{names[a].name} is the same buffer"
        for first, second in ((a, b), (b, a)):
            if self.precedes(first, second):
                return (f"{names[first].name} and {names[second].name} may share bytes in this "
                        f"schedule: {names[first].name} is last used at "
                        f"{self._step(self.last[first])}, before {names[second].name} is first "
                        f"used at {self._step(self.first[second])}")
        return (f"{names[a].name} and {names[b].name} conflict, so they may not share bytes: "
                f"{names[a].name} lives from {self._step(self.first[a])} to "
                f"{self._step(self.last[a])}, {names[b].name} from {self._step(self.first[b])} "
                f"to {self._step(self.last[b])}, and these overlap")

    def _step(self, position) -> str:
        return f"step {int(position)} ({self.graph.nodes[self.schedule[int(position)]].name})"
