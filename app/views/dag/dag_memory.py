"""Memory on the DAG: per node the bytes it writes and the bytes live at its schedule step, and
the live-peak node, from `planner.analysis.peak` (the one definition of what is live when).
Computed by the loading worker with the layout; no Qt here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slabscope.planner.analysis.peak import live_at, live_peak
from slabscope.planner.conflicts.conflict_model import conflict_model
from slabscope.planner.model.graph import Graph

# The colourings of the DAG's boxes: by what a node writes, by what is live at its step, or by
# the kind of the largest buffer it writes (no memory scale).
BY_LIVE, BY_WRITTEN, BY_KIND = "live", "written", "kind"
COLOURINGS = (BY_LIVE, BY_WRITTEN, BY_KIND)
COLOURING_NAMES = {BY_LIVE: "bytes live at its step", BY_WRITTEN: "bytes it writes",
                   BY_KIND: "kind it writes"}


@dataclass(frozen=True)
class NodeMemory:
    """Per node (by index): reserved bytes of the buffers it writes (those it uses first), bytes
    live at its step, its step, the kind of the largest buffer it writes; and the live peak's
    node and bytes."""

    written: tuple[int, ...]
    live: tuple[int, ...]
    step: tuple[int, ...]
    kind: tuple[str | None, ...]
    peak_node: int | None
    peak_bytes: int

    def values(self, colouring: str) -> tuple[int, ...]:
        """The figure per node that `colouring` scales by."""
        return self.written if colouring == BY_WRITTEN else self.live


def node_memory(graph: Graph) -> NodeMemory | None:
    """`graph`'s memory per node, or None for a graph without buffers (a folded drawing)."""
    if not graph.buffers or not graph.nodes:
        return None
    peak = live_peak(graph)
    model = conflict_model(graph, "serial")
    schedule = np.asarray(model.schedule, dtype=np.int64)
    step = np.empty(len(graph.nodes), dtype=np.int64)
    step[schedule] = np.arange(len(schedule))
    first = np.asarray(model.use_steps()[0], dtype=np.int64)
    producer = schedule[first]
    reserved = graph.reserved
    written = [0] * len(graph.nodes)
    largest = [0] * len(graph.nodes)
    kind: list[str | None] = [None] * len(graph.nodes)
    for b, v in enumerate(producer.tolist()):
        written[v] += reserved[b]
        if reserved[b] > largest[v]:
            largest[v], kind[v] = reserved[b], graph.buffers[b].kind
    live = [int(x) for x in peak.curve.bytes[step].tolist()]
    peak_node = graph.node_index[peak.node] if peak.node is not None and peak.bytes else None
    return NodeMemory(tuple(written), tuple(live), tuple(step.tolist()), tuple(kind), peak_node,
                      peak.bytes)


def live_at_node(graph: Graph, memory: NodeMemory, node: int) -> tuple[int, ...]:
    """The buffers live at node `node`'s step, largest first."""
    return live_at(graph, memory.step[node])
