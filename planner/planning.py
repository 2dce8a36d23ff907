"""The planner's front door: pick a conflict model and an algorithm, get a `Plan`."""

from __future__ import annotations

from .conflicts import DagConflicts
from .errors import PlanError
from .graph import Graph
from .placement import place
from .plan import Plan

CONFLICT_MODELS = {"dag": DagConflicts}


def conflict_model(graph: Graph, name: str = "dag"):
    """The conflict model `name` over `graph` (cached on the graph object)."""
    if name not in CONFLICT_MODELS:
        raise PlanError(f"unknown conflict model {name!r}; choose from {', '.join(CONFLICT_MODELS)}")
    cache = graph.__dict__.setdefault("_conflict_models", {})
    if name not in cache:
        cache[name] = CONFLICT_MODELS[name](graph)
    return cache[name]


def _first_fit(graph, model, order, capacity):
    return place(graph, model, order, fit="first", capacity=capacity, algorithm="first-fit")


ALGORITHMS = {"first-fit": _first_fit}


def plan(graph: Graph, algorithm: str = "first-fit", order=None, capacity: int | None = None,
         conflicts: str = "dag") -> Plan:
    """Plan `graph`: every buffer an offset in one slab.

    `order` is a list of buffer names placed first (default: the graph's request order);
    `capacity`, when given, is a hard limit in bytes; `conflicts` is "dag" (default).
    """
    if algorithm not in ALGORITHMS:
        raise PlanError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    if capacity is not None and capacity < 0:
        raise PlanError(f"capacity must be non-negative, got {capacity}")
    model = conflict_model(graph, conflicts)
    return ALGORITHMS[algorithm](graph, model, graph.request_order(order), capacity)
