"""Fast offsets for a request order: what every placer and the search's packings run.

`Packer` picks a kernel of `dense_kernels` for the conflict model; the kernel here, over
explicit conflict lists, computes exactly the same (first or best fit) past the bitset kernel's
size. Compiled with numba when it imports; plain Python otherwise (same results, slower).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..model.bitset import members
from ..support._numba import njit
from ..support.cancel import NEVER, CancelToken
from .dense_kernels import (BEST_FIT, CHUNK_PAIRS, FIRST_FIT, BitsetPlacer, IntervalPlacer,
                            bitset_rows, lowest_gap, place_in_chunks, scratch_entries)
from .dense_kernels import warm_up as dense_warm_up

# Past this many conflict-list entries (two per conflicting pair), lists cost too much memory.
LIST_ENTRIES_LIMIT = 40_000_000

# Up to this many buffers, conflict sets are held as bitset rows (n * n / 8 bytes: 200 MiB).
BITSET_BUFFERS = 40_000


def listed_offsets(order, size, adj_start, adj, fit):
    """Offsets placing `order` with conflicts as lists: adj[adj_start[i]:adj_start[i+1]]."""
    return _listed_offsets(np.ascontiguousarray(order, dtype=np.int64),
                           np.ascontiguousarray(size, dtype=np.int64), adj_start, adj, fit)


def _listed_offsets(order, size, adj_start, adj, fit, stop=None, cancel: CancelToken = NEVER,
                    chunk: int = CHUNK_PAIRS):
    """`listed_offsets` in chunks of about `chunk` conflict-list entries: between two,
    `cancel` is polled (raising `Cancelled`) and a set `stop[0]` ends the placement early
    (offsets incomplete)."""
    n = size.shape[0]
    offset = np.zeros(n, np.int64)
    placed = np.zeros(n, np.bool_)
    lo, hi = np.empty(n, np.int64), np.empty(n, np.int64)
    scratch = np.empty(scratch_entries(n), np.int64)
    place_in_chunks(len(order), stop, cancel, lambda done: _listed(
        order, done, size, adj_start, adj, fit, offset, placed, lo, hi, scratch, chunk))
    return offset


@njit(cache=True, nogil=True)
def _listed(order, begin, size, adj_start, adj, fit, offset, placed, lo, hi, scratch,
            pair_limit):
    """Place order[begin:] until about `pair_limit` list entries were read; the index of the
    next request to place."""
    visited = 0
    request = begin
    while request < order.shape[0] and visited < pair_limit:
        i = order[request]
        count = 0
        for k in range(adj_start[i], adj_start[i + 1]):
            j = adj[k]
            if placed[j]:
                lo[count] = offset[j]
                hi[count] = offset[j] + size[j]
                count += 1
        offset[i] = lowest_gap(lo, hi, count, size[i], fit, scratch)
        placed[i] = True
        visited += adj_start[i + 1] - adj_start[i] + 1
        request += 1
    return request


class Packer:
    """Offsets and slab height for any request order of one graph under one conflict model:
    interval lifetimes go to `dense_kernels.IntervalPlacer`, other conflict sets to
    `dense_kernels.BitsetPlacer` (or to conflict lists past `BITSET_BUFFERS` buffers)."""

    def __init__(self, graph, model, cancel: CancelToken = NEVER):
        self.size = np.asarray(graph.reserved, dtype=np.int64)
        self.n = len(self.size)
        self._model = model
        if model.intervals is not None:
            self._placer = IntervalPlacer(self.size, *model.intervals)
        elif self.n <= BITSET_BUFFERS:
            model.prepare(cancel)
            masks = (model.conflict_mask(i) for i in range(self.n))
            self._placer = BitsetPlacer(self.size, bitset_rows(masks, self.n, cancel))
        else:
            self._placer = None
            self._lists = _conflict_lists(model, self.n)

    @cached_property
    def conflict_lists(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Every buffer's conflicts as CSR (starts, indices), or None for interval lifetimes
        too many to list."""
        if self._placer is None:
            return self._lists
        if self._model.intervals is not None and _list_entries(self._model) > LIST_ENTRIES_LIMIT:
            return None
        return _conflict_lists(self._model, self.n)

    def offsets(self, order: np.ndarray, fit: int = FIRST_FIT,
                stop: np.ndarray | None = None, cancel: CancelToken = NEVER) -> np.ndarray:
        """Each buffer's offset when placing `order` (buffer indices) with `fit`; setting
        `stop[0]` from another thread ends the placement early (the offsets are then
        incomplete), and `cancel` raises `Cancelled` within a few milliseconds."""
        order = np.ascontiguousarray(order, dtype=np.int64)
        if self._placer is not None:
            return self._placer.offsets(order, fit, stop, cancel)
        return _listed_offsets(order, self.size, *self._lists, fit, stop, cancel)

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


@njit(cache=True, nogil=True)
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
    dense_warm_up()
