"""Live bytes over time for graphs that are only a chain of time steps (trace files, snapshots).

Such a graph's DAG says nothing beyond "step t comes after step t-1"; what matters is how many
bytes are live at each step. Under the serial model that curve's peak is the lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.graph import Graph
from .conflict_model import conflict_model, is_schedule_chain


@dataclass(frozen=True)
class LiveBytes:
    """Reserved bytes of the buffers live at each step of the schedule (`bytes[t]`, step t), the
    step where they peak first, and each step's node name."""

    bytes: np.ndarray
    peak: int
    peak_step: int
    step_names: tuple[str, ...]


def is_time_chain(graph: Graph) -> bool:
    """Whether `graph` is only a chain of time steps: its DAG is exactly the chain of its schedule
    and no node has an op (a trace's steps, not a program's nodes)."""
    return is_schedule_chain(graph) and not any(n.op for n in graph.nodes)


def live_bytes(graph: Graph) -> LiveBytes:
    """The live reserved bytes per schedule step, from each buffer's first and last use."""
    model = conflict_model(graph, "serial")
    first, last = model.use_steps()
    steps = len(model.schedule)
    # Python integers where the live total could pass int64 (sizes near 2^64 are valid).
    exact = np.int64 if sum(graph.reserved) < 2**63 else object
    reserved = np.asarray(graph.reserved, dtype=exact)
    change = np.zeros(steps + 1, dtype=exact)
    np.add.at(change, np.asarray(first, dtype=np.int64), reserved)
    np.add.at(change, np.asarray(last, dtype=np.int64) + 1, -reserved)
    curve = np.cumsum(change[:-1])
    peak_step = int(np.argmax(curve)) if steps else 0
    names = tuple(graph.nodes[v].name for v in model.schedule)
    return LiveBytes(curve, int(curve[peak_step]) if steps else 0, peak_step, names)
