"""When each buffer lives, as steps on one axis: DAG layers, or positions in the planner's
schedule under the serial conflict model. No Qt here, so the planning worker can compute it."""

from __future__ import annotations

import numpy as np

import planner


def dag_layers(graph) -> list[int]:
    """Per node index, its longest-path layer: 0 for sources, else one past its deepest predecessor."""
    layer = [0] * len(graph.nodes)
    for v in graph.reachability.topo:
        for s in graph.successors[v]:
            layer[s] = max(layer[s], layer[v] + 1)
    return layer


def buffer_lifetimes(graph, conflicts: str) -> tuple[np.ndarray, np.ndarray, str]:
    """First and last step of every buffer (by buffer index) and what a step is.

    Serial model: positions in the planner's schedule. Otherwise: DAG layers of the uses.
    """
    model = planner.conflict_model(graph, conflicts)
    if hasattr(model, "first") and hasattr(model, "last"):
        return np.asarray(model.first), np.asarray(model.last), "schedule step"
    layer = np.array(dag_layers(graph), dtype=np.int64)
    flat, starts = graph.use_arrays  # every buffer has a use, so no run is empty
    used = layer[flat]
    first = np.minimum.reduceat(used, starts[:-1]) if len(flat) else np.zeros(0, np.int64)
    last = np.maximum.reduceat(used, starts[:-1]) if len(flat) else np.zeros(0, np.int64)
    return first, last, "DAG layer"
