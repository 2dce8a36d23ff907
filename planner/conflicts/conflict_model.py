"""What every conflict model offers the placers, the search and the views, and the models by name.

A conflict model says which pairs of buffers may be live together (so must not share bytes). Two
exist: "dag" (`dag_model.DagConflicts`: only what the DAG orders may share) and "serial"
(`serial_model.SerialConflicts`: interval lifetimes over one execution order). See
docs/semantics.md for the definitions.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..model.graph import Graph
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from ..support.gc_pause import paused_collection
from .antichain import LowerBound
from .dag_model import DagConflicts
from .serial_model import SerialConflicts


@runtime_checkable
class ConflictModel(Protocol):
    """The interface both conflict models implement (buffers are indices into `graph.buffers`)."""

    name: str
    """"dag" or "serial"."""
    graph: Graph

    @property
    def intervals(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(first, last) use steps when two buffers conflict exactly when their closed step
        ranges overlap (always for serial; for dag when the topological order is unique), else
        None. Interval kernels may then replace conflict sets."""

    @property
    def conflict_pairs(self) -> int | None:
        """How many unordered pairs of buffers conflict, when that is cheap to know; else None."""

    def precedes(self, a: int, b: int) -> bool:
        """Whether buffer `a` is done before buffer `b` starts, so they may share bytes."""

    def conflicts(self, a: int, b: int) -> bool:
        """Whether buffers `a` and `b` may be live together (so must not share bytes)."""

    def prepare(self, cancel: CancelToken = NEVER) -> None:
        """Do the one-time work `conflict_mask` needs (the closure for a general DAG) now, so a
        placer can cancel it; later calls return at once."""

    def conflict_mask(self, b: int) -> int:
        """The buffers that conflict with buffer `b`, as a bitset over buffer indices."""

    def explain(self, a: int, b: int) -> str:
        """One sentence: why `a` and `b` may or may not share bytes."""

    def use_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Each buffer's first and last use step (int64 arrays): positions in the schedule
        (serial) or in one topological order (dag)."""

    def lower_bound(self, cancel: CancelToken = NEVER) -> LowerBound:
        """The least slab any plan can have under this model, with a witness."""


CONFLICT_MODELS: dict[str, type] = {"dag": DagConflicts, "serial": SerialConflicts}


def conflict_model(graph: Graph, name: str = "dag") -> ConflictModel:
    """The conflict model `name` over `graph` (built once per graph object, then cached on it)."""
    if name not in CONFLICT_MODELS:
        raise PlanError(f"unknown conflict model {name!r}; "
                        f"choose from {', '.join(CONFLICT_MODELS)}")
    cache = graph.__dict__.setdefault("_conflict_models", {})
    if name not in cache:
        cache[name] = CONFLICT_MODELS[name](graph)
    return cache[name]


def default_conflicts(graph: Graph) -> str:
    """The conflict model to plan `graph` under when the user names none.

    - The model the file names for itself (`graph.conflicts`). A recorded training step names
      "serial": eager PyTorch ran its ops one at a time in its schedule and each buffer's uses
      are the lifetime recorded over that order, so the serial lower bound is that order's live
      peak, the one PyTorch measured (MemTracker); the dag model would keep apart buffers that
      never lived together, because the recorded data dependencies leave most ops unordered.
    - "serial" when the DAG is exactly the chain of its schedule (a MiniMalloc file, a
      snapshot): there both models give the same conflicts, and the serial one is the cheaper.
    - "dag" otherwise.
    """
    if graph.conflicts is not None:
        return graph.conflicts
    return "serial" if is_schedule_chain(graph) else "dag"


def is_schedule_chain(graph: Graph) -> bool:
    """Whether the DAG is exactly the chain of its schedule: every node once, and one edge from
    each step to the next and no other."""
    if graph.known_chain():
        return True
    schedule = graph.schedule
    if schedule is None or len(schedule) != len(graph.nodes) or \
            len(graph.edges) != max(len(schedule) - 1, 0):
        return False
    with paused_collection():  # the node index and edge array of a million-node chain
        index = graph.node_index
        if not all(name in index for name in schedule):
            return False
        step = np.full(len(schedule), -1, dtype=np.int64)
        step[[index[name] for name in schedule]] = np.arange(len(schedule))
        ends = graph.edge_array
    # Every node once, and n - 1 edges each from one step to the next, no two from one step.
    return bool((step >= 0).all() and (step[ends[:, 1]] == step[ends[:, 0]] + 1).all() and
                np.bincount(ends[:, 0], minlength=1).max(initial=0) <= 1)
