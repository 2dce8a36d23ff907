"""The greedy placers: first fit in request order, largest first, best fit.

Each turns a request order into a `Plan` with a trace through `traced_placement.place`. Graphs whose
conflicts are too many to list step by step (long serial traces) are placed by the array kernels
of `packing` instead; their plans carry no trace (`steps` is empty).
"""

from __future__ import annotations

import numpy as np

from .cancel import NEVER, CancelToken
from .errors import CapacityError
from .graph import Graph
from .plan import Placement, Plan
from .traced_placement import place

# Past this many conflicting pairs, a trace (each step's conflicts by name) costs too much.
TRACE_PAIRS_LIMIT = 2_000_000

FITS = {"first": 0, "best": 1}


def largest_first_order(graph: Graph, model) -> tuple[int, ...]:
    """Buffer indices by reserved bytes, largest first; ties by first use, then name."""
    first, _ = model.use_steps()
    names = [b.name for b in graph.buffers]
    return tuple(sorted(range(len(names)), key=lambda i: (-graph.reserved[i], first[i], names[i])))


def traceable(graph: Graph, model) -> bool:
    """Whether a step-by-step trace of placing `graph` is affordable."""
    pairs = model.conflict_pairs
    return pairs is None or pairs <= TRACE_PAIRS_LIMIT


def plan_order(graph: Graph, model, order, fit: str, capacity: int | None,
               algorithm: str, packer=None, offsets=None, *, cancel: CancelToken = NEVER) -> Plan:
    """Place `order` with `fit` ("first" or "best"); traced unless the graph is too large.

    Untraced, `offsets` (what `packer.offsets` gave for this order and fit) are used when
    given; `packer` (a `packing.Packer`) is built when needed and not given.
    """
    if not traceable(graph, model):
        from .packing import Packer, fits_int64, interval_offsets

        # The array kernels add sizes in 64-bit integers; where sums could overflow them, the
        # traced placer below (Python integers) is slow but right.
        if fits_int64(graph):
            cancel.check()
            if offsets is None:
                order = np.asarray(order, dtype=np.int64)
                if packer is None and model.intervals is not None:
                    # One pass: the interval kernel, without listing every conflict first.
                    first, last = model.intervals
                    offsets = interval_offsets(order, np.asarray(graph.reserved, np.int64),
                                               first, last, FITS[fit])
                else:
                    offsets = (packer or Packer(graph, model)).offsets(order, FITS[fit])
            return untraced_plan(graph, model, order, offsets, capacity, algorithm)
    return place(graph, model, tuple(map(int, order)), fit=fit, capacity=capacity,
                 algorithm=algorithm, cancel=cancel)


def untraced_plan(graph: Graph, model, order, offsets, capacity: int | None,
                  algorithm: str) -> Plan:
    """A plan from precomputed offsets (no trace); exceeding `capacity` is a `CapacityError`."""
    reserved = graph.reserved
    buffers = graph.buffers
    order = np.asarray(order, dtype=np.int64).tolist()
    offsets = np.asarray(offsets).tolist()  # Python integers: indexing arrays per item is slow
    if capacity is not None:
        for request, i in enumerate(order):
            at, size = offsets[i], reserved[i]
            if at + size > capacity:
                raise CapacityError(
                    f"capacity exceeded while placing request {request} {buffers[i].name!r} "
                    f"({size:,} bytes): its clear offset is {at:,}, and {at + size:,} > "
                    f"capacity {capacity:,}", request, buffers[i].name, size)
    placements = tuple([Placement(buffers[i].name, offsets[i], buffers[i].bytes, reserved[i])
                        for i in order])
    return Plan(
        placements=placements,
        steps=(),
        slab_bytes=max((offsets[i] + reserved[i] for i in order), default=0),
        no_reuse_bytes=sum(reserved),
        algorithm=algorithm,
        conflict_model=model.name,
        alignment=graph.alignment,
    )


def first_fit(graph: Graph, model, order, capacity: int | None, budget: float, *,
              cancel: CancelToken = NEVER) -> Plan:
    """Luminal's first fit: request order, lowest clear offset."""
    return plan_order(graph, model, order, "first", capacity, "first-fit", cancel=cancel)


def largest_first(graph: Graph, model, order, capacity: int | None, budget: float, *,
                  cancel: CancelToken = NEVER) -> Plan:
    """First fit over buffers sorted largest first (ties by first use, then name)."""
    return plan_order(graph, model, largest_first_order(graph, model), "first", capacity,
                      "largest-first", cancel=cancel)


def best_fit(graph: Graph, model, order, capacity: int | None, budget: float, *,
             cancel: CancelToken = NEVER) -> Plan:
    """Request order, each buffer in the smallest clear gap that holds it."""
    return plan_order(graph, model, order, "best", capacity, "best-fit", cancel=cancel)
