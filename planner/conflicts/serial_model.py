"""Conflict model "serial": each buffer lives over an interval of one execution order.

Only safe when the runtime enforces that order (docs/semantics.md §3). Works from schedule
positions alone, never from the graph's transitive closure, so it scales to traces with millions
of buffers.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..model.graph import Graph
from ..model.intervals import first_last, overlap_mask, overlap_pairs
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from .antichain import LowerBound, bound_of, peak_live


def serial_schedule(graph: Graph) -> tuple[int, ...]:
    """Node indices in execution order: the graph's `schedule`, or a topological order.

    A given schedule must list every node once and respect every edge; otherwise `PlanError`.
    """
    if graph.schedule is None:
        return graph.topo
    if graph.known_chain():
        return tuple(range(len(graph.nodes)))
    valid = _valid_schedule(graph)
    if valid is not None:
        return valid
    # Something is wrong: find the first problem, for the message.
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


def _valid_schedule(graph: Graph) -> tuple[int, ...] | None:
    """The schedule as node indices when it lists every node once and respects every edge (array
    checks, linear time); None when it does not."""
    index = graph.node_index
    schedule = graph.schedule
    if len(schedule) != len(graph.nodes) or not all(name in index for name in schedule):
        return None
    steps = [index[name] for name in schedule]
    position = np.full(len(steps), -1, dtype=np.int64)
    position[steps] = np.arange(len(steps))
    if (position < 0).any():  # as long as the node list, so a repeat leaves a node out
        return None
    ends = graph.edge_array
    if (position[ends[:, 0]] > position[ends[:, 1]]).any():
        return None
    return tuple(steps)


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
        self.first, self.last = first_last(step_of, *graph.use_arrays)

    @property
    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """(first, last): in this model conflicts are exactly interval overlaps."""
        return self.first, self.last

    def use_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Each buffer's first and last use as positions in the schedule."""
        return self.first, self.last

    def precedes(self, a: int, b: int) -> bool:
        """Whether buffer `a`'s last use comes before buffer `b`'s first use in the schedule."""
        return bool(self.last[a] < self.first[b])

    def conflicts(self, a: int, b: int) -> bool:
        """Whether the lifetimes of buffers `a` and `b` overlap (so they must not share bytes)."""
        return a != b and not self.precedes(a, b) and not self.precedes(b, a)

    def prepare(self, cancel: CancelToken = NEVER) -> None:
        """Nothing to do: the intervals were computed on construction."""

    def conflict_mask(self, b: int) -> int:
        """The set of buffers whose lifetime overlaps buffer `b`'s, as a bitset over indices."""
        return overlap_mask(self.first, self.last, b)

    @cached_property
    def conflict_pairs(self) -> int:
        """How many unordered pairs of buffers conflict (without listing them)."""
        return overlap_pairs(self.first, self.last)

    def lower_bound(self, cancel: CancelToken = NEVER) -> LowerBound:
        """The peak of live reserved bytes over the schedule, with the buffers live there."""
        cancel.check()
        return bound_of(self.graph, peak_live(self.first, self.last, self.graph.reserved),
                        self.name)

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
