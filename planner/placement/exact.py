"""Exact search for interval lifetimes (the serial model) under a fixed capacity, after MiniMalloc.

Any packing can be pushed down until every buffer rests on 0 or on a buffer it overlaps in
time, and then listed by offset: each buffer sits at its *minimum offset*, the top of the
overlapping buffers listed before it. So a packing is a sequence of choices "which unplaced
buffer comes next", and the search branches on them, depth first:

- canonical solutions: the listed offsets never decrease, and at equal offsets buffers come in
  a fixed preorder, so each packing is built one way only;
- cross-section inference: time is cut into sections, one per step where some buffer is last
  used, each holding every buffer live over it (all live at that step); a section's floor (the
  top of what is placed there, at least the lowest minimum offset of what is not) plus the
  bytes still unplaced there must fit the capacity;
- dominance: a buffer whose minimum offset lies at or above the top some other unplaced buffer
  would reach leaves a gap below it that buffer could fill, so it is not chosen now; and when a
  buffer with nothing unplaced overlapping it fails, so does every alternative;
- decomposition: once no unplaced buffer spans a section boundary, the two sides are solved as
  independent subproblems.

Buffers are preordered by one of a few heuristics (widest or largest first); searches run with a
node limit that doubles, in turn per heuristic, until one finishes. A finished search either
gives a packing or proves that none fits the capacity. The kernel polls a stop flag, so another
thread can end a search at its next node.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..model.intervals import distinct
from ..support._numba import njit
from .packing import _interval_lists

SOLVED, INFEASIBLE, ABORTED = 0, 1, 2

# Preorder keys (larger first): lifetime width, area (width x bytes), and the most bytes live
# in any section the buffer spans.
_WIDTH, _AREA, _TOTAL = 0, 1, 2
# MiniMalloc's three preorders, tried in turn.
HEURISTICS = ((_WIDTH, _AREA, _TOTAL), (_TOTAL, _AREA, _WIDTH), (_TOTAL, _WIDTH, _AREA))

# What the search does next (see `_search`).
_NEXT, _FAIL, _DONE, _ENTER, _OPEN = 0, 1, 2, 3, 4
_SEARCH, _SPLIT = 0, 1

# Undo-log entry kinds: which array an entry restores.
_MIN_OFFSET, _FLOOR, _TOTAL_LEFT, _OFFSET, _CUT = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def _undo(to, lg_n, lg_kind, lg_idx, lg_val, min_off, floor, total, offset, cuts):
    """Restore every logged change past position `to`; the new log length."""
    while lg_n > to:
        lg_n -= 1
        kind, i, value = lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n]
        if kind == _MIN_OFFSET:
            min_off[i] = value
        elif kind == _FLOOR:
            floor[i] = value
        elif kind == _TOTAL_LEFT:
            total[i] = value
        elif kind == _OFFSET:
            offset[i] = value
        else:
            cuts[i] = value
    return lg_n


@njit(cache=True, nogil=True)
def _grown(a, needed):
    """`a` with room for at least `needed` entries (doubling, so growth is rare)."""
    if needed <= a.shape[0]:
        return a
    out = np.empty(max(needed, 2 * a.shape[0]), a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _preorder(bufs, keys, codes):
    """`bufs` sorted by keys[:, codes[0]], then codes[1], codes[2] (larger first), then index."""
    out = np.sort(bufs)
    for c in range(codes.shape[0] - 1, -1, -1):  # stable sorts, least significant key first
        key = np.empty(out.shape[0], np.float64)
        for k in range(out.shape[0]):
            key[k] = -keys[out[k], codes[c]]
        out = out[np.argsort(key, kind="mergesort")]
    return out


@njit(cache=True, nogil=True)
def _search(size, sec_lo, sec_hi, n_sec, ov_start, ov, sm_start, sm, width, area, codes,
            capacity, node_limit, log_need, stop):
    """(status, offsets, nodes): SOLVED with a packing no higher than `capacity`, INFEASIBLE
    when none exists, or ABORTED after `node_limit` nodes or once `stop[0]` is set.

    An explicit stack stands for MiniMalloc's recursion: _SEARCH frames choose the next buffer
    of one partition; a _SPLIT frame solves the independent partitions a placement left, one
    after another. Every change to the search state goes to an undo log.
    """
    n = size.shape[0]
    offset = np.full(n, -1, np.int64)
    solution = np.zeros(n, np.int64)
    min_off = np.zeros(n, np.int64)
    floor = np.zeros(n_sec, np.int64)
    total = np.zeros(n_sec, np.int64)
    cuts = np.zeros(n_sec, np.int64)  # cuts[s]: unplaced buffers live in both s and s + 1
    for b in range(n):
        for s in range(sec_lo[b], sec_hi[b] + 1):
            total[s] += size[b]
        for s in range(sec_lo[b], sec_hi[b]):
            cuts[s] += 1
    for s in range(n_sec):
        if total[s] > capacity:
            return INFEASIBLE, solution, 0
    if n == 0:
        return SOLVED, solution, 0
    keys = np.zeros((n, 3), np.float64)
    keys[:, _WIDTH] = width
    keys[:, _AREA] = area

    # The undo log grows before a placement that could overflow it (log_need[b] entries).
    lg_kind = np.empty(1024, np.int64)
    lg_idx = np.empty(1024, np.int64)
    lg_val = np.empty(1024, np.int64)
    lg_n = 0

    # Partitions: a section range and its buffers (part_bufs[start:start+len], by preorder).
    part_slo = np.empty(16, np.int64)
    part_shi = np.empty(16, np.int64)
    part_start = np.empty(16, np.int64)
    part_len = np.empty(16, np.int64)
    part_bufs = np.empty(2 * n, np.int64)
    n_parts = 0
    part_top = 0

    frames = 2 * n + 8
    f_kind = np.zeros(frames, np.int64)
    f_part = np.zeros(frames, np.int64)  # _SPLIT: the first partition it solves
    f_base = np.zeros(frames, np.int64)  # _SEARCH: its ordering's start in the pool
    f_count = np.zeros(frames, np.int64)  # ordering length / partitions to solve
    f_next = np.zeros(frames, np.int64)  # next candidate / partition
    f_cur = np.zeros(frames, np.int64)  # candidate placed now, or -1
    f_log = np.zeros(frames, np.int64)  # log length before the current placement
    f_hat = np.zeros(frames, np.bool_)  # whether the current candidate had unplaced overlaps
    f_saved_parts = np.zeros(frames, np.int64)
    f_saved_top = np.zeros(frames, np.int64)
    depth = 0

    # The candidate orderings of all _SEARCH frames: (minimum offset, preorder position).
    o_off = np.empty(4 * n, np.int64)
    o_pos = np.empty(4 * n, np.int64)
    o_top = 0

    mark = np.zeros(n_sec, np.int64)
    stamp = 0
    affected = np.empty(n_sec, np.int64)
    cut_at = np.empty(n_sec + 1, np.int64)
    scratch = np.empty(n, np.int64)
    scratch_off = np.empty(n, np.int64)
    nodes = 0
    big = np.iinfo(np.int64).max

    # The bottom frame: a split into the partitions of the whole trace, the runs of sections
    # between boundaries no buffer crosses (a counting sort of the buffers by run).
    run_of = np.empty(n_sec, np.int64)
    runs = 0
    for s in range(n_sec):
        run_of[s] = runs
        if cuts[s] == 0:
            runs += 1
    run_lo = np.full(runs, -1, np.int64)
    run_hi = np.zeros(runs, np.int64)
    for s in range(n_sec):
        if run_lo[run_of[s]] < 0:
            run_lo[run_of[s]] = s
        run_hi[run_of[s]] = s
    run_count = np.zeros(runs + 1, np.int64)
    for b in range(n):
        run_count[run_of[sec_lo[b]] + 1] += 1
    run_start = np.cumsum(run_count)
    fill = run_start[:-1].copy()
    for b in range(n):
        r = run_of[sec_lo[b]]
        part_bufs[fill[r]] = b
        fill[r] += 1
    for r in range(runs):
        if run_start[r + 1] > run_start[r]:
            if n_parts == part_slo.shape[0]:
                part_slo = _grown(part_slo, n_parts + 1)
                part_shi = _grown(part_shi, n_parts + 1)
                part_start = _grown(part_start, n_parts + 1)
                part_len = _grown(part_len, n_parts + 1)
            part_slo[n_parts], part_shi[n_parts] = run_lo[r], run_hi[r]
            part_start[n_parts], part_len[n_parts] = run_start[r], run_start[r + 1] - run_start[r]
            n_parts += 1
    part_top = n
    f_kind[0] = _SPLIT
    f_part[0], f_count[0], f_next[0], f_log[0] = 0, n_parts, 0, 0
    depth = 1
    action = _ENTER

    while True:
        if action == _ENTER:
            # Start the next partition of the _SPLIT frame on top: preorder it, open its root.
            d = depth - 1
            p = f_part[d] + f_next[d]
            start, count = part_start[p], part_len[p]
            for k in range(start, start + count):
                b = part_bufs[k]
                most = 0
                for s in range(sec_lo[b], sec_hi[b] + 1):
                    most = max(most, total[s])
                keys[b, _TOTAL] = most
            part_bufs[start:start + count] = _preorder(part_bufs[start:start + count], keys, codes)
            parent_off, parent_pre = 0, 0
        if action == _ENTER or action == _OPEN:
            # Open a _SEARCH frame over partition p's unplaced buffers (none left: p is done).
            start, count = part_start[p], part_len[p]
            lowest_top = big
            left = 0
            for k in range(count):
                b = part_bufs[start + k]
                if offset[b] < 0:
                    left += 1
                    lowest_top = min(lowest_top, min_off[b] + size[b])
            if left == 0:
                action = _DONE
                continue
            if nodes >= node_limit:
                return ABORTED, solution, nodes
            nodes += 1
            if stop[0]:
                return ABORTED, solution, nodes
            # Only candidates that are canonical and not dominated are kept (by offset, then
            # preorder), so a frame stores few.
            m = 0
            for k in range(count):
                b = part_bufs[start + k]
                at = min_off[b]
                if offset[b] < 0 and at < lowest_top and (
                        at > parent_off or (at == parent_off and k >= parent_pre)):
                    scratch[m] = k
                    scratch_off[m] = at
                    m += 1
            by_off = np.argsort(scratch_off[:m], kind="mergesort")
            o_off = _grown(o_off, o_top + m)
            o_pos = _grown(o_pos, o_top + m)
            for i in range(m):
                o_off[o_top + i] = scratch_off[by_off[i]]
                o_pos[o_top + i] = scratch[by_off[i]]
            t = depth
            f_kind[t], f_part[t], f_base[t], f_count[t] = _SEARCH, p, o_top, m
            f_next[t], f_cur[t] = 0, -1
            o_top += m
            depth += 1
            action = _NEXT
            continue

        if action == _NEXT:
            # Undo the top frame's current candidate, if any, and place its next one.
            t = depth - 1
            if f_cur[t] >= 0:
                lg_n = _undo(f_log[t], lg_n, lg_kind, lg_idx, lg_val, min_off, floor, total,
                             offset, cuts)
                f_cur[t] = -1
                if not f_hat[t]:  # nothing unplaced above it: no alternative does better
                    action = _FAIL
                    continue
            p = f_part[t]
            start = part_start[p]
            placed = False
            i = f_next[t]
            while i < f_count[t]:
                at = o_off[f_base[t] + i]
                k = o_pos[f_base[t] + i]
                b = part_bufs[start + k]
                i += 1
                top = at + size[b]
                # Necessary conditions first, without touching the state: b's sections, then the
                # others at the raised floor `at`.
                fits = True
                for s in range(sec_lo[b], sec_hi[b] + 1):
                    if top + total[s] - size[b] > capacity:
                        fits = False
                        break
                if fits:
                    for s in range(part_slo[p], part_shi[p] + 1):
                        if (s < sec_lo[b] or s > sec_hi[b]) and max(floor[s], at) + total[s] > capacity:
                            fits = False
                            break
                if not fits:
                    # Placing b would fail the check: as after a failed placement, a buffer with
                    # nothing unplaced overlapping it ends the alternatives.
                    hat = False
                    for q in range(ov_start[b], ov_start[b + 1]):
                        if offset[ov[q]] < 0:
                            hat = True
                            break
                    if not hat:
                        break
                    continue
                pos0 = lg_n
                if lg_n + log_need[b] > lg_kind.shape[0]:
                    lg_kind = _grown(lg_kind, lg_n + log_need[b])
                    lg_idx = _grown(lg_idx, lg_n + log_need[b])
                    lg_val = _grown(lg_val, lg_n + log_need[b])
                lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _OFFSET, b, -1
                lg_n += 1
                offset[b] = at
                solution[b] = at
                hat = False
                stamp += 1
                n_aff = 0
                for q in range(ov_start[b], ov_start[b + 1]):
                    o = ov[q]
                    if offset[o] >= 0:
                        continue
                    hat = True
                    if min_off[o] < top:
                        lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _MIN_OFFSET, o, min_off[o]
                        lg_n += 1
                        min_off[o] = top
                        for s in range(sec_lo[o], sec_hi[o] + 1):
                            if mark[s] != stamp:
                                mark[s] = stamp
                                affected[n_aff] = s
                                n_aff += 1
                for s in range(sec_lo[b], sec_hi[b] + 1):
                    lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _FLOOR, s, floor[s]
                    lg_n += 1
                    floor[s] = top
                    lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _TOTAL_LEFT, s, total[s]
                    lg_n += 1
                    total[s] -= size[b]
                for a in range(n_aff):
                    # A section's floor is at least the lowest minimum offset of its unplaced.
                    s = affected[a]
                    if floor[s] >= top:
                        continue  # its changed members' minimum offset, top, cannot raise it
                    least = big
                    for q in range(sm_start[s], sm_start[s + 1]):
                        o = sm[q]
                        if offset[o] < 0 and min_off[o] < least:
                            least = min_off[o]
                            if least <= floor[s]:
                                break  # no raise here
                    if least != big and floor[s] < least:
                        lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _FLOOR, s, floor[s]
                        lg_n += 1
                        floor[s] = least
                fits = True
                for s in range(part_slo[p], part_shi[p] + 1):
                    if max(floor[s], at) + total[s] > capacity:
                        fits = False
                        break
                if fits:
                    f_next[t], f_cur[t], f_hat[t], f_log[t] = i, i - 1, hat, pos0
                    placed = True
                    break
                lg_n = _undo(pos0, lg_n, lg_kind, lg_idx, lg_val, min_off, floor, total,
                             offset, cuts)
                if not hat:
                    break
            if not placed:
                action = _FAIL
                continue
            # Decompose: boundaries inside b's span that no unplaced buffer crosses any more.
            n_cut = 0
            for s in range(sec_lo[b], sec_hi[b]):
                lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = _CUT, s, cuts[s]
                lg_n += 1
                cuts[s] -= 1
                if cuts[s] == 0:
                    cut_at[n_cut] = s + 1
                    n_cut += 1
            if n_cut == 0:
                parent_off, parent_pre = at, k
                action = _OPEN  # a child frame over the same partition
                continue
            first_new, saved_top = n_parts, part_top
            lo = part_slo[p]
            for c in range(n_cut + 1):
                hi = cut_at[c] - 1 if c < n_cut else part_shi[p]
                count = 0
                for q in range(part_len[p]):
                    o = part_bufs[start + q]
                    if offset[o] < 0 and sec_lo[o] <= hi and sec_hi[o] >= lo:
                        scratch[count] = o
                        count += 1
                if count > 0:
                    if n_parts == part_slo.shape[0]:
                        part_slo = _grown(part_slo, n_parts + 1)
                        part_shi = _grown(part_shi, n_parts + 1)
                        part_start = _grown(part_start, n_parts + 1)
                        part_len = _grown(part_len, n_parts + 1)
                    part_bufs = _grown(part_bufs, part_top + count)
                    part_slo[n_parts], part_shi[n_parts] = lo, hi
                    part_start[n_parts], part_len[n_parts] = part_top, count
                    part_bufs[part_top:part_top + count] = scratch[:count]
                    part_top += count
                    n_parts += 1
                lo = hi + 1
            if n_parts == first_new:
                action = _DONE
                continue
            d = depth
            f_kind[d], f_part[d], f_count[d], f_next[d] = _SPLIT, first_new, n_parts - first_new, 0
            f_log[d], f_saved_parts[d], f_saved_top[d] = lg_n, first_new, saved_top
            depth += 1
            action = _ENTER
            continue

        if action == _FAIL:
            # The top _SEARCH frame ran out of candidates.
            depth -= 1
            o_top = f_base[depth]
            d = depth - 1
            if f_kind[d] == _SPLIT:
                if d == 0:
                    return INFEASIBLE, solution, nodes
                n_parts, part_top = f_saved_parts[d], f_saved_top[d]
                depth -= 1
            action = _NEXT
            continue

        # _DONE: the partition of the _SEARCH frames on top is fully placed.
        while f_kind[depth - 1] == _SEARCH:
            depth -= 1
            o_top = f_base[depth]
        d = depth - 1
        lg_n = _undo(f_log[d], lg_n, lg_kind, lg_idx, lg_val, min_off, floor, total, offset,
                     cuts)
        f_next[d] += 1
        if f_next[d] < f_count[d]:
            action = _ENTER
            continue
        if d == 0:
            return SOLVED, solution, nodes
        n_parts, part_top = f_saved_parts[d], f_saved_top[d]
        depth -= 1
        action = _DONE


@dataclass(frozen=True)
class Trace:
    """A serial trace prepared for exact search: sections, overlaps and preorder keys."""

    size: np.ndarray
    sec_lo: np.ndarray
    sec_hi: np.ndarray
    n_sections: int
    ov_start: np.ndarray
    ov: np.ndarray
    sm_start: np.ndarray
    sm: np.ndarray
    width: np.ndarray
    area: np.ndarray
    log_need: np.ndarray

    @property
    def heuristics(self) -> int:
        """How many preorders the search takes in turn."""
        return len(HEURISTICS)

    def solve(self, capacity: int, heuristic: int, node_limit: int,
              stop: np.ndarray) -> tuple[int, np.ndarray, int]:
        """One search under `capacity` with preorder `HEURISTICS[heuristic]`: (status,
        offsets, nodes); see `_search`."""
        return _search(self.size, self.sec_lo, self.sec_hi, self.n_sections, self.ov_start,
                       self.ov, self.sm_start, self.sm, self.width, self.area,
                       np.asarray(HEURISTICS[heuristic], dtype=np.int64), int(capacity),
                       int(node_limit), self.log_need, stop)


def prepare(size: np.ndarray, first: np.ndarray, last: np.ndarray,
            times: np.ndarray | None = None) -> Trace:
    """The `Trace` of buffers live over steps [first, last]; `times` (one per step, increasing)
    weigh the steps in the width heuristic (default: every step counts one)."""
    size, first, last = (np.ascontiguousarray(a, dtype=np.int64) for a in (size, first, last))
    n = len(size)
    steps = int(last.max()) + 1 if n else 1
    # A section ends at each step where some buffer is used last: every buffer live anywhere in
    # it is live at that step, so each section is a maximal set of buffers live together.
    ends = distinct(last) if n else np.zeros(1, np.int64)
    n_sections = len(ends)
    sec_lo, sec_hi = np.searchsorted(ends, first), np.searchsorted(ends, last)
    ov_start, ov = _interval_lists(first, last)
    span = sec_hi - sec_lo + 1
    # Section members (CSR): every buffer once per section it spans.
    section_ids = np.concatenate([np.arange(lo, hi + 1) for lo, hi in zip(sec_lo, sec_hi)]) \
        if n else np.zeros(0, np.int64)
    by_section = np.argsort(section_ids, kind="stable")
    sm = np.repeat(np.arange(n, dtype=np.int64), span)[by_section]
    sm_start = np.zeros(n_sections + 1, dtype=np.int64)
    sm_start[1:] = np.cumsum(np.bincount(section_ids, minlength=n_sections))
    t = np.arange(steps, dtype=np.float64) if times is None else np.asarray(times, np.float64)
    width = t[last] - t[first] + 1.0
    # Placing a buffer logs its offset, its neighbours' minimum offsets, its sections' floors,
    # totals and cuts, and the floors of the sections its neighbours span.
    log_need = np.zeros(n, dtype=np.int64)
    if n:
        deg = np.diff(ov_start)
        at = np.minimum(ov_start[:-1], max(len(ov) - 1, 0))  # reduceat needs valid starts
        lo_n = np.minimum.reduceat(sec_lo[ov], at) if len(ov) else sec_lo
        hi_n = np.maximum.reduceat(sec_hi[ov], at) if len(ov) else sec_hi
        log_need = 1 + deg + 3 * span + np.where(deg > 0, hi_n - lo_n + 1, 0)
    return Trace(size, sec_lo, sec_hi, n_sections, ov_start, ov, sm_start, sm, width,
                 width * size, log_need.astype(np.int64))


class Work:
    """Node budget shared by the searches of one plan, and how to stop them early.

    `limit` caps the nodes of all searches together (None: no cap); `should_stop()` is asked
    every few milliseconds while a search runs (a cancel or the deadline) and ends it.
    """

    def __init__(self, limit: int | None, should_stop):
        self.limit = limit
        self.used = 0
        self.should_stop = should_stop
        self.stopped = False

    def left(self) -> int:
        """Nodes left (a large number when uncapped)."""
        return 2**62 if self.limit is None else max(self.limit - self.used, 0)


# Searches this small run on the calling thread: they end within a few milliseconds.
_INLINE_NODES = 512


def _run(trace, capacity: int, heuristic: int, node_limit: int, work: Work):
    """`trace.solve` on a worker thread while this one watches `work.should_stop` (the kernel
    releases the GIL and polls the flag this thread sets)."""
    stop = np.zeros(1, dtype=np.int64)
    if node_limit <= _INLINE_NODES:
        return trace.solve(capacity, heuristic, node_limit, stop)
    result: list = []

    def target():
        try:
            result.append(trace.solve(capacity, heuristic, node_limit, stop))
        except BaseException as exc:  # MemoryError above all: raised again on this thread
            result.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.005)
        if worker.is_alive() and work.should_stop():
            stop[0] = 1
            work.stopped = True
            worker.join()
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def feasible(trace, capacity: int, work: Work, max_nodes: int | None = None,
             first_heuristic: int = 0) -> tuple[int, np.ndarray | None]:
    """(status, offsets or None) of searching a packing within `capacity` (`trace`: a `Trace`,
    or any prepared problem with `heuristics` and `solve`, such as `exact_cliques.CliqueTrace`).

    Round robin over the preorders (from `first_heuristic`, modulo their number) with a node
    limit that starts at twice the buffer count and doubles each round, until one search
    finishes, `max_nodes` (per search) or the work budget is spent, or `work` says stop.
    Deterministic for a given trace, capacity and limits.
    """
    n = len(trace.size)
    limit = max(2 * n, 64)
    cap = work.left() if max_nodes is None else min(max_nodes, work.left())
    turns = [(first_heuristic + k) % trace.heuristics for k in range(trace.heuristics)]
    while True:
        for heuristic in turns:
            budget = min(limit, work.left())
            if not work.stopped and work.should_stop():
                work.stopped = True
            if budget <= 0 or work.stopped:
                return ABORTED, None
            status, offsets, nodes = _run(trace, capacity, heuristic, budget, work)
            work.used += nodes
            if status == SOLVED:
                return SOLVED, offsets
            if status == INFEASIBLE:
                return INFEASIBLE, None
            if work.stopped:
                return ABORTED, None
        if limit >= cap:
            return ABORTED, None
        limit = min(2 * limit, cap)


def warm_up() -> None:
    """Compile (or load from the cache) the kernels on a tiny trace."""
    trace = prepare(np.array([2, 1, 1]), np.array([0, 0, 1]), np.array([1, 0, 1]))
    for heuristic in range(trace.heuristics):
        trace.solve(3, heuristic, 100, np.zeros(1, np.int64))
