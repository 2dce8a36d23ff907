"""`search`: try a portfolio of request orders, then improve the best by local search.

Every candidate is a request order placed by first or best fit, so the winner is replayed by the
traced placer and its plan reads like any greedy plan. The portfolio includes first fit in the
caller's request order, so the search is never worse than first fit. Local search moves requests
earlier or swaps them; under the serial model on small traces it searches packings under a
fixed capacity (`exact`) and skyline packings (`skyline`) instead, and requests the best one in
offset order. It stops early when a plan reaches the lower bound, and otherwise when the budget
(seconds) runs out.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np

from .cancel import NEVER, CancelToken
from .greedy import FITS, plan_order
from .exact import exact_offsets
from .graph import Graph
from .packing import Packer, fits_int64
from .plan import Plan
from .skyline import WORK_LIMIT, skyline_offsets

# A step starts only if this many times the slowest such step so far still ends in time.
_SAFETY = 2.0

# The part of the remaining budget that exact search gets before skyline local search, and the
# part it may spend on its first capacity (see `exact_offsets`).
_EXACT_SHARE = 0.5
_PATIENCE_SHARE = 0.1


def search(graph: Graph, model, order, capacity: int | None, budget: float, *,
           cancel: CancelToken = NEVER) -> Plan:
    """The smallest plan found within `budget` seconds (see the module docstring)."""
    deadline = time.perf_counter() + max(budget, 0.0)
    bound = model.lower_bound(cancel).bytes
    order = np.asarray(order, dtype=np.int64)
    if not fits_int64(graph):
        # Offsets could overflow the kernels' integers: compare the greedy plans directly.
        plans = [plan_order(graph, model, o, fit, capacity, label)
                 for label, o, fit in _portfolio(graph, model, order)]
        return min(plans, key=lambda p: p.slab_bytes)
    packer = Packer(graph, model)
    (height, label, winner, fit, offsets), took = _best_of_portfolio(
        packer, _portfolio(graph, model, order), bound, deadline)
    if height > bound and _skyline_affordable(model):
        for found, how in _serial_packings(packer, model, bound, deadline):
            # Placing a packing in offset order by first fit reproduces (or beats) it.
            in_offset_order = np.lexsort((model.first, found))
            packed = packer.offsets(in_offset_order, FITS["first"])
            if _top(packed, packer) < height:
                height, label, winner, fit, offsets = _top(packed, packer), how, \
                    in_offset_order, "first", packed
    elif height > bound:
        improved = _local_search(packer, winner, FITS[fit], offsets, bound, deadline, took)
        if improved is not None:
            winner, offsets = improved
            label += " + local search"
    return plan_order(graph, model, winner, fit, capacity, f"search ({label}, {fit} fit)",
                      packer, offsets)


def _top(offsets: np.ndarray, packer: Packer) -> int:
    return int((offsets + packer.size).max()) if len(offsets) else 0


def _best_of_portfolio(packer: Packer, portfolio, bound: int, deadline: float):
    """((height, label, order, fit, offsets), seconds it took) of the lowest portfolio entry
    tried in time.

    Entries run on all cores at once (the kernels release the GIL). The first entry always
    runs; a later one starts only if twice the slowest run so far (orders differ in cost; a run
    still going counts with the time it has taken) would still end before the deadline, and
    none starts once a plan reaches the bound.
    """
    entries = enumerate(portfolio)
    workers = os.cpu_count() or 1
    best, best_position = None, 0
    slowest = 0.0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        running = {}  # future -> its entry's position in the portfolio
        began = {}  # future -> when it started

        def start(entry):
            label, candidate, fit = entry
            began = time.perf_counter()
            offsets = packer.offsets(candidate, FITS[fit])
            return time.perf_counter() - began, (_top(offsets, packer), label, candidate, fit,
                                                 offsets)

        def submit(position, entry):
            future = pool.submit(start, entry)
            running[future], began[future] = position, time.perf_counter()

        submit(*next(entries))
        while running:
            while len(running) < workers and (best is None or best[0] > bound):
                now = time.perf_counter()
                # A run still going has taken at least this long: the slowest may be it.
                longest = max([slowest] + [now - began[f] for f in running])
                if now + _SAFETY * longest >= deadline:
                    break
                position, entry = next(entries, (None, None))
                if entry is None:
                    break
                submit(position, entry)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                took, result = future.result()
                slowest = max(slowest, took)
                # Ties go to the earlier entry, so the winner does not depend on thread timing.
                if best is None or (result[0], running[future]) < (best[0], best_position):
                    best, best_position, best_took = result, running[future], took
                del running[future]
    return best, best_took


def _serial_packings(packer: Packer, model, bound: int, deadline: float):
    """(offsets, label) of the packings that exact search under a fixed capacity, then skyline
    local search, find before `deadline`; the latter is skipped once the former hits `bound`."""
    now = time.perf_counter()
    # Exact search solves most hard instances within a few percent quickly, or not at all.
    exact = exact_offsets(packer.size, model.first, model.last, bound,
                          _PATIENCE_SHARE * (deadline - now), now + _EXACT_SHARE * (deadline - now))
    if exact is not None:
        yield exact[0], "exact search under a capacity"
        if exact[1] <= bound:
            return
    skyline, _ = skyline_offsets(packer.size, model.first, model.last, bound, deadline)
    yield skyline, "skyline packing + local search"


def _skyline_affordable(model) -> bool:
    """Whether skyline packings are cheap enough to search with (serial model, small traces)."""
    if model.name != "serial" or not len(model.first):
        return False
    return len(model.first) * (int(model.last.max()) + 1) <= WORK_LIMIT


def _portfolio(graph: Graph, model, order: np.ndarray):
    """(label, order, fit) entries, most often best first; first fit in request order leads."""
    size = np.asarray(graph.reserved, dtype=np.float64)
    first, last = model.use_steps()
    duration = (last - first + 1).astype(np.float64)
    # np.lexsort sorts by the last key first; index breaks remaining ties deterministically.
    index = np.arange(len(size))
    largest = np.lexsort((index, first, -size))
    longest = np.lexsort((index, -size, -duration))
    area = np.lexsort((index, first, -size * duration))
    earliest = np.lexsort((index, -size, first))
    yield "request order", order, "first"
    yield "largest-first", largest, "first"
    yield "longest-lived first", longest, "best"
    yield "largest-first", largest, "best"
    yield "largest area first", area, "first"
    yield "longest-lived first", longest, "first"
    yield "largest area first", area, "best"
    yield "earliest first", earliest, "first"
    yield "earliest first", earliest, "best"
    yield "request order", order, "best"


def _local_search(packer: Packer, order: np.ndarray, fit: int, offsets: np.ndarray,
                  bound: int, deadline: float, took: float) -> tuple[np.ndarray, np.ndarray] | None:
    """A better order than `order` (placed at `offsets`, which took `took` seconds) found before
    `deadline`, with its offsets; or None.

    A move takes a buffer that reaches the top of the slab and requests it earlier, or swaps two
    requests; moves that do not raise the slab are kept, so the search can cross plateaus. No
    move starts that twice the slowest move so far (or placing `order`) says would end past the
    deadline.
    """
    n = len(order)
    size = packer.size
    current, current_height = order, _top(offsets, packer)
    if n < 2 or current_height <= bound:
        return None
    rng = np.random.default_rng(0)
    best = None
    slowest = took
    while True:
        began = time.perf_counter()
        if began + _SAFETY * slowest > deadline:
            return best
        position = np.empty(n, dtype=np.int64)
        position[current] = np.arange(n)
        trial = current.copy()
        if rng.random() < 0.7:
            top = np.flatnonzero(offsets + size == current_height)
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
        slowest = max(slowest, time.perf_counter() - began)
        trial_height = _top(trial_offsets, packer)
        if trial_height <= current_height:
            improved = trial_height < current_height
            current, current_height, offsets = trial, trial_height, trial_offsets
            if improved:
                best = (current, offsets)
                if current_height <= bound:
                    return best
