"""The greedy placers: first fit in request order, largest first, best fit.

Each turns a request order into a `Plan`: offsets from the array kernels of `dense_kernels`
(through `packing.Packer`), and a `lazy_trace.PlacementTrace` that derives a step of the trace
only when something (the window's replay) asks for it. Graphs whose sizes could overflow the
kernels' 64-bit sums are placed by `traced_placement.place` (Python integers) instead.
"""

from __future__ import annotations

import numpy as np

from ..model.graph import Graph
from ..model.plan import Placements, Plan
from ..support.cancel import NEVER, CancelToken
from ..support.errors import CapacityError
from .lazy_trace import PlacementTrace
from .traced_placement import place

FITS = {"first": 0, "best": 1}


def largest_first_order(graph: Graph, model) -> tuple[int, ...]:
    """Buffer indices by reserved bytes, largest first; ties by first use, then name."""
    first, _ = model.use_steps()
    names = graph.buffer_names
    return tuple(sorted(range(len(names)), key=lambda i: (-graph.reserved[i], first[i], names[i])))


def plan_order(graph: Graph, model, order, fit: str, capacity: int | None,
               algorithm: str, packer=None, offsets=None, *, cancel: CancelToken = NEVER) -> Plan:
    """Place `order` with `fit` ("first" or "best").

    `offsets` (what `packer.offsets` gave for this order and fit) are used when given;
    `packer` (a `packing.Packer`) is built when needed and not given.
    """
    from .packing import Packer, fits_int64

    # The array kernels add sizes in 64-bit integers; where sums could overflow them, the
    # traced placer (Python integers) is slow but right.
    if not fits_int64(graph):
        return place(graph, model, tuple(map(int, order)), fit=fit, capacity=capacity,
                     algorithm=algorithm, cancel=cancel)
    order = np.asarray(order, dtype=np.int64)
    if offsets is None:
        model.prepare(cancel)
        offsets = (packer or Packer(graph, model, cancel)).offsets(order, FITS[fit],
                                                                   cancel=cancel)
    return kernel_plan(graph, model, order, offsets, fit, capacity, algorithm)


def kernel_plan(graph: Graph, model, order, offsets, fit: str, capacity: int | None,
                algorithm: str) -> Plan:
    """A plan from precomputed offsets, its trace derived on demand; exceeding `capacity` is a
    `CapacityError` naming the first request past it (earlier requests never depend on it)."""
    reserved = graph.reserved
    names, sizes = graph.buffer_names, graph.buffer_bytes
    order = np.asarray(order, dtype=np.int64)
    order_list = order.tolist()
    offsets = np.asarray(offsets, dtype=np.int64)
    ends = offsets[order] + np.asarray(reserved, dtype=np.int64)[order]
    if capacity is not None:
        past = np.flatnonzero(ends > capacity)
        if len(past):
            request = int(past[0])
            i = order_list[request]
            at, size = int(offsets[i]), reserved[i]
            raise CapacityError(
                f"capacity exceeded while placing request {request} {names[i]!r} "
                f"({size:,} bytes): lowest clear offset is {at:,}, and {at + size:,} > "
                f"capacity {capacity:,}", request, names[i], size)
    # Columns, not objects: a plan written as JSON never needs a `Placement`.
    placements = Placements([names[i] for i in order_list], offsets[order].tolist(),
                            [sizes[i] for i in order_list], [reserved[i] for i in order_list])
    return Plan(
        placements=placements,
        steps=PlacementTrace(graph, model, order, offsets, fit),
        slab_bytes=int(ends.max()) if len(order_list) else 0,
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


# The greedy placers by the name their plans carry.
GREEDY = {"first-fit": first_fit, "largest-first": largest_first, "best-fit": best_fit}
