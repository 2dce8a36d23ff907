"""Conflicts of interval lifetimes: buffer i lives over the closed step range [first[i], last[i]].

Both conflict models reduce to this when one execution order is forced (a serial schedule, or a
DAG whose topological order is unique), so neither then needs a transitive closure.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique` of a 1-d array, by one sort: NumPy 2.3 and later unique integers by hashing,
    ten times slower than this on a million distinct steps."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def overlap_mask(first: np.ndarray, last: np.ndarray, b: int) -> int:
    """The buffers whose range overlaps buffer `b`'s (not `b` itself), as a bitset."""
    live = (first <= last[b]) & (last >= first[b])
    live[b] = False
    return int.from_bytes(np.packbits(live, bitorder="little").tobytes(), "little")


def overlap_pairs(first: np.ndarray, last: np.ndarray) -> int:
    """How many unordered pairs of ranges overlap, without listing them (two sorts)."""
    started = np.searchsorted(np.sort(first), last, side="right")
    ended = np.searchsorted(np.sort(last), first, side="left")
    return int((started - ended - 1).sum()) // 2


def first_last(step_of: np.ndarray, flat_uses: np.ndarray, starts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each buffer's first and last step, from the steps of nodes (`step_of[node]`) and the
    buffers' uses in `Graph.use_arrays` form (every buffer has at least one use)."""
    if len(starts) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    steps = step_of[flat_uses]
    return (np.minimum.reduceat(steps, starts[:-1]).astype(np.int64),
            np.maximum.reduceat(steps, starts[:-1]).astype(np.int64))


def overlap_lists(first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every buffer's overlapping buffers as one CSR pair (starts, neighbours), each run ascending.

    Sorted by first step, the ranges that overlap one and start no earlier are the run up to the
    last start within it, so all pairs come from one `searchsorted`: O(n log n + pairs).
    """
    n = len(first)
    by_first = np.argsort(first, kind="stable")
    end = np.searchsorted(first[by_first], last[by_first], side="right")
    counts = np.maximum(end - np.arange(n) - 1, 0)
    x = np.repeat(np.arange(n), counts)
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    y = x + 1 + (np.arange(len(x)) - run_start)
    a, b = by_first[x], by_first[y]
    rows, cols = np.concatenate([a, b]), np.concatenate([b, a])
    ranked = np.lexsort((cols, rows))
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=starts[1:])
    return starts, cols[ranked].astype(np.int64)
