"""The greedy placers: first fit in request order, largest first, best fit.

Each turns a request order into a `Plan` with a trace through `placement.place`. Graphs whose
conflicts are too many to list step by step (long serial traces) are placed by the array kernels
of `packing` instead; their plans carry no trace (`steps` is empty).
"""

from __future__ import annotations

import numpy as np

from .errors import CapacityError
from .graph import Graph
from .placement import place
from .plan import Placement, Plan

# Past this many conflicting pairs, a trace (each step's conflicts by name) costs too much.
TRACE_PAIRS_LIMIT = 2_000_000

FITS = {"first": 0, "best": 1}


def use_steps(graph: Graph, model) -> tuple[np.ndarray, np.ndarray]:
    """Each buffer's first- and last-use steps: in the schedule (serial) or a topological order
    (dag)."""
    if model.name == "serial":
        return np.asarray(model.first), np.asarray(model.last)
    step_of = np.empty(len(graph.nodes), dtype=np.int64)
    step_of[np.asarray(graph.reachability.topo, dtype=np.int64)] = np.arange(len(graph.nodes))
    steps = [[step_of[u] for u in uses] for uses in graph.use_indices]
    return (np.array([min(s) for s in steps], dtype=np.int64),
            np.array([max(s) for s in steps], dtype=np.int64))


def largest_first_order(graph: Graph, model) -> tuple[int, ...]:
    """Buffer indices by reserved bytes, largest first; ties by first use, then name."""
    first, _ = use_steps(graph, model)
    names = [b.name for b in graph.buffers]
    return tuple(sorted(range(len(names)), key=lambda i: (-graph.reserved[i], first[i], names[i])))


def traceable(graph: Graph, model) -> bool:
    """Whether a step-by-step trace of placing `graph` is affordable."""
    pairs = getattr(model, "conflict_pairs", None)
    return pairs is None or pairs <= TRACE_PAIRS_LIMIT


def plan_order(graph: Graph, model, order, fit: str, capacity: int | None,
               algorithm: str, packer=None, offsets=None) -> Plan:
    """Place `order` with `fit` ("first" or "best"); traced unless the graph is too large.

    Untraced, `offsets` (what `packer.offsets` gave for this order and fit) are used when
    given; `packer` (a `packing.Packer`) is built when needed and not given.
    """
    if traceable(graph, model):
        return place(graph, model, tuple(map(int, order)), fit=fit, capacity=capacity,
                     algorithm=algorithm)
    if offsets is None:
        from .packing import Packer

        packer = packer or Packer(graph, model)
        offsets = packer.offsets(np.asarray(order, dtype=np.int64), FITS[fit])
    return untraced_plan(graph, model, order, offsets, capacity, algorithm)


def untraced_plan(graph: Graph, model, order, offsets, capacity: int | None,
                  algorithm: str) -> Plan:
    """A plan from precomputed offsets (no trace); exceeding `capacity` is a `CapacityError`."""
    reserved = graph.reserved
    buffers = graph.buffers
    if capacity is not None:
        for request, i in enumerate(order):
            at, size = int(offsets[i]), reserved[i]
            if at + size > capacity:
                raise CapacityError(
                    f"capacity exceeded while placing request {request} {buffers[i].name!r} "
                    f"({size:,} bytes): its clear offset is {at:,}, and {at + size:,} > "
                    f"capacity {capacity:,}", request, buffers[i].name, size)
    placements = tuple(Placement(buffers[i].name, int(offsets[i]), buffers[i].bytes, reserved[i])
                       for i in order)
    return Plan(
        placements=placements,
        steps=(),
        slab_bytes=max((p.end for p in placements), default=0),
        no_reuse_bytes=sum(reserved),
        algorithm=algorithm,
        conflict_model=model.name,
        alignment=graph.alignment,
    )


def first_fit(graph, model, order, capacity, budget):
    """Luminal's first fit: request order, lowest clear offset."""
    return plan_order(graph, model, order, "first", capacity, "first-fit")


def largest_first(graph, model, order, capacity, budget):
    """First fit over buffers sorted largest first (ties by first use, then name)."""
    return plan_order(graph, model, largest_first_order(graph, model), "first", capacity,
                      "largest-first")


def best_fit(graph, model, order, capacity, budget):
    """Request order, each buffer in the smallest clear gap that holds it."""
    return plan_order(graph, model, order, "best", capacity, "best-fit")
