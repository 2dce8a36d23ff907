"""Depth-first search for a packing under a fixed capacity (the serial model).

Every packing can be pushed down until each buffer rests on a buffer below it (or on 0), and
then placed in order of offset: each buffer goes to the highest top over its lifetime, never
below the previous offset. The search builds such placements: at the leftmost step where the
floor (the skyline, at least the last offset) is lowest, it branches on which unplaced buffer
live there rests on that floor next (lower rank first), and last on none doing so, which raises
the step's floor to the lowest offset a buffer live there can take. A branch is cut when at
some step the floor plus the bytes of the unplaced buffers live there exceed the capacity;
buffers with the same lifetime and size are tried once per step, as they are interchangeable.
Short searches with perturbed ranks, restarted, find packings a few percent above the lower
bound where local search stalls.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .skyline import _PACKINGS_PER_CLOCK, _clock, njit

# Placements between two looks at the clock.
_NODES_PER_CLOCK = 256 * _PACKINGS_PER_CLOCK

# Backups before a search gives up and restarts with other ranks: a bad early choice is rarely
# undone by backing up, so many short searches beat one long one.
_BACKTRACKS = 500

# Spread (log-normal sigma) of the random factors that perturb the ranks between restarts.
_NOISE = 0.3

# The first capacity tried, over the lower bound; each success then aims this much lower.
_FIRST_TARGET = 1.049
_STEP = 0.002


@njit(cache=True)
def _lowest_step(sky, remaining, floor):
    """The leftmost step some unplaced buffer needs where max(skyline, floor) is lowest."""
    low = -1
    for t in range(sky.shape[0]):
        if remaining[t] > 0 and (low < 0 or max(sky[t], floor) < max(sky[low], floor)):
            low = t
    return low


@njit(cache=True)
def _candidates(step, first, last, size, rank, placed, out):
    """Unplaced buffers live at `step` into `out`, by rank, one per (lifetime, size)."""
    count = 0
    for b in range(first.shape[0]):
        if placed[b] or first[b] > step or last[b] < step:
            continue
        twin = -1
        for k in range(count):
            c = out[k]
            if first[c] == first[b] and last[c] == last[b] and size[c] == size[b]:
                twin = k
                break
        if twin >= 0:
            if rank[b] < rank[out[twin]]:  # interchangeable: keep the better ranked one
                out[twin] = b
            continue
        out[count] = b
        count += 1
    for k in range(1, count):  # insertion sort by rank: few buffers are live at one step
        b = out[k]
        q = k
        while q > 0 and rank[out[q - 1]] > rank[b]:
            out[q] = out[q - 1]
            q -= 1
        out[q] = b
    return count


@njit(cache=True)
def _fits(sky, remaining, floor, capacity):
    """Whether at every needed step the unplaced bytes still fit above max(skyline, floor)."""
    for t in range(sky.shape[0]):
        if remaining[t] > 0 and max(sky[t], floor) + remaining[t] > capacity:
            return False
    return True


@njit(cache=True)
def _grown(pool, needed):
    """A copy of `pool` with room for at least `needed` entries (doubling, so growth is rare)."""
    grown = np.empty(max(needed, 2 * pool.shape[0]), np.int64)
    grown[:pool.shape[0]] = pool
    return grown


@njit(cache=True)
def _offset(b, first, last, sky, floor):
    """Where buffer b would go: the highest skyline over its lifetime, at least `floor`."""
    at = floor
    for t in range(first[b], last[b] + 1):
        at = max(at, sky[t])
    return at


@njit(cache=True, nogil=True)
def packing_within(size, first, last, rank, capacity, deadline, stop, limit):
    """Offsets of a packing no higher than `capacity`, and whether one was found (False also
    when `deadline` passed, `stop[0]` was set or the search backed up `limit` times first)."""
    n = size.shape[0]
    steps = 0
    for i in range(n):
        steps = max(steps, last[i] + 1)
    sky = np.zeros(steps, np.int64)
    remaining = np.zeros(steps, np.int64)  # bytes of unplaced buffers live at each step
    for i in range(n):
        for t in range(first[i], last[i] + 1):
            remaining[t] += size[i]
    offset = np.zeros(n, np.int64)
    if not _fits(sky, remaining, 0, capacity):
        return offset, False
    placed = np.zeros(n, np.bool_)
    # One frame per decision: the floor before it, its step, candidates (pool[base:base+count])
    # and the branch it is on (count: no candidate rests on this step's floor, so raise it);
    # saved[...] keeps the skyline the branch covered.
    frames = n + 16 * steps + 1  # raises lift one step each, so few per step
    floor_of = np.zeros(frames, np.int64)
    step_of = np.zeros(frames, np.int64)
    base_of = np.zeros(frames, np.int64)
    count_of = np.zeros(frames, np.int64)
    branch_of = np.zeros(frames, np.int64)
    pool = np.empty(4 * n, np.int64)  # grows as frames need: at most n candidates each
    spans = 0
    for i in range(n):
        spans += last[i] - first[i] + 1
    saved = np.empty(spans + frames, np.int64)  # every buffer's span once, one step per raise
    saved_at = np.zeros(frames + 1, np.int64)
    depth = 0
    placed_count = 0
    nodes = 0
    backtracks = 0
    descend = True
    while True:
        if descend:
            if placed_count == n:
                return offset, True
            nodes += 1
            if nodes % _NODES_PER_CLOCK == 0 and (stop[0] or _clock() > deadline):
                return offset, False
            if depth + 1 >= frames:  # raised too often: give this try up
                return offset, False
            floor = floor_of[depth]
            step = _lowest_step(sky, remaining, floor)
            step_of[depth] = step
            base = base_of[depth]
            if base + n > pool.shape[0]:
                pool = _grown(pool, base + n)
            count_of[depth] = _candidates(step, first, last, size, rank, placed,
                                          pool[base:base + n])
            branch_of[depth] = -1
        d = depth
        floor = floor_of[d]
        step = step_of[d]
        branch = branch_of[d]
        if branch >= 0 and branch < count_of[d]:  # undo the placement this frame is on
            b = pool[base_of[d] + branch]
            placed[b] = False
            placed_count -= 1
            for t in range(first[b], last[b] + 1):
                sky[t] = saved[saved_at[d] + t - first[b]]
                remaining[t] += size[b]
        level = max(sky[step], floor)
        branch += 1
        descend = False
        while branch < count_of[d]:
            b = pool[base_of[d] + branch]
            at = _offset(b, first, last, sky, floor)
            # Only buffers resting on this step's floor: higher ones come after a raise.
            if at == level and at + size[b] <= capacity:
                placed[b] = True
                placed_count += 1
                offset[b] = at
                for t in range(first[b], last[b] + 1):
                    saved[saved_at[d] + t - first[b]] = sky[t]
                    sky[t] = at + size[b]
                    remaining[t] -= size[b]
                if _fits(sky, remaining, at, capacity):
                    descend = True
                    break
                placed[b] = False
                placed_count -= 1
                for t in range(first[b], last[b] + 1):
                    sky[t] = saved[saved_at[d] + t - first[b]]
                    remaining[t] += size[b]
            branch += 1
        branch_of[d] = branch
        if descend:
            floor_of[d + 1] = at
            base_of[d + 1] = base_of[d] + count_of[d]
            saved_at[d + 1] = saved_at[d] + last[b] - first[b] + 1
            depth += 1
            continue
        if branch == count_of[d]:
            # No buffer rests on this floor here: raise it to the lowest offset one can take.
            rise = -1
            for k in range(count_of[d]):
                at = _offset(pool[base_of[d] + k], first, last, sky, floor)
                if at > level and (rise < 0 or at < rise):
                    rise = at
            if rise >= 0:
                saved[saved_at[d]] = sky[step]
                sky[step] = rise
                if _fits(sky, remaining, floor, capacity):
                    floor_of[d + 1] = floor
                    base_of[d + 1] = base_of[d] + count_of[d]
                    saved_at[d + 1] = saved_at[d] + 1
                    depth += 1
                    descend = True
                    continue
                sky[step] = saved[saved_at[d]]
        elif branch == count_of[d] + 1:  # undo the raise
            sky[step] = saved[saved_at[d]]
        if branch < count_of[d] + 1:
            branch_of[d] = count_of[d] + 1
        backtracks += 1
        if depth == 0 or backtracks > limit:
            return offset, False
        depth -= 1


@njit(cache=True, nogil=True)
def _restarts(size, first, last, capacity, deadline, seed, stop):
    """Short searches under `capacity` until one succeeds (and sets `stop[0]`), `deadline`
    passes or `stop[0]` is set; each ranks largest area first, by randomly perturbed areas
    after the first. Offsets and whether a packing was found."""
    np.random.seed(seed)
    n = size.shape[0]
    area = np.empty(n, np.float64)
    for i in range(n):
        area[i] = size[i] * (last[i] - first[i] + 1.0)
    rank = np.empty(n, np.int64)
    tries = 0
    while not stop[0] and _clock() < deadline:
        key = -area.copy()
        if tries > 0 or seed > 0:
            for i in range(n):
                key[i] *= np.exp(_NOISE * np.random.randn())
        rank[np.argsort(key, kind="mergesort")] = np.arange(n)
        tries += 1
        offset, found = packing_within(size, first, last, rank, capacity, deadline, stop,
                                       _BACKTRACKS)
        if found:
            stop[0] = 1
            return offset, True
    return np.zeros(n, np.int64), False


def exact_offsets(size: np.ndarray, first: np.ndarray, last: np.ndarray, bound: int,
                  patience: float, deadline: float) -> tuple[np.ndarray, int] | None:
    """The lowest packing found before `deadline` (perf_counter time) with its height, or None.

    Searches a capacity a little above `bound` on every core (other random ranks on each) for at
    most `patience` seconds, then lower ones while they keep succeeding, for twice that each.
    """
    size, first, last = (np.ascontiguousarray(a, dtype=np.int64) for a in (size, first, last))
    workers = os.cpu_count() or 1
    best = None
    capacity = int(bound * _FIRST_TARGET)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while capacity >= bound and time.perf_counter() < deadline:
            stop = np.zeros(1, dtype=np.int64)
            # A capacity that takes long is rarely met at all: the time is better spent elsewhere
            # (twice as long once one was met, as the search then suits this trace).
            until = min(time.perf_counter() + patience * (1 if best is None else 2), deadline)
            runs = pool.map(lambda k: _restarts(size, first, last, capacity, until, k, stop),
                            range(workers))
            found = [offset for offset, ok in runs if ok]
            if not found:
                break
            height = int((found[0] + size).max())
            best = (found[0], height)
            capacity = min(height - 1, max(bound, int(bound * (height / bound - _STEP))))
    return best
