"""Per-step bookkeeping of the interval placer as one segment tree over steps, with range updates.

For the placed buffers alive at each step t, the interval placer (`dense_kernels`) keeps three
numbers: `ceiling` (the highest end), `held` (the bytes they hold: they are pairwise disjoint,
so `ceiling - held` is the free bytes below the ceiling) and `prefix` (an offset below which
every byte is taken). A request of `need` bytes over steps [s, e] reads, over those steps, the
highest ceiling (`top`) and a `floor` below which nothing fits:

    floor = max over t in [s, e] of (ceiling[t] if ceiling[t] - held[t] < need else prefix[t])

and placing it at [at, end) adds `need` to `held`, raises `ceiling` to `end` and moves a
prefix that `at` continues (at <= prefix[t] < end) to `end`, over [s, e].

Done step by step, this costs the sum of all lifetimes (176M steps for idealloc's Y_1) twice
per packing. Here every node keeps the minimum and maximum of ceiling and prefix, the maximum of
held and the minimum of free bytes over its steps, and pending assignments (ceiling, prefix)
and a pending addition (held) for its children. An update stops at a node where it acts the
same on every step (every ceiling at most `end`, or none below it; every prefix continued, or
none), so placing a buffer on top of everything it meets costs O(log steps). The floor is a
branch and bound: a node whose highest ceiling cannot raise the floor is skipped, a node with
free bytes enough at every step gives its highest prefix, a node of one ceiling with a step too
full gives that ceiling. The answers are exactly the step-by-step ones.

One node is one row of `TREE_FIELDS` int64 values (one cache line); leaf t is row leaves + t.
"""

from __future__ import annotations

import numpy as np

from ._numba import njit

# The fields of one node.
MAX_CEILING, MIN_CEILING, MAX_HELD, MIN_FREE, MAX_PREFIX, MIN_PREFIX = 0, 1, 2, 3, 4, 5
# Pending for the children: an addition to held, and assignments stored as the value + 1 (0:
# none), so that an empty tree is all zeros and its pages are touched only when used.
ADD_HELD, SET_CEILING, SET_PREFIX = 6, 7, 8
TREE_FIELDS = 9


def floor_tree(leaves: int) -> np.ndarray:
    """An empty tree over `leaves` steps (a power of two): every step free, nothing held."""
    return np.zeros((2 * leaves, TREE_FIELDS), np.int64)


def stack_entries(leaves: int) -> int:
    """Rows of the int64 work stack the tree's walks need: three per level, and spare."""
    return 4 * (leaves.bit_length() + 2)


@njit(cache=True, nogil=True)
def _apply(tree, v, add, ceiling, prefix):
    """Add `add` to held on every step of node v, then assign `ceiling` and `prefix` where
    they are not -1."""
    row = tree[v]
    row[MAX_HELD] += add
    row[ADD_HELD] += add
    if ceiling >= 0:
        row[MAX_CEILING] = ceiling
        row[MIN_CEILING] = ceiling
        row[MIN_FREE] = ceiling - row[MAX_HELD]
        row[SET_CEILING] = ceiling + 1
    else:
        row[MIN_FREE] -= add
    if prefix >= 0:
        row[MAX_PREFIX] = prefix
        row[MIN_PREFIX] = prefix
        row[SET_PREFIX] = prefix + 1


@njit(cache=True, nogil=True)
def _push(tree, v):
    """Hand node v's pending changes to its children."""
    row = tree[v]
    if row[ADD_HELD] != 0 or row[SET_CEILING] > 0 or row[SET_PREFIX] > 0:
        _apply(tree, 2 * v, row[ADD_HELD], row[SET_CEILING] - 1, row[SET_PREFIX] - 1)
        _apply(tree, 2 * v + 1, row[ADD_HELD], row[SET_CEILING] - 1, row[SET_PREFIX] - 1)
        row[ADD_HELD] = 0
        row[SET_CEILING] = 0
        row[SET_PREFIX] = 0


@njit(cache=True, nogil=True)
def _pull(tree, v):
    """Node v's summary from its children's."""
    row, left, right = tree[v], tree[2 * v], tree[2 * v + 1]
    row[MAX_CEILING] = max(left[MAX_CEILING], right[MAX_CEILING])
    row[MIN_CEILING] = min(left[MIN_CEILING], right[MIN_CEILING])
    row[MAX_HELD] = max(left[MAX_HELD], right[MAX_HELD])
    row[MIN_FREE] = min(left[MIN_FREE], right[MIN_FREE])
    row[MAX_PREFIX] = max(left[MAX_PREFIX], right[MAX_PREFIX])
    row[MIN_PREFIX] = min(left[MIN_PREFIX], right[MIN_PREFIX])


@njit(cache=True, nogil=True)
def _put(stack, depth, v, low, high):
    """Stack row `depth`: node v, which covers steps [low, high]."""
    stack[depth, 0] = v
    stack[depth, 1] = low
    stack[depth, 2] = high


@njit(cache=True, nogil=True)
def floor_query(tree, leaves, s, e, need, stack):
    """(top, floor) of a request of `need` bytes over steps [s, e], as the module says;
    `stack` is an int64 array of `stack_entries(leaves)` rows of 3."""
    top = 0
    floor = 0
    _put(stack, 0, 1, 0, leaves - 1)
    depth = 1
    while depth > 0:
        depth -= 1
        v, low, high = stack[depth, 0], stack[depth, 1], stack[depth, 2]
        if high < s or low > e:
            continue
        row = tree[v]
        if s <= low and high <= e:
            if row[MAX_CEILING] > top:
                top = row[MAX_CEILING]
            if row[MAX_CEILING] <= floor:
                continue
            if row[MIN_FREE] >= need:  # no step too full: the prefixes bound it
                if row[MAX_PREFIX] > floor:
                    floor = row[MAX_PREFIX]
                continue
            if row[MIN_CEILING] == row[MAX_CEILING]:  # one ceiling, and a step too full
                floor = row[MAX_CEILING]
                continue
        _push(tree, v)
        middle = (low + high) >> 1
        left, right = 2 * v, 2 * v + 1
        # The child of the higher ceiling goes on top, so that it raises the floor first.
        if tree[left, MAX_CEILING] > tree[right, MAX_CEILING]:
            _put(stack, depth, right, middle + 1, high)
            _put(stack, depth + 1, left, low, middle)
        else:
            _put(stack, depth, left, low, middle)
            _put(stack, depth + 1, right, middle + 1, high)
        depth += 2
    return top, floor


@njit(cache=True, nogil=True)
def floor_update(tree, leaves, s, e, at, end, stack):
    """Record a buffer placed at [at, end) over steps [s, e]; `stack` as `floor_query`'s.

    A node is finished when the change acts alike on all its steps; otherwise its pending
    changes go to its children, they are visited, and it is summarised again after them
    (a stack row with a negative node stands for that second visit)."""
    need = end - at
    _put(stack, 0, 1, 0, leaves - 1)
    depth = 1
    while depth > 0:
        depth -= 1
        v, low, high = stack[depth, 0], stack[depth, 1], stack[depth, 2]
        if v < 0:
            _pull(tree, -v)
            continue
        if high < s or low > e:
            continue
        row = tree[v]
        if s <= low and high <= e:
            if row[MIN_CEILING] >= end:
                ceiling = -1
            elif row[MAX_CEILING] <= end:
                ceiling = end
            else:
                ceiling = -2  # mixed
            if row[MAX_PREFIX] < at or row[MIN_PREFIX] >= end:
                prefix = -1
            elif row[MIN_PREFIX] >= at and row[MAX_PREFIX] < end:
                prefix = end
            else:
                prefix = -2
            if ceiling != -2 and prefix != -2:
                _apply(tree, v, need, ceiling, prefix)
                continue
        _push(tree, v)
        middle = (low + high) >> 1
        _put(stack, depth, -v, low, high)
        _put(stack, depth + 1, 2 * v, low, middle)
        _put(stack, depth + 2, 2 * v + 1, middle + 1, high)
        depth += 3
