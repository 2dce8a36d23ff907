"""Skyline packing of interval lifetimes (the serial model), improved by local search.

Every serial plan can be pushed down, without growing, until each buffer rests on the highest
buffer below it within its lifetime (or on 0). Such packings grow from the bottom: keep the
*skyline*, the top of what is placed at each step; at the lowest valley some unplaced buffer
still needs, place the best-ranked buffer whose lifetime fits inside the valley, or, when none
does, raise the valley to its lower rim (the classic best-fit rule of strip packing). A ranking
of the buffers decides every packing; local search swaps ranks and keeps swaps that raise
neither the slab nor the waste under raised valleys. Useful where greedy orders leave holes
that no later request fills.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

try:
    from numba import njit, objmode
except ImportError:  # numba is optional: plain Python then (same results, far fewer tries)
    njit = None

if njit is not None:
    @njit(cache=True)
    def _clock():
        with objmode(now="float64"):
            now = time.perf_counter()
        return now
else:
    def njit(*args, **kwargs):
        return args[0] if args and callable(args[0]) else (lambda f: f)

    _clock = time.perf_counter

# Packings between two looks at the clock (every one when packings run as plain Python).
_PACKINGS_PER_CLOCK = 64 if _clock is not time.perf_counter else 1

# Fresh starts per search: the budget is split evenly between them.
_RESTARTS = 5

# Past this many buffer-steps (buffers times steps), one packing costs too much to search with.
WORK_LIMIT = 5_000_000


@njit(cache=True)
def _by_first_step(first, steps):
    """Buffers grouped by first step (CSR: starts, members)."""
    n = first.shape[0]
    count = np.zeros(steps + 1, np.int64)
    for i in range(n):
        count[first[i] + 1] += 1
    starts = np.cumsum(count)
    members = np.empty(n, np.int64)
    fill = starts[:-1].copy()
    for i in range(n):
        members[fill[first[i]]] = i
        fill[first[i]] += 1
    return starts, members


_BLOCK = 16
_UNNEEDED = np.iinfo(np.int64).max


@njit(cache=True, nogil=True)
def _refresh(block_low, k, sky, needed, steps):
    """Recompute block k's lowest skyline among the steps some unplaced buffer needs."""
    low = _UNNEEDED
    for t in range(k * _BLOCK, min(steps, (k + 1) * _BLOCK)):
        if needed[t] > 0 and sky[t] < low:
            low = sky[t]
    block_low[k] = low


@njit(cache=True, nogil=True)
def pack(size, first, last, rank, steps, starts, members):
    """Offsets, height and waste of the skyline packing that prefers lower `rank` (best fit).

    Waste is the byte-steps left empty under raised valleys.
    """
    n = size.shape[0]
    sky = np.zeros(steps, np.int64)
    needed = np.zeros(steps, np.int64)  # unplaced buffers live at each step
    for i in range(n):
        for t in range(first[i], last[i] + 1):
            needed[t] += 1
    # Unplaced buffers by first step: members[starts[t]:ends[t]] (placing one swaps it out).
    members = members.copy()
    ends = starts[1:].copy()
    where = np.empty(n, np.int64)
    for k in range(n):
        where[members[k]] = k
    offset = np.zeros(n, np.int64)
    # Per block of steps, the lowest skyline among steps still needed: finding the lowest
    # valley scans blocks, then one block, instead of every step.
    blocks = (steps + _BLOCK - 1) // _BLOCK
    block_low = np.empty(blocks, np.int64)
    for k in range(blocks):
        _refresh(block_low, k, sky, needed, steps)
    remaining = n
    top = 0
    waste = 0
    while remaining > 0:
        k_low = 0
        for k in range(1, blocks):
            if block_low[k] < block_low[k_low]:
                k_low = k
        low = -1
        for t in range(k_low * _BLOCK, min(steps, (k_low + 1) * _BLOCK)):
            if needed[t] > 0 and sky[t] == block_low[k_low]:
                low = t
                break
        floor = sky[low]
        # The valley: steps around `low` at the same height that some buffer still needs.
        lo = low
        while lo > 0 and needed[lo - 1] > 0 and sky[lo - 1] == floor:
            lo -= 1
        hi = low
        while hi < steps - 1 and needed[hi + 1] > 0 and sky[hi + 1] == floor:
            hi += 1
        chosen = -1
        for t in range(lo, hi + 1):
            for k in range(starts[t], ends[t]):
                b = members[k]
                if last[b] <= hi and (chosen < 0 or rank[b] < rank[chosen]):
                    chosen = b
        if chosen >= 0:
            for t in range(first[chosen], last[chosen] + 1):
                sky[t] = floor + size[chosen]
                needed[t] -= 1
            t = first[chosen]
            moved = members[ends[t] - 1]
            members[where[chosen]], members[ends[t] - 1] = moved, chosen
            where[moved], where[chosen] = where[chosen], ends[t] - 1
            ends[t] -= 1
            offset[chosen] = floor
            top = max(top, floor + size[chosen])
            remaining -= 1
            for k in range(first[chosen] // _BLOCK, last[chosen] // _BLOCK + 1):
                _refresh(block_low, k, sky, needed, steps)
        else:
            # Nothing fits inside: every buffer here rests at least as high as the lower rim.
            rim = -1
            if lo > 0 and needed[lo - 1] > 0:
                rim = sky[lo - 1]
            if hi < steps - 1 and needed[hi + 1] > 0 and (rim < 0 or sky[hi + 1] < rim):
                rim = sky[hi + 1]
            for t in range(lo, hi + 1):
                sky[t] = rim
            waste += (rim - floor) * (hi - lo + 1)
            for k in range(lo // _BLOCK, hi // _BLOCK + 1):
                _refresh(block_low, k, sky, needed, steps)
    return offset, top, waste


@njit(cache=True, nogil=True)
def _improve(size, first, last, rank, bound, deadline, seed, stop):
    """Swap ranks at random until `deadline`, `bound` or `stop[0]` is set (by another search
    that reached the bound; this one sets it too); keep swaps that raise neither the slab nor,
    at equal slab, the waste."""
    np.random.seed(seed)
    n = size.shape[0]
    steps = 0
    for i in range(n):
        steps = max(steps, last[i] + 1)
    starts, members = _by_first_step(first, steps)
    rank = rank.copy()
    offset, height, waste = pack(size, first, last, rank, steps, starts, members)
    best_offset = offset.copy()
    best = height
    tries = 0
    while best > bound and n > 1:
        tries += 1
        if tries % _PACKINGS_PER_CLOCK == 0 and (stop[0] or _clock() > deadline):
            break
        a = np.random.randint(n)
        b = np.random.randint(n)
        rank[a], rank[b] = rank[b], rank[a]
        trial, trial_height, trial_waste = pack(size, first, last, rank, steps, starts, members)
        # Less waste at the same height is progress the height alone would not show.
        if trial_height < height or (trial_height == height and trial_waste <= waste):
            height, waste = trial_height, trial_waste
            if height < best:
                best = height
                best_offset[:] = trial
        else:
            rank[a], rank[b] = rank[b], rank[a]
    if best <= bound:
        stop[0] = 1
    return best_offset, best


def skyline_offsets(size: np.ndarray, first: np.ndarray, last: np.ndarray, bound: int,
                    deadline: float) -> tuple[np.ndarray, int]:
    """The lowest skyline packing found before `deadline` (perf_counter time) or at `bound`.

    One search per core, each restarting a few times (local search stalls on plateaus) from
    longest-lived first or largest area first (ties by size), with its own random swaps.
    """
    duration = last - first + 1
    starts = [np.lexsort((-size, -duration)), np.lexsort((-duration, -size * duration))]
    stop = np.zeros(1, dtype=np.int64)  # set by the first search to reach the bound

    def run(k: int):
        best = None
        now = time.perf_counter()
        for r in range(_RESTARTS):
            rank = np.empty(len(size), dtype=np.int64)
            rank[starts[(k + r) % len(starts)]] = np.arange(len(size))
            until = now + (deadline - now) * (r + 1) / _RESTARTS
            offset, height = _improve(size, first, last, rank, bound, until,
                                      k * _RESTARTS + r, stop)
            if best is None or height < best[0]:
                best = (int(height), k, offset)
            if stop[0]:
                break
        return best

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        height, _, offset = min(pool.map(run, range(os.cpu_count() or 1)))
    return offset, height
