"""When each buffer lives, as steps on one axis: DAG layers, or positions in the planner's
schedule under the serial conflict model. No Qt here, so the planning worker can compute it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slabscope import planner

from slabscope.app.state.identity_cache import IdentityCache


def dag_layers(graph) -> list[int]:
    """Per node index, its longest-path layer: 0 for sources, else one past its deepest predecessor."""
    layer = [0] * len(graph.nodes)
    for v in graph.topo:  # the order only: the closure is quadratic on large graphs
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


@dataclass(frozen=True)
class StepModel:
    """Buffers' first and last steps (by buffer index), what a step is, and each node's step."""

    first: np.ndarray
    last: np.ndarray
    step_name: str
    node_step: dict[str, int]


def _build_step_model(graph, conflicts: str) -> StepModel:
    first, last, step_name = buffer_lifetimes(graph, conflicts)
    if step_name == "schedule step":
        schedule = planner.conflict_model(graph, conflicts).schedule
        node_step = {graph.nodes[v].name: s for s, v in enumerate(schedule)}
    else:
        node_step = {node.name: layer for node, layer in zip(graph.nodes, dag_layers(graph))}
    return StepModel(first, last, step_name, node_step)


_per_graph = IdentityCache(lambda graph: {}, size=2)  # graph -> {conflict model: StepModel}


def step_model(graph, conflicts: str) -> StepModel:
    """`graph`'s steps under `conflicts`, computed once per graph and model."""
    models = _per_graph(graph)
    if conflicts not in models:
        models[conflicts] = _build_step_model(graph, conflicts)
    return models[conflicts]


def prepare_step_model(graph, plan) -> StepModel:
    """`step_model` for the model `plan` was made under, and the plan's `placement_arrays`: a
    preparer for the planning worker."""
    placement_arrays(plan, graph)
    return step_model(graph, plan.conflict_model)


@dataclass(frozen=True)
class PlacementArrays:
    """A plan's placements as columns, in placement order: names (and each name's position),
    the buffers' indices in the graph, offsets and reserved bytes."""

    names: list[str]
    position: dict[str, int]
    rows: np.ndarray
    offsets: np.ndarray
    reserved: np.ndarray


def _placement_arrays(plan, graph) -> PlacementArrays:
    index = graph.buffer_index
    names = [p.name for p in plan.placements]
    return PlacementArrays(names, {n: i for i, n in enumerate(names)}, np.array([index[n] for n in names], dtype=np.int64),
                           np.array([p.offset for p in plan.placements], dtype=float),
                           np.array([p.reserved for p in plan.placements], dtype=float))


# Per plan (of `graph`): passes over 62,000 placements took 20 ms of the GUI thread per plan.
placement_arrays = IdentityCache(_placement_arrays, size=4)
