"""The planner's front door: pick a conflict model and an algorithm, get a `Plan`."""

from __future__ import annotations

from .algorithms import best_fit, first_fit, largest_first
from .conflicts import DagConflicts
from .errors import PlanError
from .graph import Graph
from .lifetimes import SerialConflicts
from .plan import Plan
from .search import search

CONFLICT_MODELS = {"dag": DagConflicts, "serial": SerialConflicts}


def conflict_model(graph: Graph, name: str = "dag"):
    """The conflict model `name` over `graph` (cached on the graph object)."""
    if name not in CONFLICT_MODELS:
        raise PlanError(f"unknown conflict model {name!r}; choose from {', '.join(CONFLICT_MODELS)}")
    cache = graph.__dict__.setdefault("_conflict_models", {})
    if name not in cache:
        cache[name] = CONFLICT_MODELS[name](graph)
    return cache[name]


# Name -> placer(graph, model, request_order, capacity, budget) -> Plan.
ALGORITHMS = {
    "first-fit": first_fit,
    "largest-first": largest_first,
    "best-fit": best_fit,
    "search": search,
}


def plan(graph: Graph, algorithm: str = "first-fit", order=None, capacity: int | None = None,
         conflicts: str = "dag", budget: float = 2.0) -> Plan:
    """Plan `graph`: every buffer an offset in one slab.

    `algorithm`: "first-fit" (default), "largest-first", "best-fit" or "search";
    `order` is a list of buffer names placed first (default: the graph's request order);
    `capacity`, when given, is a hard limit in bytes; `conflicts` is "dag" (default) or
    "serial"; `budget` is the seconds "search" may spend.
    """
    if algorithm not in ALGORITHMS:
        raise PlanError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    if capacity is not None and capacity < 0:
        raise PlanError(f"capacity must be non-negative, got {capacity}")
    if budget < 0:
        raise PlanError(f"budget must be non-negative, got {budget}")
    model = conflict_model(graph, conflicts)
    return ALGORITHMS[algorithm](graph, model, graph.request_order(order), capacity, budget)
