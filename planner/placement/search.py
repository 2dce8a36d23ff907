"""`search`: greedy orders first, then exact search or randomised restarts with local search.

1. A portfolio of greedy request orders (request order, largest first, longest-lived first, ...;
   first and best fit), which includes first fit in the caller's order, so search is never
   worse than first fit.
2. When conflicts are exactly interval overlaps (the serial model, or a DAG with one
   topological order), exact search under fixed capacities (`exact`): at the lower bound, and
   side by side a descent from the best height found towards it. A capacity it proves
   infeasible raises the bound; the plan is "optimal" when its height meets it.
3. Otherwise, on small graphs, the same exact search over any conflict graph
   (`exact_cliques`), and on larger ones randomised restarts (largest first by sizes perturbed
   with log-normal noise) and local search that moves buffers at the top of the slab, or of
   the lower bound's peak antichain, earlier in the request order.

Every candidate ends as a request order placed by first or best fit (an exact packing is
requested in offset order, which first fit reproduces), so the winner is replayed by the traced
placer and its plan reads like any greedy plan.

Reproducible: the work is counted in steps (one packing of a request order, or one node of
exact search), and the same graph, `seed` and `iterations` always give the same plan. Without
`iterations`, the budget buys a fixed number of steps for each of its seconds, scaled to the
graph (`default_iterations`; a constant, never a measurement of the machine), so the same graph,
`seed` and budget give the same plan too. The budget is also the deadline: it, and a cancel,
only cut the work short, and the plan's proof says when the deadline did; nothing depends on
thread timing.

While it runs, each better candidate is offered to the cancel token's partial listener (the
window shows it as the best plan so far); the time the listeners take is not charged to the
budget, so a search someone watches finds what an unwatched one does.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

import numpy as np

from ..model.graph import Graph
from ..model.plan import Plan
from ..support.cancel import NEVER, Cancelled, CancelToken
from . import exact
from .exact_cliques import prepare_cliques
from .greedy import FITS, kernel_plan, plan_order
from .packing import Packer, fits_int64

# Exact search is tried up to this many buffers and conflicting pairs (its overlap lists and
# undo log grow with the pairs); without interval lifetimes, up to this many buffers only.
EXACT_BUFFERS = 50_000
EXACT_PAIRS = 20_000_000
EXACT_CONFLICT_GRAPH_BUFFERS = 48

# Node limit of one search in the descent (a capacity is given up as unknown after the three
# preorders reach it).
_TRY_NODES = 32_768

# Candidates are packed in batches of this many, side by side from this many buffers on. The
# batches are fixed, so results do not depend on the machine's cores.
_BATCH = 2
_PARALLEL_BUFFERS = 1_000

# How often a thread waiting on kernels looks at the cancel token and the clock.
_POLL_SECONDS = 0.005

# Without `iterations`, a search takes a fixed number of steps for each second of its budget,
# scaled to the graph, so the same file and budget give the same plan on a quiet and on a busy
# machine, and ten seconds buy five times the work of two. Per second: packings (each visits
# about every conflicting pair once) up to about this many pair visits, or exact search's nodes
# (each costs about its buffer's conflicts) up to about this many conflicts visited; at most
# this many steps. Set for 2 cores with room to spare: on MiniMalloc's challenging instances a
# 10 s budget buys 141,843 (J) to 1,000,000 (F, H) nodes, all taken within 10 s on 2 cores
# shared with other work, and every instance reaches its best known height (A needs about
# 235,000 nodes and gets 327,868).
_PAIR_VISITS_PER_SECOND = 50_000_000
_NODE_CONFLICTS_PER_SECOND = 2_000_000
_MOST_STEPS_PER_SECOND = 100_000
# The first two batches of the portfolio: request order, the best greedy orders and the peak
# antichain stacked first.
_FEWEST_DEFAULT_STEPS = 4

# Log-normal spreads of the size noise in restarts, used in turn: the smallest mostly reorders
# buffers of equal size, the largest also lets smaller ones jump ahead.
_NOISE = (0.02, 0.1, 0.3)

# The share of local-search moves that take a top buffer (the rest take a peak-antichain one).
_TOP_MOVES = 0.6


class _Work:
    """Steps done so far against the iteration limit, the deadline and the cancel token."""

    def __init__(self, budget: float, iterations: int | None, cancel: CancelToken):
        self.start = time.perf_counter()
        self.deadline = self.start + max(budget, 0.0)
        self.limit = iterations
        self.used = 0
        self.running: tuple[exact.Work, ...] = ()  # exact searches under way, not yet in `used`
        self.cancel = cancel
        self.cut = False  # whether the deadline stopped work the limit still allowed
        self._listened = cancel.listening_seconds  # the token's listeners' time is not search's

    def _clock(self, now: float) -> float:
        """`now` less the time the token's listeners took since search started."""
        return now - (self.cancel.listening_seconds - self._listened)

    def left(self) -> int | None:
        """Steps left under the iteration limit (None: no limit)."""
        return None if self.limit is None else max(self.limit - self.used, 0)

    def allowed(self, items: list, one_at_least: bool = False) -> list:
        """The first of `items` the iteration limit still allows (one at least, if asked)."""
        left = self.left()
        if left is None:
            return items
        return items[:max(left, 1 if one_at_least else 0)]

    def over(self) -> bool:
        """Whether to stop: the limit or deadline reached (raises `Cancelled` when cancelled)."""
        now = time.perf_counter()
        self._report(now)
        if self.limit is not None and self.used >= self.limit:
            return True
        return self._past_deadline(now)

    def _past_deadline(self, now: float) -> bool:
        """Whether the deadline has passed; once it has, the work was cut short."""
        if self._clock(now) >= self.deadline:
            self.cut = True
        return self.cut

    def interrupted(self) -> bool:
        """Whether a running kernel should stop now: cancelled, or past the deadline (asked by
        the thread that watches it)."""
        now = time.perf_counter()
        try:
            self._report(now)
        except Cancelled:
            return True
        return self._past_deadline(now)

    def _report(self, now: float) -> None:
        """Tell the token how far search is: its steps against the limit, else its time against
        the budget (raises `Cancelled` when cancelled)."""
        if self.limit:
            done = (self.used + sum(running.used for running in self.running)) / self.limit
        else:
            done = (self._clock(now) - self.start) / max(self.deadline - self.start, 1e-9)
        self.cancel.report("search", min(done, 1.0))


@dataclasses.dataclass
class _Best:
    """The lowest candidate so far: its height, label, request order, fit and offsets;
    `announce` hears of every improvement (see `_announcer`)."""

    height: int
    label: str
    order: np.ndarray
    fit: str
    offsets: np.ndarray
    announce: Callable[["_Best"], None] | None = None

    def offer(self, height: int, label: str, order: np.ndarray, fit: str,
              offsets: np.ndarray) -> bool:
        """Keep the candidate if it is strictly lower; whether it was."""
        if height >= self.height:
            return False
        self.height, self.label, self.order, self.fit, self.offsets = \
            height, label, order, fit, offsets
        if self.announce is not None:
            self.announce(self)
        return True


def search(graph: Graph, model, order, capacity: int | None, budget: float, *,
           cancel: CancelToken = NEVER, seed: int = 0, iterations: int | None = None) -> Plan:
    """The smallest plan found within `budget` seconds and `iterations` steps (without them,
    the steps the budget buys: `default_iterations`; see the module docstring); `seed` picks
    the random choices. The plan records seed, steps and proof."""
    warm_up()  # compiling is a one-time cost: it must not eat the budget and change the plan
    if iterations is None:
        iterations = default_iterations(graph, model, budget)
    work = _Work(budget, iterations, cancel)
    bound = model.lower_bound(cancel)
    order = np.asarray(order, dtype=np.int64)
    if not fits_int64(graph):
        # Offsets could overflow the kernels' integers: compare the greedy plans directly.
        plans = [plan_order(graph, model, o, fit, capacity, f"search ({label}, {fit} fit)",
                            cancel=cancel) for label, o, fit in _portfolio(graph, model, order)]
        best_plan = min(plans, key=lambda p: p.slab_bytes)  # ties: the earlier entry
        return _stamped(best_plan, seed, len(plans), bound.bytes, bound.bytes)
    packer = Packer(graph, model)
    with ThreadPoolExecutor(max_workers=min(_BATCH, os.cpu_count() or 1)) as pool:
        packings = _Packings(packer, pool if packer.n >= _PARALLEL_BUFFERS else None, work)
        entries = list(_portfolio(graph, model, order, _witness(graph, bound)))
        best = None
        # First fit in request order always ends unless cancelled: search never loses to it.
        batches = [entries[at:at + _BATCH] for at in range(0, len(entries), _BATCH)]
        for k, batch in enumerate(batches):
            batch = work.allowed(batch, k == 0)
            results = packings.run(batch, sure=1 if k == 0 else 0)
            work.cancel.check()
            for (label, candidate, fit), offsets in zip(batch, results):
                if offsets is None:
                    continue  # stopped by the deadline
                if best is None:
                    best = _Best(_top(offsets, packer), label, candidate, fit, offsets,
                                 _announcer(graph, model, capacity, seed, work))
                    if best.announce is not None:
                        best.announce(best)
                else:
                    best.offer(_top(offsets, packer), label, candidate, fit, offsets)
            work.used += len(batch)
            if best.height <= bound.bytes or work.over():
                break
        proven = bound.bytes  # no plan is lower (raised by capacities exact search rules out)
        if best.height > proven and not work.over():
            first_last = model.intervals
            if first_last is not None and _exact_affordable(model, packer.n):
                first, last = first_last
                trace = exact.prepare(packer.size, first, last,
                                      _step_times(graph, model, first, last))
                proven = _exact(packer, trace, first, best, proven, work, seed)
            elif packer.n <= EXACT_CONFLICT_GRAPH_BUFFERS and packer.conflict_lists is not None:
                trace = prepare_cliques(packer.size, *packer.conflict_lists,
                                        _witness(graph, bound))
                proven = _exact(packer, trace, model.use_steps()[0], best, proven, work, seed)
            else:
                _restarts(packings, best, bound.bytes, _witness(graph, bound), work, seed)
    plan = plan_order(graph, model, best.order, best.fit, capacity,
                      f"search ({best.label}, {best.fit} fit)", packer, best.offsets,
                      cancel=cancel)
    return _stamped(plan, seed, work.used, bound.bytes, proven, budget if work.cut else None)


def default_iterations(graph: Graph, model, budget: float = 2.0) -> int:
    """The steps a search of `graph` under conflict model `model` takes in `budget` seconds
    when none are given: a fixed amount of work for each second, scaled to the graph's conflicts
    and to what search will run (never to the machine's speed)."""
    seconds = min(max(budget, 0.0), 1e12)  # past that, the steps are as good as endless
    n = len(graph.buffers)
    pairs = model.conflict_pairs
    if pairs is None:  # unknown: a bitset packing reads up to every pair of buffers
        pairs = n * (n - 1) // 2
    exact_runs = (_exact_affordable(model, n) if model.intervals is not None
                  else n <= EXACT_CONFLICT_GRAPH_BUFFERS)
    if exact_runs:
        steps = int(seconds * _NODE_CONFLICTS_PER_SECOND) // (1 + 2 * pairs // max(n, 1))
    else:
        steps = int(seconds * _PAIR_VISITS_PER_SECOND) // max(pairs + n, 1)
    most = int(seconds * _MOST_STEPS_PER_SECOND)
    return max(min(steps, most), _FEWEST_DEFAULT_STEPS)


def _stamped(plan: Plan, seed: int, steps: int, bound: int, proven: int,
             cut_by: float | None = None) -> Plan:
    """`plan` with its seed, the steps spent and what is known of its optimality; `cut_by`,
    the budget when it stopped work the iterations still allowed."""
    if plan.slab_bytes <= proven:
        proof = "optimal"
    else:
        proof = f"best found, {plan.slab_bytes / bound - 1:.2%} over the bound"
        if proven > bound:
            proof += f" ({plan.slab_bytes / proven - 1:.2%} over what exact search proved)"
        if cut_by is not None:
            proof += f"; the {cut_by:g} s budget cut the work short after {steps:,} steps"
    return dataclasses.replace(plan, seed=seed, iterations=steps, proof=proof)


def _announcer(graph: Graph, model, capacity: int | None, seed: int, work: _Work
               ) -> Callable[[_Best], None] | None:
    """What offers each better candidate to the token's partial listener, as a builder of its
    plan marked provisional; None when no one listens. Candidates past `capacity` are not
    offered (the final plan would be refused the same way)."""
    token = work.cancel
    if not token.wants_partial:
        return None

    def announce(best: _Best) -> None:
        if capacity is not None and best.height > capacity:
            return
        # The arrays are never changed in place, so the builder can run later, on any thread.
        order, offsets, fit, label, steps = best.order, best.offsets, best.fit, best.label, work.used

        def build() -> Plan:
            plan = kernel_plan(graph, model, order, offsets, fit, None,
                               f"search ({label}, {fit} fit)")
            return dataclasses.replace(plan, seed=seed, iterations=steps,
                                       proof=f"best so far after {steps:,} steps; search continues")

        token.offer(build)

    return announce


def _top(offsets: np.ndarray, packer: Packer) -> int:
    return int((offsets + packer.size).max()) if len(offsets) else 0


def _witness(graph: Graph, bound) -> np.ndarray:
    """The lower bound's witness (buffers all live at once) as buffer indices."""
    index = graph.buffer_index
    return np.array([index[name] for name in bound.witness], dtype=np.int64)


def _exact_affordable(model, n: int) -> bool:
    pairs = model.conflict_pairs
    return n <= EXACT_BUFFERS and (pairs is None or pairs <= EXACT_PAIRS)


def _exact(packer: Packer, trace, first: np.ndarray, best: _Best, proven: int, work: _Work,
           seed: int) -> int:
    """Improve `best` by exact search over `trace` (an `exact.Trace` or a
    `exact_cliques.CliqueTrace`); the highest bound the searches proved (no packing is lower).
    `first` (each buffer's first use) breaks ties when a packing is requested in offset order.

    Two searches run side by side, each deterministic on its own: a probe at the lower bound
    (where most traces have their optimum) and a descent from the best height towards it. The
    probe's packing wins when it finds one; the descent stops then, as its result is unused.
    With an iteration limit each gets half of what is left.
    """
    left = work.left()
    if left is not None:
        left = max(left - 1, 0)  # one step stays for replaying the packing found
    probe: list = []
    probe_work = exact.Work(None if left is None else left // 2, work.interrupted)
    descent_work = exact.Work(None if left is None else left - left // 2,
                              lambda: work.interrupted() or _solved(probe))
    work.running = (probe_work, descent_work)

    def run_probe():
        try:
            probe.append(exact.feasible(trace, proven, probe_work, first_heuristic=seed))
        except BaseException as exc:  # raised again on the calling thread
            probe.append(exc)

    prober = threading.Thread(target=run_probe, daemon=True)
    prober.start()
    found, descent_proven = _descend(trace, proven + 1, best.height - 1, descent_work, seed)
    prober.join()
    work.used += probe_work.used + descent_work.used
    work.running = ()
    work.cancel.check()
    if isinstance(probe[0], BaseException):
        raise probe[0]
    status, offsets = probe[0]
    if status == exact.SOLVED:
        found = offsets
    else:
        # A capacity either search ruled out bounds every packing from below.
        proven = max(proven + (status == exact.INFEASIBLE), descent_proven)
    if found is not None:
        # First fit in offset order reproduces the packing (or lowers it).
        in_offset_order = np.lexsort((first, found))
        packed = packer.offsets(in_offset_order, FITS["first"])
        work.used += 1
        best.offer(_top(packed, packer), "exact search under a capacity", in_offset_order,
                   "first", packed)
    return proven


def _solved(probe: list) -> bool:
    return bool(probe) and isinstance(probe[0], tuple) and probe[0][0] == exact.SOLVED


def _descend(trace, lo: int, hi: int, work: exact.Work, seed: int
             ) -> tuple[np.ndarray | None, int]:
    """(the lowest packing found, or None; the bound proved) by searches under capacities
    from `hi` down towards `lo`: each aims a quarter of the way down, as successes are cheap
    and capacities below the optimum cost a search's whole node limit."""
    size = trace.size
    found = None
    proven = lo - 1
    while lo <= hi and work.left() > 0 and not work.stopped:
        capacity = hi - (hi - lo) // 4
        status, offsets = exact.feasible(trace, capacity, work, _TRY_NODES, first_heuristic=seed)
        if status == exact.SOLVED:
            found = offsets
            hi = int((offsets + size).max()) - 1
        else:
            if status == exact.INFEASIBLE:
                proven = max(proven, capacity + 1)
            lo = capacity + 1
    return found, proven


def _step_times(graph: Graph, model, first: np.ndarray, last: np.ndarray) -> np.ndarray | None:
    """Per step of the schedule, its time when every scheduled node carries one (a MiniMalloc
    file keeps them), so lifetime widths are measured in the file's time; else None."""
    schedule = getattr(model, "schedule", None)
    steps = int(last.max()) + 1 if len(last) else 0
    if schedule is None or len(schedule) != steps:
        return None
    times = [graph.nodes[i].attrs.get("time") for i in schedule]
    if not all(isinstance(t, int) for t in times):
        return None
    return np.asarray(times, dtype=np.int64)


def _restarts(packings: "_Packings", best: _Best, bound: int, witness: np.ndarray,
              work: _Work, seed: int) -> None:
    """Improve `best` until the bound, the limit or the deadline. Each round packs a perturbed
    largest-first restart and a local-search move from the current order side by side; the
    current order then walks to the lower of them, across plateaus of equal height."""
    packer = packings.packer
    rng = np.random.default_rng(seed)
    size = packer.size.astype(np.float64)
    n = packer.n
    current, current_height, current_offsets = best.order, best.height, best.offsets
    current_fit = best.fit
    round_ = 0
    while best.height > bound and n > 1 and not work.over():
        noise = _NOISE[round_ % len(_NOISE)]
        key = size * np.exp(noise * rng.standard_normal(n))
        trials = [("perturbed largest-first", np.argsort(-key, kind="stable"),
                   "best" if round_ % 4 == 3 else "first"),
                  ("local search", _moved(current, current_offsets, current_height, packer,
                                          witness, rng), current_fit)]
        trials = work.allowed(trials)
        round_ += 1
        results = packings.run(trials)
        if any(offsets is None for offsets in results):
            work.cancel.check()
            break
        for (label, trial, fit), offsets in zip(trials, results):
            height = _top(offsets, packer)
            best.offer(height, label, trial, fit, offsets)
            if height <= current_height:
                current, current_height, current_offsets, current_fit = \
                    trial, height, offsets, fit
        work.used += len(trials)


class _Packings:
    """Offsets of a batch of (label, order, fit) candidates, in the batch's order: on a thread
    pool for large graphs (the kernels release the GIL) while this thread watches for a cancel
    or the deadline, else one after another (each then takes well under a millisecond). Either
    way the results are the same."""

    def __init__(self, packer: Packer, pool: ThreadPoolExecutor | None, work: _Work):
        self.packer = packer
        self.pool = pool
        self.work = work

    def run(self, batch, sure: int = 0) -> list[np.ndarray | None]:
        """Each candidate's offsets, or None where a cancel or the deadline stopped it first
        (only a cancel stops the first `sure` candidates)."""
        stops = np.zeros((len(batch), 1), dtype=np.int64)

        def pack(k):
            return self.packer.offsets(batch[k][1], FITS[batch[k][2]], stops[k])

        if self.pool is None:
            return [pack(k) for k in range(len(batch))]
        pending = [self.pool.submit(pack, k) for k in range(len(batch))]
        while wait(pending, timeout=_POLL_SECONDS).not_done:
            if self.work.cancel.cancelled:
                stops[:] = 1
            elif self.work.interrupted():
                stops[sure:] = 1
        return [None if stops[k, 0] else future.result() for k, future in enumerate(pending)]


def _moved(order: np.ndarray, offsets: np.ndarray, height: int, packer: Packer,
           witness: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`order` with one buffer requested earlier: one reaching the top of the slab, or one of
    the peak antichain (they must all stack, so early requests keep them low)."""
    n = len(order)
    if len(witness) and rng.random() >= _TOP_MOVES:
        moved = witness[rng.integers(len(witness))]
    else:
        top = np.flatnonzero(offsets + packer.size == height)
        moved = top[rng.integers(len(top))]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    at = int(position[moved])
    trial = order.copy()
    if at == 0:
        a, b = rng.integers(n, size=2)
        trial[a], trial[b] = order[b], order[a]
        return trial
    to = int(rng.integers(at))
    trial[to + 1:at + 1] = order[to:at]
    trial[to] = moved
    return trial


def _portfolio(graph: Graph, model, order: np.ndarray, witness: np.ndarray | None = None):
    """(label, order, fit) entries, most often best first; first fit in request order leads,
    longest-lived first by best fit (the best greedy order on long real traces) follows."""
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
    yield "longest-lived first", longest, "best"
    yield "largest-first", largest, "first"
    if witness is not None and len(witness):
        # The peak antichain stacked first reaches the bound for its own bytes.
        in_witness = np.zeros(len(size), dtype=bool)
        in_witness[witness] = True
        yield "peak antichain first", np.lexsort((index, first, -size, ~in_witness)), "first"
    yield "largest-first", largest, "best"
    yield "largest area first", area, "first"
    yield "longest-lived first", longest, "first"
    yield "largest area first", area, "best"
    yield "earliest first", earliest, "first"
    yield "earliest first", earliest, "best"
    yield "request order", order, "best"


@functools.cache
def warm_up() -> None:
    """Compile (or load from numba's cache) every search kernel on tiny inputs, once per
    process, so the first real search does not stall on compilation."""
    from . import exact_cliques
    from .packing import warm_up as warm_packing

    warm_packing()
    exact.warm_up()
    exact_cliques.warm_up()
