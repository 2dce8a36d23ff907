"""A lower bound on the peak of every execution order: the bytes that are live at a node's step
whatever the order.

At node v's step, every order has live: the buffers v uses, and every buffer with one use that
must run before v (an ancestor) and another that must run after it (a descendant). The largest
such total over the nodes bounds every order's peak from below; with no edges it is the largest
single node's working set. (The DAG model's heaviest antichain is the opposite: the most bytes
some concurrent execution can hold live, so it bounds every serial order from above.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..support.cancel import NEVER, CancelToken
from .schedule_problem import ScheduleProblem

# Past this many nodes the reachability bitsets (nodes² bits) are skipped: the bound is then the
# largest working set alone.
REACH_NODES = 6_000


@dataclass(frozen=True)
class ScheduleBound:
    """`bytes` no order goes below, at `node`'s step, where the buffers `live` (indices) are."""

    bytes: int
    node: int
    live: tuple[int, ...]


def schedule_bound(problem: ScheduleProblem, topo: tuple[int, ...],
                   cancel: CancelToken = NEVER) -> ScheduleBound:
    """The largest total of buffers live at one node's step in every order."""
    n = problem.n
    if n == 0:
        return ScheduleBound(0, -1, ())
    if n > REACH_NODES:
        totals = problem.working_sets()
        v = int(np.argmax(totals))
        return ScheduleBound(int(totals[v]), v, tuple(sorted(set(problem.buffers_of(v).tolist()))))
    width = (n + 7) // 8
    own = np.packbits(np.eye(n, dtype=bool), axis=1) if n <= 2048 else None
    below = np.zeros((n, width), dtype=np.uint8)  # strict descendants, packed
    above = np.zeros((n, width), dtype=np.uint8)  # strict ancestors, packed

    def bit(v: int) -> np.ndarray:
        if own is not None:
            return own[v]
        row = np.zeros(width, dtype=np.uint8)
        row[v >> 3] = 0x80 >> (v & 7)
        return row

    for count, v in enumerate(reversed(topo)):
        for s in problem.succs(v).tolist():
            below[v] |= below[s]
            below[v] |= bit(s)
        if count % 256 == 0:
            cancel.check()
    for v in topo:
        for p in problem.preds(v).tolist():
            above[v] |= above[p]
            above[v] |= bit(p)
    totals = np.zeros(n, dtype=np.int64)
    starts, uses, sizes = problem.buf_start, problem.buf_use, problem.sizes
    for b in range(len(sizes)):
        mine = uses[starts[b]:starts[b + 1]]
        must = np.bitwise_or.reduce(below[mine], axis=0) & np.bitwise_or.reduce(above[mine], axis=0)
        live = np.unpackbits(must, count=n).astype(bool)
        live[mine] = True
        totals[live] += sizes[b]
        if b % 1024 == 0:
            cancel.check()
    v = int(np.argmax(totals))
    witness = []
    for b in range(len(sizes)):
        mine = uses[starts[b]:starts[b + 1]]
        if v in mine.tolist() or (np.unpackbits(np.bitwise_or.reduce(below[mine], axis=0),
                                                count=n)[v] and
                                  np.unpackbits(np.bitwise_or.reduce(above[mine], axis=0),
                                                count=n)[v]):
            witness.append(b)
    return ScheduleBound(int(totals[v]), v, tuple(witness))
