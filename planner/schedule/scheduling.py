"""`schedule`: the execution order (a topological order of all nodes) with the least peak of live
bytes, under the serial model's lifetimes (a buffer lives from its first use to its last use).

1. Starting points: the given order (the file's schedule, or the topological order of first use)
   and the list schedulers LPMF, BFS and DFS (`list_schedulers`); the best of them is kept, so
   the result is never worse than any.
2. A lower bound on every order's peak (`schedule_bound`); an order meeting it is optimal.
3. Dynamic programming over downsets with branch and bound (`schedule_exact`), on graphs
   whose downsets stay few enough (narrow DAGs, small graphs); when it finishes, its order is
   optimal (or it proves the incumbent is).
4. Otherwise the same DP as a beam search (the lowest few downsets per layer) for one more
   start, then improvement until the steps or the budget run out: exact reordering of windows
   of consecutive steps around the peak, local moves of single nodes (`schedule_moves`), and
   restarts from LPMF perturbed by seeded noise.

Reproducible like search: the work is counted in steps (one window reordering, or one move), and
the same graph, `seed` and `iterations` give the same order; the budget only cuts work short.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from ..conflicts.serial_model import serial_schedule
from ..model.graph import Graph
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from ..support.gc_pause import paused_collection
from ..support.text import listed
from .list_schedulers import LIST_SCHEDULERS, lpmf
from .schedule_bound import schedule_bound
from .schedule_exact import reorder
from .schedule_moves import improve_by_moves
from .schedule_problem import ScheduleProblem, _positions, _profile, fits_int64

# Whole-graph DP is tried up to this many nodes; it gives up past this many downsets in one
# layer or in all (each kept downset costs a few hundred bytes), or half the budget.
EXACT_NODES = 5_000
EXACT_STATES = 2_000
EXACT_TOTAL_STATES = 400_000
EXACT_SHARE = 0.5
# Otherwise the same DP as a beam search (this many downsets kept per layer, the lowest) gives
# another start, within this share of the budget.
BEAM_STATES = 24
BEAM_SHARE = 0.25
# Window reordering: sizes drawn from this range, downsets per layer kept.
WINDOW_SIZES = (6, 12)
WINDOW_STATES = 300
# Moves tried per batch, and batches per round between window passes.
MOVE_BATCH = 256
# Rounds without a better order before a restart from a perturbed LPMF.
STALL_ROUNDS = 3
RESTART_NOISE = 0.3
# Improvement steps a second of budget buys when none are given, times the nodes (a step
# recomputes a profile over every node): a fixed amount of work, never a measurement, so the
# same graph, seed and budget give the same order on any machine unless the deadline cuts the
# work short (the schedule then says so). About half of what one core did in a second on the
# recorded training steps of tests/data/steps (133 and 166 nodes: 21 and 17 million).
NODE_STEPS_PER_SECOND = 8_000_000


@dataclass(frozen=True)
class Schedule:
    """A chosen execution order and what is known about it.

    `order`: node names in execution order; `peak_bytes` its peak of live reserved bytes;
    `starts`: the peak of each starting point ("given", "LPMF", "BFS", "DFS");
    `lower_bound_bytes`: no order's peak is lower (the bytes live at `bound_node`'s step in every
    order); `proof`: "optimal" or how far the peak is above the bound; `fixed`: why the order
    cannot change (then `order` is the given one); `source`: where the order came from;
    `iterations`: steps of improvement spent (with `seed`, replaying them gives this order);
    `cut_by_budget`: whether the budget stopped work the iterations still allowed (then another
    run may find another order).
    """

    order: tuple[str, ...]
    peak_bytes: int
    given_peak_bytes: int
    starts: dict[str, int]
    lower_bound_bytes: int
    bound_node: str | None
    proof: str
    fixed: str | None
    source: str
    seed: int
    iterations: int
    cut_by_budget: bool = False

    @property
    def optimal(self) -> bool:
        """Whether no order has a lower peak (proved)."""
        return self.proof == "optimal"

    def to_dict(self) -> dict:
        """JSON-ready data: the order, its peak, the given order's and the starts' peaks."""
        return {"schedule": list(self.order), "schedule_peak_bytes": self.peak_bytes,
                "given_peak_bytes": self.given_peak_bytes,
                "schedule_starts": dict(self.starts),
                "schedule_lower_bound_bytes": self.lower_bound_bytes,
                "schedule_proof": self.proof, "schedule_source": self.source,
                "schedule_fixed": self.fixed, "schedule_seed": self.seed,
                "schedule_iterations": self.iterations,
                "schedule_cut_by_budget": self.cut_by_budget}


def fixed_reason(graph: Graph) -> str | None:
    """Why `graph` has only one execution order (its DAG is a chain), or None when it has more."""
    topo, successors = graph.topo, graph.successors
    if all(topo[p + 1] in successors[topo[p]] for p in range(len(topo) - 1)):
        return (f"the schedule cannot change: the DAG of {graph.name!r} is a chain, so it has "
                f"one execution order")
    return None


def with_schedule(graph: Graph, order) -> Graph:
    """`graph` with `order` (node names) as its serial schedule (checked like a file's)."""
    scheduled = dataclasses.replace(graph, schedule=tuple(order))
    serial_schedule(scheduled)  # raises PlanError naming the first problem
    return scheduled


def schedule(graph: Graph, *, seed: int = 0, iterations: int | None = None,
             budget: float = 2.0, cancel: CancelToken = NEVER) -> Schedule:
    """The execution order of `graph` with the least peak of live reserved bytes found.

    Never worse than the given order or LPMF, BFS and DFS; exact ("optimal") on small graphs or
    when the peak meets the lower bound. `budget` is the seconds improvement may spend,
    `iterations` the most steps (default: `default_schedule_iterations`, a fixed number for
    each second of budget); `cancel` stops the work (raising `Cancelled`).
    """
    if not 0 <= budget < float("inf"):
        raise PlanError(f"budget must be a finite number of seconds >= 0, got {budget}")
    if iterations is not None and iterations < 0:
        raise PlanError(f"iterations must be non-negative, got {iterations}")
    names = [node.name for node in graph.nodes]
    given = np.asarray(serial_schedule(graph), dtype=np.int64)
    problem = ScheduleProblem.of(graph)
    given_peak = problem.peak(given) if fits_int64(graph) else _exact_peak(graph, given)
    fixed = fixed_reason(graph)
    if fixed is None and not fits_int64(graph):
        fixed = "the schedule is kept: live bytes pass 2**62, beyond the scheduler's arithmetic"
    if fixed is not None:
        return Schedule(tuple(names[v] for v in given), given_peak, given_peak,
                        {"given": given_peak}, given_peak, None, "optimal" if
                        fixed.startswith("the schedule cannot") else "not searched",
                        fixed, "given", seed, 0)
    deadline = time.perf_counter() + budget
    rank = _positions(given)
    starts = {"given": given}
    for label, scheduler in LIST_SCHEDULERS.items():
        cancel.check()
        starts[label] = scheduler(problem, rank)
    peaks = {label: problem.peak(order) for label, order in starts.items()}
    source = min(peaks, key=lambda label: peaks[label])  # the given order wins ties
    best, best_peak = starts[source].copy(), peaks[source]
    bound = schedule_bound(problem, graph.topo, cancel)
    optimal = best_peak <= bound.bytes
    used = 0
    cut = []  # the phases a deadline stopped before the work they were counted was done
    beam = None
    if not optimal and problem.n <= EXACT_NODES:
        with paused_collection():  # the DP's many small tuples would make the collector rescan
            found = _dp(problem, best, best_peak, time.perf_counter() + EXACT_SHARE * budget,
                        cancel, EXACT_STATES, truncate=False, strict=True)
        if found is None:
            cut.append("the exact search")
        if found is not None and found.order is not None:
            best, best_peak, source = np.asarray(found.order, dtype=np.int64), found.peak, "exact"
        optimal = found is not None and found.complete
    if not optimal:
        with paused_collection():
            found = _dp(problem, best, best_peak, time.perf_counter() + BEAM_SHARE * budget,
                        cancel, BEAM_STATES, truncate=True, strict=False)
        if found is None:
            cut.append("the beam search")
        if found is not None and found.order is not None and found.peak < best_peak:
            beam = np.asarray(found.order, dtype=np.int64)
    if not optimal:
        # Improvement starts from the best list schedule; the beam's order is its first restart
        # (starting from it alone can trap the moves near it).
        steps = iterations if iterations is not None else \
            default_schedule_iterations(problem.n, budget)
        search = _Improvement(problem, seed, steps, deadline, cancel,
                              [] if beam is None else [beam])
        improved, origin = search.run(best)
        used = search.used
        if search.cut:
            cut.append(f"the improvement after {used:,} of {steps:,} steps")
        new_peak = problem.peak(improved)
        if new_peak < best_peak:
            best, best_peak = improved, new_peak
            source = {"start": f"{source}, improved", "restart": "seeded restart, improved",
                      "beam": "beam search", "beam, improved": "beam search, improved"}[origin]
        optimal = best_peak <= bound.bytes
    proof = "optimal" if optimal else \
        f"within {best_peak / bound.bytes - 1:.1%} of the lower bound" if bound.bytes else ""
    cut_short = bool(cut) and not optimal  # an optimal order is the answer however work stopped
    if cut_short:
        proof += f"; the {budget:g} s budget cut the work short: {listed(cut)}"
    return Schedule(tuple(names[v] for v in best), best_peak, given_peak, peaks, bound.bytes,
                    names[bound.node] if bound.node >= 0 else None, proof, None, source, seed,
                    used, cut_short)


def default_schedule_iterations(nodes: int, budget: float) -> int:
    """The improvement steps `schedule` takes on `nodes` nodes in `budget` seconds when none
    are given: `NODE_STEPS_PER_SECOND` for each second, shared out over the nodes."""
    seconds = min(max(budget, 0.0), 1e12)  # past that, the steps are as good as endless
    return max(int(seconds * (NODE_STEPS_PER_SECOND // max(nodes, 1))), 1)


class _OutOfTime(Exception):
    pass


def _dp(problem: ScheduleProblem, best: np.ndarray, best_peak: int, deadline: float,
        cancel: CancelToken, states: int, truncate: bool, strict: bool):
    """The downset DP over the whole graph (exact, or a beam search when `truncate`) within
    `best_peak`, or None when it ran out of time."""
    def check() -> None:
        cancel.check()
        if time.perf_counter() >= deadline:
            raise _OutOfTime

    try:
        return reorder(problem, list(range(problem.n)), *_first_last(problem, best), 0,
                       best_peak, strict, states, check, truncate=truncate,
                       total_limit=None if truncate else EXACT_TOTAL_STATES)
    except _OutOfTime:
        return None


def _first_last(problem: ScheduleProblem, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, first, last = _profile(order, _positions(order), problem.buf_start, problem.buf_use,
                              problem.sizes)
    return first, last


def _exact_peak(graph: Graph, order: np.ndarray) -> int:
    """The peak in Python integers (sizes past int64)."""
    from ..conflicts.live_bytes import live_bytes

    return live_bytes(with_schedule(graph, [graph.nodes[v].name for v in order])).peak


class _Improvement:
    """Window reordering, local moves and restarts under a step limit, deadline and cancel."""

    def __init__(self, problem: ScheduleProblem, seed: int, iterations: int,
                 deadline: float, cancel: CancelToken, restarts: list[np.ndarray]):
        self.problem = problem
        self.restarts = [("beam", order) for order in restarts]
        self.rng = np.random.default_rng(seed)
        self.limit = iterations
        self.deadline = deadline
        self.cancel = cancel
        self.used = 0
        self.cut = False  # whether the deadline stopped steps the limit still allowed

    def over(self) -> bool:
        self.cancel.check()
        if self.used >= self.limit:
            return True
        self.cut = time.perf_counter() >= self.deadline
        return self.cut

    def run(self, start: np.ndarray) -> tuple[np.ndarray, str]:
        """The best order found from `start` and the restarts, and where it came from
        ("start", "beam", "beam, improved", "restart")."""
        best, best_key, best_origin = start.copy(), self._key(start), "start"
        current, origin, stalled = start.copy(), "start", 0
        for label, order in self.restarts:  # a restart that is already better counts as is
            if self._key(order) < best_key:
                best, best_key, best_origin = order.copy(), self._key(order), label
        while not self.over():
            before = self._key(current)
            self._windows(current)
            self._moves(current)
            key = self._key(current)
            if key < best_key:
                best, best_key = current.copy(), key
                best_origin = origin if origin != "beam" else "beam, improved"
            stalled = stalled + 1 if key >= before else 0
            if stalled >= STALL_ROUNDS:
                if self.restarts:
                    origin, current = self.restarts.pop(0)
                    current = current.copy()
                else:
                    noise = np.exp(self.rng.normal(0.0, RESTART_NOISE, self.problem.n))
                    current, origin = lpmf(self.problem, _positions(best), noise), "restart"
                stalled = 0
        return best, best_origin

    def _key(self, order: np.ndarray) -> tuple[int, int, int]:
        curve = self.problem.profile(order)
        peak = int(curve.max())
        return peak, int((curve == peak).sum()), int(curve.sum())

    def _windows(self, order: np.ndarray) -> None:
        """Reorder windows around the peak steps exactly (each one step of work)."""
        n = self.problem.n
        curve, first, last = _profile(order, _positions(order), self.problem.buf_start,
                                      self.problem.buf_use, self.problem.sizes)
        peak_steps = np.flatnonzero(curve == curve.max())
        for step in peak_steps[:8].tolist():
            if self.over():
                return
            self.used += 1
            size = int(self.rng.integers(WINDOW_SIZES[0], WINDOW_SIZES[1] + 1))
            start = min(max(step - int(self.rng.integers(0, size)), 0), max(n - size, 0))
            nodes = order[start:start + size].tolist()
            here = curve[start:start + size]
            found = reorder(self.problem, nodes, first, last, start, int(here.max()), False,
                            WINDOW_STATES)
            if found.order is not None and (found.peak, found.total) < \
                    (int(here.max()), int(here.sum())):
                order[start:start + size] = found.order
                curve, first, last = _profile(order, _positions(order), self.problem.buf_start,
                                              self.problem.buf_use, self.problem.sizes)

    def _moves(self, order: np.ndarray) -> None:
        """One batch of local moves (each one step of work)."""
        count = MOVE_BATCH if self.limit is None else min(MOVE_BATCH, self.limit - self.used)
        if count <= 0:
            return
        self.used += count
        improve_by_moves(self.problem, order, self.rng.random((count, 4)))
