"""Fast offsets for a request order, without a trace: the inner loop the search runs many times.

Two kernels compute exactly what `placement.place` computes (first or best fit), from arrays:
one over explicit conflict lists (any model, while the lists fit in memory), one over interval
lifetimes (the serial model at any size, finding overlapping placed buffers with a segment tree
over steps instead of listing conflicts). Compiled with numba when it imports; plain Python
otherwise (same results, slower).
"""

from __future__ import annotations

import numpy as np

from ._numba import njit
from .bitset import members

# Past this many conflict-list entries (two per conflicting pair), lists cost too much memory.
LIST_ENTRIES_LIMIT = 40_000_000

FIRST_FIT, BEST_FIT = 0, 1


# Spans up to this many (or per bucket) are sorted by comparison; more go to buckets first.
_SMALL_SORT = 32


@njit(cache=True, nogil=True)
def _fit(lo, hi, count, size, fit, bucket, start, by_start):
    """Offset for `size` clear of spans lo[:count], hi[:count] (first or best fit).

    Spans are visited by start: many spans go to buckets by start first (their order agrees
    with the starts', as scaling by a positive float is monotone), and only each bucket is
    sorted, so the cost stays near linear and first fit stops at the first bucket that fits.
    `bucket`, `start` and `by_start` are scratch arrays of at least count + 1 entries.
    """
    if count == 0:
        return 0
    if count <= _SMALL_SORT:
        order = np.argsort(lo[:count])
        for k in range(count):
            by_start[k] = order[k]
        buckets = 1
        start[0] = 0
        start[1] = count
    else:
        top = 0
        for k in range(count):
            top = max(top, lo[k])
        buckets = count
        scale = (buckets - 1) / top if top > 0 else 0.0
        start[:buckets + 1] = 0
        for k in range(count):
            bucket[k] = int(lo[k] * scale)
            start[bucket[k] + 1] += 1
        for b in range(buckets):
            start[b + 1] += start[b]
        for k in range(count):
            by_start[start[bucket[k]]] = k
            start[bucket[k]] += 1
        for b in range(buckets, 0, -1):  # shifted by the fill above: restore bucket starts
            start[b] = start[b - 1]
        start[0] = 0
    cursor = 0
    best_at = -1
    best_len = 0
    for b in range(buckets):
        first_k, end_k = start[b], start[b + 1]
        if end_k - first_k > _SMALL_SORT:
            members = by_start[first_k:end_k]
            members[:] = members[np.argsort(lo[members])]
        elif end_k - first_k > 1 and count > _SMALL_SORT:
            for k in range(first_k + 1, end_k):  # insertion sort: buckets are mostly tiny
                j = by_start[k]
                q = k
                while q > first_k and lo[by_start[q - 1]] > lo[j]:
                    by_start[q] = by_start[q - 1]
                    q -= 1
                by_start[q] = j
        for k in range(first_k, end_k):
            j = by_start[k]
            s = lo[j]
            if s > cursor:
                gap = s - cursor
                if gap >= size:
                    if fit == FIRST_FIT:
                        return cursor
                    if best_at < 0 or gap < best_len:
                        best_at = cursor
                        best_len = gap
            if hi[j] > cursor:
                cursor = hi[j]
    return best_at if best_at >= 0 else cursor


# Requests placed between two looks at a stop flag.
_REQUESTS_PER_POLL = 64


def listed_offsets(order, size, adj_start, adj, fit):
    """Offsets placing `order` with conflicts as lists: adj[adj_start[i]:adj_start[i+1]]."""
    return _listed(order, size, adj_start, adj, fit, np.zeros(1, np.int64))


def interval_offsets(order, size, first, last, fit):
    """Offsets placing `order` where buffers conflict when [first, last] step ranges overlap.

    Placed buffers overlapping i are those alive at first[i] (a stabbing query down a segment
    tree over steps) plus those starting in (first[i], last[i]] (buckets by first step).
    """
    return _interval(order, size, first, last, fit, np.zeros(1, np.int64))


@njit(cache=True, nogil=True)
def _listed(order, size, adj_start, adj, fit, stop):
    """`listed_offsets`, ending early (offsets incomplete) once `stop[0]` is set."""
    n = size.shape[0]
    offset = np.zeros(n, np.int64)
    placed = np.zeros(n, np.bool_)
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    bucket = np.empty(n + 1, np.int64)
    start = np.empty(n + 1, np.int64)
    by_start = np.empty(n + 1, np.int64)
    for request in range(order.shape[0]):
        if request % _REQUESTS_PER_POLL == 0 and stop[0]:
            break
        i = order[request]
        count = 0
        for k in range(adj_start[i], adj_start[i + 1]):
            j = adj[k]
            if placed[j]:
                lo[count] = offset[j]
                hi[count] = offset[j] + size[j]
                count += 1
        offset[i] = _fit(lo, hi, count, size[i], fit, bucket, start, by_start)
        placed[i] = True
    return offset


@njit(cache=True, nogil=True)
def _segments(first, last, leaves):
    """Per buffer, the segment-tree nodes whose step ranges tile its lifetime (CSR layout)."""
    n = first.shape[0]
    counts = np.zeros(n + 1, np.int64)
    stack = np.empty(128, np.int64)
    lo_stack = np.empty(128, np.int64)
    hi_stack = np.empty(128, np.int64)
    for pass_ in range(2):
        if pass_ == 1:
            starts = np.zeros(n + 1, np.int64)
            for i in range(n):
                starts[i + 1] = starts[i] + counts[i]
            nodes = np.empty(starts[n], np.int64)
        for i in range(n):
            filled = 0
            stack[0] = 1  # node 1 spans leaves [0, leaves); children 2k, 2k+1
            lo_stack[0] = 0
            hi_stack[0] = leaves
            top = 1
            while top > 0:
                top -= 1
                node = stack[top]
                a = lo_stack[top]
                b = hi_stack[top]
                if last[i] < a or first[i] >= b:
                    continue
                if first[i] <= a and b - 1 <= last[i]:
                    if pass_ == 1:
                        nodes[starts[i] + filled] = node
                    filled += 1
                    continue
                mid = (a + b) // 2
                stack[top] = 2 * node
                lo_stack[top] = a
                hi_stack[top] = mid
                stack[top + 1] = 2 * node + 1
                lo_stack[top + 1] = mid
                hi_stack[top + 1] = b
                top += 2
            counts[i] = filled
    return starts, nodes


@njit(cache=True, nogil=True)
def _interval(order, size, first, last, fit, stop):
    """`interval_offsets`, ending early (offsets incomplete) once `stop[0]` is set."""
    n = size.shape[0]
    steps = 1
    for i in range(n):
        if last[i] + 1 > steps:
            steps = last[i] + 1
    leaves = 1
    while leaves < steps:
        leaves *= 2
    seg_start, seg_nodes = _segments(first, last, leaves)
    # Bucket storage, sized up front: every buffer lands in its tree nodes and its start bucket.
    node_cap = np.zeros(2 * leaves + 1, np.int64)
    for k in range(seg_nodes.shape[0]):
        node_cap[seg_nodes[k] + 1] += 1
    node_base = np.cumsum(node_cap)
    node_fill = np.zeros(2 * leaves, np.int64)
    node_items = np.empty(seg_nodes.shape[0], np.int64)
    start_cap = np.zeros(steps + 1, np.int64)
    for i in range(n):
        start_cap[first[i] + 1] += 1
    start_base = np.cumsum(start_cap)
    start_fill = np.zeros(steps, np.int64)
    start_items = np.empty(n, np.int64)

    offset = np.zeros(n, np.int64)
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    bucket = np.empty(n + 1, np.int64)
    start = np.empty(n + 1, np.int64)
    by_start = np.empty(n + 1, np.int64)
    for request in range(order.shape[0]):
        if request % _REQUESTS_PER_POLL == 0 and stop[0]:
            break
        i = order[request]
        count = 0
        node = 1
        a = 0
        b = leaves
        s = first[i]
        while True:  # stabbing query: every placed buffer stored on the path contains step s
            for k in range(node_base[node], node_base[node] + node_fill[node]):
                j = node_items[k]
                lo[count] = offset[j]
                hi[count] = offset[j] + size[j]
                count += 1
            if b - a == 1:
                break
            mid = (a + b) // 2
            if s < mid:
                node = 2 * node
                b = mid
            else:
                node = 2 * node + 1
                a = mid
        for t in range(s + 1, last[i] + 1):
            for k in range(start_base[t], start_base[t] + start_fill[t]):
                j = start_items[k]
                lo[count] = offset[j]
                hi[count] = offset[j] + size[j]
                count += 1
        offset[i] = _fit(lo, hi, count, size[i], fit, bucket, start, by_start)
        for k in range(seg_start[i], seg_start[i + 1]):
            nd = seg_nodes[k]
            node_items[node_base[nd] + node_fill[nd]] = i
            node_fill[nd] += 1
        start_items[start_base[s] + start_fill[s]] = i
        start_fill[s] += 1
    return offset


class Packer:
    """Offsets and slab height for any request order of one graph under one conflict model."""

    def __init__(self, graph, model):
        self.size = np.asarray(graph.reserved, dtype=np.int64)
        self.n = len(self.size)
        if model.intervals is not None and _list_entries(model) > LIST_ENTRIES_LIMIT:
            self._first = np.ascontiguousarray(model.intervals[0], dtype=np.int64)
            self._last = np.ascontiguousarray(model.intervals[1], dtype=np.int64)
            self._adj = None
        else:
            self._adj_start, self._adj = _conflict_lists(model, self.n)

    @property
    def conflict_lists(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Every buffer's conflicts as CSR (starts, indices), or None for interval lifetimes
        too many to list."""
        return None if self._adj is None else (self._adj_start, self._adj)

    def offsets(self, order: np.ndarray, fit: int = FIRST_FIT,
                stop: np.ndarray | None = None) -> np.ndarray:
        """Each buffer's offset when placing `order` (buffer indices) with `fit`; setting
        `stop[0]` from another thread ends the placement early (the offsets are then
        incomplete)."""
        stop = np.zeros(1, np.int64) if stop is None else stop
        if self._adj is None:
            return _interval(order, self.size, self._first, self._last, fit, stop)
        return _listed(order, self.size, self._adj_start, self._adj, fit, stop)

    def height(self, order: np.ndarray, fit: int = FIRST_FIT) -> int:
        """The slab bytes placing `order` with `fit` needs."""
        if self.n == 0:
            return 0
        return int((self.offsets(order, fit) + self.size).max())


def fits_int64(graph) -> bool:
    """Whether every offset any order can produce fits the kernels' 64-bit integers."""
    return sum(graph.reserved) < 2**62


def _list_entries(model) -> int:
    return 2 * model.conflict_pairs


def _conflict_lists(model, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every buffer's conflicts as one CSR pair (starts, indices)."""
    if model.intervals is not None:
        return _interval_lists(*model.intervals)
    lists = [members(model.conflict_mask(i)) for i in range(n)]
    starts = np.zeros(n + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((j for x in lists for j in x), dtype=np.int64, count=int(starts[-1]))
    return starts, flat


@njit(cache=True)
def _interval_lists(first, last):
    """Conflict lists of interval lifetimes, by a sweep over buffers sorted by first step."""
    n = first.shape[0]
    by_first = np.argsort(first, kind="mergesort")
    counts = np.zeros(n, np.int64)
    for x in range(n):
        i = by_first[x]
        for y in range(x + 1, n):
            j = by_first[y]
            if first[j] > last[i]:
                break
            counts[i] += 1
            counts[j] += 1
    starts = np.zeros(n + 1, np.int64)
    for i in range(n):
        starts[i + 1] = starts[i] + counts[i]
    fill = starts[:-1].copy()
    adj = np.empty(starts[n], np.int64)
    for x in range(n):
        i = by_first[x]
        for y in range(x + 1, n):
            j = by_first[y]
            if first[j] > last[i]:
                break
            adj[fill[i]] = j
            fill[i] += 1
            adj[fill[j]] = i
            fill[j] += 1
    return starts, adj


def warm_up() -> None:
    """Compile (or load from numba's cache) the packing kernels on a tiny trace."""
    first, last = np.array([0, 0, 1], np.int64), np.array([1, 0, 1], np.int64)
    size = np.array([2, 1, 1], np.int64)
    order = np.arange(3, dtype=np.int64)
    starts, adj = _interval_lists(first, last)
    for fit in (FIRST_FIT, BEST_FIT):
        listed_offsets(order, size, starts, adj, fit)
        interval_offsets(order, size, first, last, fit)
