"""Exact search under a fixed capacity for any conflict graph: the exact mode for small graphs.

The argument of `exact` holds for any conflicts, not only interval overlaps: a packing pushed
down and listed by offset puts every buffer at its minimum offset, the top of the conflicting
buffers listed before it. The search is `exact`'s without what needs time order (sections in
a line, decomposition): canonical order, dominance and the rule for buffers with nothing
unplaced conflicting, with inference over cliques instead of sections. A clique's floor (the top
of its last placed member) plus its unplaced bytes must fit the capacity; the cliques are grown
greedily around each buffer, the lower bound's witness among them. Meant for graphs of a few
dozen buffers, where it proves plans optimal or finds the optimum greedy orders miss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..support._numba import njit
from .exact import ABORTED, INFEASIBLE, SOLVED, _grown

# Preorders tried in turn: larger first, more conflicts first, in the heaviest clique first.
_SIZE, _DEGREE, _HEAVIEST = 0, 1, 2
PREORDERS = 3


@njit(cache=True, nogil=True)
def _search_cliques(size, adj_start, adj, bc_start, bc, cm_start, cm, by_rank, capacity,
                    node_limit, stop):
    """(status, offsets, nodes), as `exact._search`, over conflict lists adj and cliques (the
    cliques of buffer b: bc[bc_start[b]:bc_start[b+1]]; members of clique c likewise in cm);
    `by_rank` lists the buffers in preorder."""
    n = size.shape[0]
    n_cl = cm_start.shape[0] - 1
    rank = np.empty(n, np.int64)
    rank[by_rank] = np.arange(n)
    offset = np.full(n, -1, np.int64)
    solution = np.zeros(n, np.int64)
    min_off = np.zeros(n, np.int64)
    floor = np.zeros(n_cl, np.int64)
    total = np.zeros(n_cl, np.int64)
    for c in range(n_cl):
        for q in range(cm_start[c], cm_start[c + 1]):
            total[c] += size[cm[q]]
        if total[c] > capacity:
            return INFEASIBLE, solution, 0
    if n == 0:
        return SOLVED, solution, 0
    # Undo log: kind 0 restores a minimum offset, 1 a floor, 2 a total, 3 an offset.
    lg_kind = np.empty(256, np.int64)
    lg_idx = np.empty(256, np.int64)
    lg_val = np.empty(256, np.int64)
    lg_n = 0
    f_base = np.zeros(n + 1, np.int64)
    f_count = np.zeros(n + 1, np.int64)
    f_next = np.zeros(n + 1, np.int64)
    f_cur = np.zeros(n + 1, np.int64)
    f_log = np.zeros(n + 1, np.int64)
    f_hat = np.zeros(n + 1, np.bool_)
    o_buf = np.empty(4 * n, np.int64)
    o_off = np.empty(4 * n, np.int64)
    o_top = 0
    scratch = np.empty(n, np.int64)
    scratch_off = np.empty(n, np.int64)
    big = np.iinfo(np.int64).max
    nodes = 0
    depth = 0
    parent_off, parent_rank = 0, -1
    opening = True
    while True:
        if opening:
            # A frame over the unplaced buffers that are canonical and not dominated.
            lowest_top = big
            for b in range(n):
                if offset[b] < 0:
                    lowest_top = min(lowest_top, min_off[b] + size[b])
            if lowest_top == big:
                return SOLVED, solution, nodes
            if nodes >= node_limit or stop[0]:
                return ABORTED, solution, nodes
            nodes += 1
            m = 0
            for k in range(n):
                b = by_rank[k]
                at = min_off[b]
                if offset[b] < 0 and at < lowest_top and (
                        at > parent_off or (at == parent_off and k > parent_rank)):
                    scratch[m] = b
                    scratch_off[m] = at
                    m += 1
            by_off = np.argsort(scratch_off[:m], kind="mergesort")
            o_buf = _grown(o_buf, o_top + m)
            o_off = _grown(o_off, o_top + m)
            for i in range(m):
                o_buf[o_top + i] = scratch[by_off[i]]
                o_off[o_top + i] = scratch_off[by_off[i]]
            f_base[depth], f_count[depth], f_next[depth], f_cur[depth] = o_top, m, 0, -1
            o_top += m
            depth += 1
            opening = False
        t = depth - 1
        if f_cur[t] >= 0:
            while lg_n > f_log[t]:
                lg_n -= 1
                kind, i, value = lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n]
                if kind == 0:
                    min_off[i] = value
                elif kind == 1:
                    floor[i] = value
                elif kind == 2:
                    total[i] = value
                else:
                    offset[i] = value
            f_cur[t] = -1
            if not f_hat[t]:  # nothing unplaced conflicts with it: no alternative does better
                f_next[t] = f_count[t]
        placed = False
        while f_next[t] < f_count[t]:
            i = f_next[t]
            f_next[t] += 1
            b = o_buf[f_base[t] + i]
            at = o_off[f_base[t] + i]
            top = at + size[b]
            need = lg_n + 1 + (adj_start[b + 1] - adj_start[b]) + 2 * (bc_start[b + 1] - bc_start[b])
            if need > lg_kind.shape[0]:
                lg_kind = _grown(lg_kind, need)
                lg_idx = _grown(lg_idx, need)
                lg_val = _grown(lg_val, need)
            pos0 = lg_n
            lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = 3, b, -1
            lg_n += 1
            offset[b] = at
            solution[b] = at
            hat = False
            fits = top <= capacity
            for q in range(adj_start[b], adj_start[b + 1]):
                o = adj[q]
                if offset[o] >= 0:
                    continue
                hat = True
                if min_off[o] < top:
                    lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = 0, o, min_off[o]
                    lg_n += 1
                    min_off[o] = top
                    if top + size[o] > capacity:
                        fits = False
            for q in range(bc_start[b], bc_start[b + 1]):
                c = bc[q]
                lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = 1, c, floor[c]
                lg_n += 1
                floor[c] = top
                lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n] = 2, c, total[c]
                lg_n += 1
                total[c] -= size[b]
            if fits:
                for c in range(n_cl):
                    if max(floor[c], at) + total[c] > capacity:
                        fits = False
                        break
            if fits:
                f_cur[t], f_hat[t], f_log[t] = i, hat, pos0
                parent_off, parent_rank = at, rank[b]
                placed = True
                break
            while lg_n > pos0:
                lg_n -= 1
                kind, j, value = lg_kind[lg_n], lg_idx[lg_n], lg_val[lg_n]
                if kind == 0:
                    min_off[j] = value
                elif kind == 1:
                    floor[j] = value
                elif kind == 2:
                    total[j] = value
                else:
                    offset[j] = value
            if not hat:
                break
        if placed:
            opening = True
            continue
        # Out of candidates: back up to the parent frame.
        depth -= 1
        o_top = f_base[depth]
        if depth == 0:
            return INFEASIBLE, solution, nodes


@dataclass(frozen=True)
class CliqueTrace:
    """A small conflict graph prepared for exact search: conflict lists and covering cliques."""

    size: np.ndarray
    adj_start: np.ndarray
    adj: np.ndarray
    bc_start: np.ndarray
    bc: np.ndarray
    cm_start: np.ndarray
    cm: np.ndarray
    preorders: tuple[np.ndarray, ...]

    @property
    def heuristics(self) -> int:
        """How many preorders the search takes in turn."""
        return len(self.preorders)

    def solve(self, capacity: int, heuristic: int, node_limit: int,
              stop: np.ndarray) -> tuple[int, np.ndarray, int]:
        """One search under `capacity` with preorder `heuristic`: (status, offsets, nodes)."""
        return _search_cliques(self.size, self.adj_start, self.adj, self.bc_start, self.bc,
                               self.cm_start, self.cm, self.preorders[heuristic],
                               int(capacity), int(node_limit), stop)


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.zeros(len(lists) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], dtype=np.int64)
    return starts, flat


def prepare_cliques(size: np.ndarray, adj_start: np.ndarray, adj: np.ndarray,
                    witness=()) -> CliqueTrace:
    """The `CliqueTrace` of buffers with reserved `size` and conflict lists (CSR); `witness`
    (a clique, such as the lower bound's) joins the cliques grown around each buffer."""
    size = np.ascontiguousarray(size, dtype=np.int64)
    n = len(size)
    neighbours = [set(adj[adj_start[b]:adj_start[b + 1]].tolist()) for b in range(n)]
    by_size = sorted(range(n), key=lambda b: (-int(size[b]), b))
    cliques = {frozenset(int(b) for b in witness)} if len(witness) else set()
    for b in by_size:
        clique = {b}
        for c in by_size:
            if c not in clique and all(c in neighbours[m] for m in clique):
                clique.add(c)
        cliques.add(frozenset(clique))
    members = sorted(sorted(c) for c in cliques)
    cm_start, cm = _csr(members)
    of_buffer = [[] for _ in range(n)]
    for index, clique in enumerate(members):
        for b in clique:
            of_buffer[b].append(index)
    bc_start, bc = _csr(of_buffer)
    degree = np.diff(adj_start)
    heaviest = np.zeros(n, dtype=np.int64)
    for clique in members:
        weight = int(size[clique].sum())
        heaviest[clique] = np.maximum(heaviest[clique], weight)
    index = np.arange(n)
    preorders = (np.lexsort((index, -size)), np.lexsort((index, -size, -degree)),
                 np.lexsort((index, -size, -heaviest)))
    return CliqueTrace(size, np.ascontiguousarray(adj_start, dtype=np.int64),
                       np.ascontiguousarray(adj, dtype=np.int64), bc_start, bc, cm_start, cm,
                       tuple(p.astype(np.int64) for p in preorders))


def warm_up() -> None:
    """Compile (or load from the cache) the kernel on a tiny graph."""
    trace = prepare_cliques(np.array([2, 1, 1]), np.array([0, 1, 2, 2]), np.array([1, 0]))
    trace.solve(3, 0, 100, np.zeros(1, np.int64))
