"""`search`: try a portfolio of request orders, then improve the best by local search.

Under the serial model on small traces the improvement step searches skyline packings instead
(`skyline`), and the best one is requested in offset order.
Every candidate is a request order placed by first or best fit, so the winner is replayed by the
traced placer and its plan reads like any greedy plan. The portfolio includes first fit in the
caller's request order, so the search is never worse than first fit. It stops early when a plan
reaches the lower bound, and otherwise when the budget (seconds) runs out.
"""

from __future__ import annotations

import time

import numpy as np

from .algorithms import FITS, first_uses, plan_order
from .graph import Graph
from .lower_bound import lower_bound
from .packing import Packer, fits_int64
from .plan import Plan
from .skyline import WORK_LIMIT, skyline_offsets

# Local search moves per check of the clock.
_MOVES_PER_CLOCK = 16


def search(graph: Graph, model, order, capacity: int | None, budget: float) -> Plan:
    """The smallest plan found within `budget` seconds (see the module docstring)."""
    deadline = time.perf_counter() + max(budget, 0.0)
    bound = lower_bound(graph, model.name).bytes
    order = np.asarray(order, dtype=np.int64)
    if not fits_int64(graph):
        # Offsets could overflow the kernels' integers: compare the greedy plans directly.
        plans = [plan_order(graph, model, o, fit, capacity, label)
                 for label, o in _portfolio(graph, model, order) for fit in FITS]
        return min(plans, key=lambda p: p.slab_bytes)
    packer = Packer(graph, model)
    best = None
    for label, candidate in _portfolio(graph, model, order):
        for fit in FITS:
            height = packer.height(candidate, FITS[fit])
            if best is None or height < best[0]:
                best = (height, label, candidate, fit)
            if best[0] <= bound or time.perf_counter() > deadline:
                break
        if best[0] <= bound or time.perf_counter() > deadline:
            break
    height, label, winner, fit = best
    if height > bound and _skyline_affordable(model):
        offsets, _ = skyline_offsets(packer.size, model.first, model.last, bound, deadline)
        # Placing a skyline packing in offset order by first fit reproduces (or beats) it.
        in_offset_order = np.lexsort((model.first, offsets))
        packed = packer.height(in_offset_order, FITS["first"])
        if packed < height:
            height, label, winner, fit = packed, "skyline packing + local search", \
                in_offset_order, "first"
    else:
        improved = _local_search(packer, winner, FITS[fit], height, bound, deadline)
        if improved is not None:
            winner = improved
            label += " + local search"
    return plan_order(graph, model, winner, fit, capacity, f"search ({label}, {fit} fit)", packer)


def _skyline_affordable(model) -> bool:
    """Whether skyline packings are cheap enough to search with (serial model, small traces)."""
    if model.name != "serial" or not len(model.first):
        return False
    return len(model.first) * (int(model.last.max()) + 1) <= WORK_LIMIT


def _portfolio(graph: Graph, model, order: np.ndarray):
    """(label, order) pairs, cheapest and most often best first; request order leads."""
    size = np.asarray(graph.reserved, dtype=np.float64)
    first = first_uses(graph, model)
    last = _last_uses(graph, model)
    duration = (last - first + 1).astype(np.float64)
    yield "request order", order
    # np.lexsort sorts by the last key first; index breaks remaining ties deterministically.
    index = np.arange(len(size))
    yield "largest-first", np.lexsort((index, first, -size))
    yield "largest area first", np.lexsort((index, first, -size * duration))
    yield "longest-lived first", np.lexsort((index, -size, -duration))
    yield "earliest first", np.lexsort((index, -size, first))


def _last_uses(graph: Graph, model) -> np.ndarray:
    """Each buffer's last-use step (same step numbering as `first_uses`)."""
    if model.name == "serial":
        return np.asarray(model.last)
    step_of = np.empty(len(graph.nodes), dtype=np.int64)
    step_of[np.asarray(graph.reachability.topo, dtype=np.int64)] = np.arange(len(graph.nodes))
    return np.array([max(step_of[u] for u in uses) for uses in graph.use_indices], dtype=np.int64)


def _local_search(packer: Packer, order: np.ndarray, fit: int, height: int, bound: int,
                  deadline: float) -> np.ndarray | None:
    """A better order than `order` found before `deadline`, or None.

    A move takes a buffer that reaches the top of the slab and requests it earlier, or swaps two
    requests; moves that do not raise the slab are kept, so the search can cross plateaus.
    """
    n = len(order)
    if n < 2 or height <= bound:
        return None
    rng = np.random.default_rng(0)
    size = packer.size
    current = order.copy()
    current_height = height
    offsets = packer.offsets(current, fit)
    best, best_height = None, height
    while time.perf_counter() < deadline:
        for _ in range(_MOVES_PER_CLOCK):
            position = np.empty(n, dtype=np.int64)
            position[current] = np.arange(n)
            top = np.flatnonzero(offsets + size == current_height)
            trial = current.copy()
            if rng.random() < 0.7:
                moved = top[rng.integers(len(top))]
                at = position[moved]
                if at == 0:
                    continue
                to = rng.integers(at)
                trial[to + 1:at + 1] = current[to:at]
                trial[to] = moved
            else:
                a, b = rng.integers(n, size=2)
                trial[a], trial[b] = current[b], current[a]
            trial_offsets = packer.offsets(trial, fit)
            trial_height = int((trial_offsets + size).max())
            if trial_height <= current_height:
                current, current_height, offsets = trial, trial_height, trial_offsets
                if current_height < best_height:
                    best, best_height = current.copy(), current_height
                    if best_height <= bound:
                        return best
    return best
