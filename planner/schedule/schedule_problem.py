"""The execution-order problem as flat arrays: nodes, edges, buffers and their uses, and the peak
of live bytes of one order (docs/semantics.md, "Choosing the execution order").

A buffer lives from the step of its first use to the step of its last use, both included, as in
the serial conflict model; the peak of an order is the largest total of reserved bytes live at
one step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.graph import Graph
from ..support._numba import njit


@dataclass(frozen=True)
class ScheduleProblem:
    """One graph's nodes and buffers in CSR form (all int64): `pred_*`/`succ_*` the direct
    predecessors and successors of each node, `node_*` the buffers each node uses, `buf_*` the
    nodes that use each buffer, `sizes` each buffer's reserved bytes."""

    n: int
    pred_start: np.ndarray
    pred: np.ndarray
    succ_start: np.ndarray
    succ: np.ndarray
    node_start: np.ndarray
    node_buf: np.ndarray
    buf_start: np.ndarray
    buf_use: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, graph: Graph) -> "ScheduleProblem":
        """The problem of ordering `graph`'s nodes (sizes are the reserved, aligned bytes)."""
        n = len(graph.nodes)
        edges = graph.edge_array
        if len(edges):
            edges = np.unique(edges, axis=0)
        succ_start, succ = _csr(n, edges[:, 0], edges[:, 1])
        pred_start, pred = _csr(n, edges[:, 1], edges[:, 0])
        buf_use, buf_start = graph.use_arrays
        owner = np.repeat(np.arange(len(graph.buffers), dtype=np.int64), np.diff(buf_start))
        node_start, node_buf = _csr(n, buf_use, owner)
        return cls(n, pred_start, pred, succ_start, succ, node_start, node_buf, buf_start,
                   buf_use, np.asarray(graph.reserved, dtype=np.int64))

    def preds(self, v: int) -> np.ndarray:
        """The direct predecessors of node `v`."""
        return self.pred[self.pred_start[v]:self.pred_start[v + 1]]

    def succs(self, v: int) -> np.ndarray:
        """The direct successors of node `v`."""
        return self.succ[self.succ_start[v]:self.succ_start[v + 1]]

    def buffers_of(self, v: int) -> np.ndarray:
        """The buffers node `v` uses."""
        return self.node_buf[self.node_start[v]:self.node_start[v + 1]]

    def profile(self, order: np.ndarray) -> np.ndarray:
        """Live reserved bytes at each step of `order` (node indices, a topological order)."""
        order = np.asarray(order, dtype=np.int64)
        return _profile(order, _positions(order), self.buf_start, self.buf_use, self.sizes)[0]

    def peak(self, order) -> int:
        """The peak of live reserved bytes over `order`."""
        curve = self.profile(order)
        return int(curve.max()) if len(curve) else 0

    def working_sets(self) -> np.ndarray:
        """Per node, the reserved bytes of the buffers it uses (all live at its step)."""
        owner = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.node_start))
        totals = np.zeros(self.n, dtype=np.int64)
        np.add.at(totals, owner, self.sizes[self.node_buf])
        return totals


def fits_int64(graph: Graph) -> bool:
    """Whether every total of live bytes fits int64 (the kernels' arithmetic)."""
    return sum(graph.reserved) < 2**62


def _csr(n: int, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, values): `cols` grouped by `rows` (stable), with n + 1 starts."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    key = np.argsort(rows, kind="stable")
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=starts[1:])
    return starts, cols[key]


def _positions(order: np.ndarray) -> np.ndarray:
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    return pos


@njit(cache=True, nogil=True)
def _profile(order, pos, buf_start, buf_use, sizes):
    """(curve, first, last): live bytes per step, and each buffer's first and last use step."""
    n = len(order)
    nbuf = len(sizes)
    first = np.empty(nbuf, np.int64)
    last = np.empty(nbuf, np.int64)
    delta = np.zeros(n + 1, np.int64)
    for b in range(nbuf):
        lo = n
        hi = -1
        for k in range(buf_start[b], buf_start[b + 1]):
            p = pos[buf_use[k]]
            if p < lo:
                lo = p
            if p > hi:
                hi = p
        first[b] = lo
        last[b] = hi
        delta[lo] += sizes[b]
        delta[hi + 1] -= sizes[b]
    curve = np.empty(n, np.int64)
    total = 0
    for t in range(n):
        total += delta[t]
        curve[t] = total
    return curve, first, last
