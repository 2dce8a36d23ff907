"""The planner's front door: `plan` (a conflict model and an algorithm give a `Plan`) and
`lower_bound`, with the algorithms by name."""

from __future__ import annotations

from .conflicts.antichain import LowerBound
from .conflicts.conflict_model import ConflictModel, conflict_model, default_conflicts
from .formats.safety.input_limits import check_slab
from .model.graph import SIZE_LIMIT, Graph
from .model.plan import Plan
from .placement.greedy import GREEDY
from .placement.search import default_iterations, search
from .support.cancel import NEVER, CancelToken
from .support.errors import PlanError
from .support.gc_pause import paused_collection

# Name -> placer(graph, model, request_order, capacity, budget, *, cancel) -> Plan.
ALGORITHMS = {**GREEDY, "search": search}


def plan(graph: Graph, algorithm: str = "first-fit", order=None, capacity: int | None = None,
         conflicts: str | None = None, budget: float = 2.0, *, cancel: CancelToken = NEVER,
         seed: int = 0, iterations: int | None = None) -> Plan:
    """Plan `graph`: every buffer an offset in one slab.

    `algorithm`: "first-fit" (default), "largest-first", "best-fit" or "search";
    `order` is a list of buffer names placed first (default: the graph's request order);
    `capacity`, when given, is a hard limit in bytes; `conflicts` is "dag" or "serial"
    (default: the graph's own, `default_conflicts`, as the command line and the window choose);
    `budget` is the seconds "search" may spend; `cancel` stops the work from another
    thread (raising `Cancelled`). "search" is reproducible: `seed` picks its random choices
    and `iterations`, when given, bounds its steps (else the budget buys a fixed number of
    steps per second, scaled to the graph: `search_iterations`); the same graph, seed and
    iterations (or budget) give the same plan, and the budget's deadline only cuts the work
    short, which the plan's proof then says.
    """
    if algorithm not in ALGORITHMS:
        raise PlanError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    if capacity is not None and capacity < 0:
        raise PlanError(f"capacity must be non-negative, got {capacity}")
    if capacity is not None and capacity > SIZE_LIMIT:
        raise PlanError(f"capacity {capacity} exceeds the 64-bit offset limit {SIZE_LIMIT}")
    if not 0 <= budget < float("inf"):  # NaN fails both comparisons; neither would ever stop
        raise PlanError(f"budget must be a finite number of seconds >= 0, got {budget}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise PlanError(f"seed must be an integer from 0 to 2**64 - 1, got {seed!r:.40}")
    if iterations is not None and iterations < 0:
        raise PlanError(f"iterations must be non-negative, got {iterations}")
    extra = {"seed": seed, "iterations": iterations} if algorithm == "search" else {}
    with paused_collection():
        model = _model(graph, conflicts)
        result = ALGORITHMS[algorithm](graph, model, graph.request_order(order), capacity,
                                       budget, cancel=cancel, **extra)
    check_slab(result.slab_bytes, f"placing {graph.name!r} by {algorithm}")
    return result


def search_iterations(graph: Graph, conflicts: str | None = None, budget: float = 2.0) -> int:
    """The steps "search" takes on `graph` in `budget` seconds when `iterations` is not given:
    a fixed amount of work for each second of the budget (never a measurement of the machine),
    scaled to the graph, so the same graph, seed and budget give the same plan on any machine
    unless the deadline cuts the work short. `conflicts` as in `plan`."""
    with paused_collection():
        return default_iterations(graph, _model(graph, conflicts), budget)


def lower_bound(graph: Graph, conflicts: str | None = None, *, cancel: CancelToken = NEVER
                ) -> LowerBound:
    """The lower bound on the slab of `graph` under conflict model `conflicts` ("dag", "serial";
    default: the graph's own, as in `plan`).

    Reserved (aligned) bytes count. The witness is a set of pairwise conflicting buffers whose
    reserved bytes sum to the bound.
    """
    with paused_collection():
        return _model(graph, conflicts).lower_bound(cancel)


def _model(graph: Graph, conflicts: str | None) -> ConflictModel:
    """The conflict model `conflicts` over `graph`, by default the graph's own."""
    return conflict_model(graph, conflicts or default_conflicts(graph))
