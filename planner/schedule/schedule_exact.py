"""Exact execution orders by dynamic programming over downsets (Serenity, MLSys 2020), with
branch and bound: over a whole small graph, or over a window of consecutive steps of a large one.

A downset is a set of nodes closed under predecessors: the nodes run so far. The bytes live at
the step that runs node v after downset S depend on S and v alone (a buffer is live when one of
its uses is in S + v and one is outside S), so the least peak over the orders of S is a function
of S, and the DP keeps, per downset, the order reaching it with the least (peak, sum of step
bytes). The peak part is exact; the sum only breaks ties. States whose peak passes `bound` are
dropped (branch and bound); when every state is dropped, no order stays within the bound.

Reordering a window of steps [i, i + w) keeps every other step's live bytes: those depend only
on the set of nodes run before them, which no reordering inside the window changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .schedule_problem import ScheduleProblem

# Downsets expanded between two calls of `check` (a few milliseconds of work).
CHECK_EVERY = 256


@dataclass(frozen=True)
class Reordering:
    """What one DP found: `order` (node indices, None when no order stays within the bound) and
    its peak and step sum; `complete` is False when the state limit cut the search short."""

    order: list[int] | None
    peak: int
    total: int
    complete: bool


def reorder(problem: ScheduleProblem, nodes: list[int], first: np.ndarray, last: np.ndarray,
            start: int, bound: int, strict: bool, state_limit: int,
            check: Callable[[], None] = lambda: None, truncate: bool = True,
            total_limit: int | None = None) -> Reordering:
    """The best order of `nodes`, the steps `start`.. of an order whose buffers are first and last
    used at steps `first` and `last`, keeping peaks <= `bound` (< `bound` when `strict`).

    At most `state_limit` downsets are kept per layer: past that the layer is cut to the most
    promising ones when `truncate` (a beam search, no longer a proof), or the search stops with
    no order; so it does past `total_limit` downsets in all. `check` is called once per layer
    and every `CHECK_EVERY` downsets inside one (it may raise to cancel).
    """
    w = len(nodes)
    local = {v: k for k, v in enumerate(nodes)}
    end = start + w
    sizes = problem.sizes
    # Bytes live between step start - 1 and step start: started before, not finished before.
    live_before = (first < start) & (last >= start)
    resident0 = int(sizes[live_before].sum())
    pred_mask = []
    succ_local = []
    touches = []  # per local node: (use mask, started before the window, used after it, bytes)
    masks: dict[int, int] = {}
    for v in nodes:
        bits = 0
        for p in problem.preds(v).tolist():
            if p in local:
                bits |= 1 << local[p]
        pred_mask.append(bits)
        succ_local.append([local[s] for s in problem.succs(v).tolist() if s in local])
        mine = []
        for b in problem.buffers_of(v).tolist():
            if b not in masks:
                m = 0
                for u in problem.buf_use[problem.buf_start[b]:problem.buf_start[b + 1]].tolist():
                    if u in local:
                        m |= 1 << local[u]
                masks[b] = m
            mine.append((masks[b], bool(first[b] < start), bool(last[b] >= end), int(sizes[b])))
        touches.append(mine)
    limit = bound - 1 if strict else bound
    ready0 = sum(1 << k for k in range(w) if pred_mask[k] == 0)
    # Per downset: (peak, total, resident bytes after it, ready nodes, previous downset, node).
    layer: dict[int, tuple] = {0: (0, 0, resident0, ready0, -1, -1)}
    history = []
    complete = True
    kept = 1
    for _ in range(w):
        check()
        following: dict[int, tuple] = {}
        for count, (done, (peak, total, resident, ready, _, _)) in enumerate(layer.items()):
            if count % CHECK_EVERY == CHECK_EVERY - 1:
                check()  # one layer can hold millions of downsets: the deadline is met inside
            if not truncate and len(following) > state_limit:
                return Reordering(None, 0, 0, False)  # past the limit this layer is refused
            waiting = ready
            while waiting:
                low = waiting & -waiting
                waiting ^= low
                k = low.bit_length() - 1
                step = resident
                freed = 0
                after = done | low
                for mask, before, later, size in touches[k]:
                    if not before and not mask & done:
                        step += size
                    if not later and not mask & ~after:
                        freed += size
                if step > limit:
                    continue
                value = (max(peak, step), total + step)
                known = following.get(after)
                if known is None or value < known[:2]:
                    if known is not None:
                        now_ready = known[3]
                    else:
                        now_ready = ready ^ low
                        for s in succ_local[k]:
                            if not pred_mask[s] & ~after:
                                now_ready |= 1 << s
                    following[after] = (value[0], value[1], step - freed, now_ready, done, k)
        if len(following) > state_limit:
            complete = False
            if not truncate:
                return Reordering(None, 0, 0, False)
            # Keep the most promising downsets; the result is then no longer a proof.
            following = dict(sorted(following.items(), key=lambda item: item[1][:2])
                             [:state_limit])
        kept += len(following)
        if total_limit is not None and kept > total_limit:
            return Reordering(None, 0, 0, False)
        history.append(following)
        layer = following
        if not layer:
            return Reordering(None, 0, 0, complete)
    full = (1 << w) - 1
    peak, total = layer[full][0], layer[full][1]
    order = []
    mask = full
    for states in reversed(history):
        previous, k = states[mask][4], states[mask][5]
        order.append(nodes[k])
        mask = previous
    order.reverse()
    return Reordering(order, peak, total, complete)
