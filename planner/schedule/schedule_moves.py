"""Local search over execution orders: move one node to another place between its last
predecessor and its first successor, keep the move when the order is no worse.

Orders compare by (peak, how many steps reach the peak, sum of live bytes over all steps), so
moves that flatten a peak shared by several steps, or shrink the curve below it, are kept and
lead on to moves that lower the peak. Moved nodes are drawn near the peak: a node run at a peak
step or close to one, or a use of a buffer live at the first peak step. The random numbers come
in from the caller, so a seed gives the same moves on any machine.
"""

from __future__ import annotations

import numpy as np

from ..support._numba import njit
from .schedule_problem import ScheduleProblem, _profile


def improve_by_moves(problem: ScheduleProblem, order: np.ndarray, rand: np.ndarray) -> int:
    """Try one move per row of `rand` (uniform numbers in [0, 1), four columns) on `order`, in
    place; how many moves were kept."""
    pos = np.empty(problem.n, dtype=np.int64)
    pos[order] = np.arange(problem.n)
    return _moves(order, pos, problem.pred_start, problem.pred, problem.succ_start,
                  problem.succ, problem.buf_start, problem.buf_use, problem.sizes, rand)


@njit(cache=True, nogil=True)
def _score(curve):
    peak = 0
    count = 0
    total = 0
    for t in range(len(curve)):
        c = curve[t]
        total += c
        if c > peak:
            peak = c
            count = 1
        elif c == peak:
            count += 1
    return peak, count, total


@njit(cache=True, nogil=True)
def _shift(order, pos, src, dst):
    """Move the node at step `src` to step `dst`, shifting the ones between by one."""
    v = order[src]
    if src < dst:
        for t in range(src, dst):
            order[t] = order[t + 1]
            pos[order[t]] = t
    else:
        for t in range(src, dst, -1):
            order[t] = order[t - 1]
            pos[order[t]] = t
    order[dst] = v
    pos[v] = dst


@njit(cache=True, nogil=True)
def _moves(order, pos, pred_start, pred, succ_start, succ, buf_start, buf_use, sizes, rand):
    n = len(order)
    if n < 2:
        return 0
    curve, first, last = _profile(order, pos, buf_start, buf_use, sizes)
    peak, count, total = _score(curve)
    kept = 0
    for m in range(rand.shape[0]):
        pick = rand[m, 0]
        if pick < 0.45:
            # A node at one of the peak steps, or up to three steps away.
            target = int(rand[m, 1] * count)
            step = 0
            for t in range(n):
                if curve[t] == peak:
                    if target == 0:
                        step = t
                        break
                    target -= 1
            step += int(rand[m, 2] * 7.0) - 3
            step = min(max(step, 0), n - 1)
        elif pick < 0.85:
            # A use of a buffer live at the first peak step.
            top = 0
            for t in range(n):
                if curve[t] == peak:
                    top = t
                    break
            live = 0
            for b in range(len(sizes)):
                if first[b] <= top <= last[b]:
                    live += 1
            target = int(rand[m, 1] * live)
            chosen = 0
            for b in range(len(sizes)):
                if first[b] <= top <= last[b]:
                    if target == 0:
                        chosen = b
                        break
                    target -= 1
            uses = buf_start[chosen + 1] - buf_start[chosen]
            step = pos[buf_use[buf_start[chosen] + min(int(rand[m, 2] * uses), uses - 1)]]
        else:
            step = min(int(rand[m, 1] * n), n - 1)
        v = order[step]
        lo = 0
        for k in range(pred_start[v], pred_start[v + 1]):
            lo = max(lo, pos[pred[k]] + 1)
        hi = n - 1
        for k in range(succ_start[v], succ_start[v + 1]):
            hi = min(hi, pos[succ[k]] - 1)
        if hi <= lo:
            continue
        dst = lo + min(int(rand[m, 3] * (hi - lo + 1)), hi - lo)
        if dst == step:
            continue
        _shift(order, pos, step, dst)
        new_curve, new_first, new_last = _profile(order, pos, buf_start, buf_use, sizes)
        p, c, s = _score(new_curve)
        if p < peak or (p == peak and (c < count or (c == count and s <= total))):
            curve, first, last = new_curve, new_first, new_last
            peak, count, total = p, c, s
            kept += 1
        else:
            _shift(order, pos, dst, step)
    return kept
