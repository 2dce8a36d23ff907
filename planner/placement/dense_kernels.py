"""First fit and best fit at real density: thousands of placed buffers beside each request.

Two placement kernels, both exact (the same offsets as `traced_placement.place`):

- `IntervalPlacer`, for interval lifetimes (the serial model, or a DAG with one order). Placed
  buffers are kept in two segment trees over steps, their spans stored in one contiguous
  array of (start, end) pairs: the lifetime tree holds each buffer on the nodes that tile its lifetime (a
  walk from a leaf to the root finds every placed buffer alive at a step), the start tree on
  every node above its first step (the nodes that tile a step range find every placed buffer
  starting inside it). A request conflicts with the buffers alive at its first step and those
  starting later in its lifetime, so with the spans of about three nodes per level.
- `BitsetPlacer`, for any conflict model: conflict sets as rows of 64-bit words, ANDed with the
  placed set word by word.

The interval kernel never visits conflicting buffers one by one. Each node keeps the union of
its buffers' spans as sorted runs, merging those that touch: a request conflicts with every
buffer of a node it reads, so an offset one of them takes is ruled out whichever it is, and
first fit packs tightly, so a node of thousands of buffers holds a few hundred runs. A start
tree node holds its children's runs, so an insert stops at the first node where one run already
covered the span. A cursor climbs from 0, jumping past every run that blocks it: each list is
searched by galloping from where the cursor left it, and walked while its runs block
(`_settle`); first fit stops where none does. Best fit must measure every gap that holds the
request: from first fit's gap up it merges the lists by start, the longest read directly and the
others through a tournament tree of their heads, walking a list on while its runs lie closer
together than the request (`_best_fit`).
Most of its lists are the lifetime tree's nodes on the request's path, so best fit keeps their
union, level by level, for the last path it merged (`_path_union`): a request near it rebuilds
only the levels below where the paths part, and reads the union as one list. First fit keeps
that cache too once its climbs are long, and reads it when a climb would read more than the
cache's rebuild: where long-lived buffers leave holes that buffers of other lifetimes fill, the
lists interleave run by run and the climb steps over each run in turn (`_first_fit`).
The bitset kernel gathers its spans and buckets them instead (`lowest_gap`).

Kernels work in chunks of about `CHUNK_PAIRS` conflicting pairs and return, so the caller can
poll a cancel token or a stop flag between chunks (each chunk takes a few milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..support._numba import njit
from ..support.cancel import NEVER, CancelToken

FIRST_FIT, BEST_FIT = 0, 1

# A list key that no span start reaches: the list is exhausted.
_NONE = np.iinfo(np.int64).max

# Conflicting pairs (or runs) visited between two looks at the cancel token or stop flag.
CHUNK_PAIRS = 1 << 23

# Requests an interval chunk places at most: a long request's climb is counted in entries
# read, its inserts are not, so a chunk also ends by count (a few milliseconds).
CHUNK_REQUESTS = 1024

# Best fit keeps the union of the lifetime tree's nodes on one leaf's path, level by level, when
# that takes at most this many bytes (levels x the most buffers alive at one step x 16). First
# fit keeps it only once a climb is long, and then up to as many bytes as the trees' spans.
PATH_CACHE_BYTES = 64 << 20
# The cache's lowest level: nodes below it cover a few steps each and hold few runs, but every
# level of the cache holds the whole path's union, so rebuilding one at each new leaf cost more
# (900 runs merged per request on a 200k-row dense trace) than reading those nodes one by one.
_CACHE_FLOOR = 5
# Entries a first fit climb reads at most without the path cache (dense generated traces of
# 2,525 buffers alive at once read under 10,000, 400 on average): past it, the lists
# interleave run by run.
_LONG_CLIMB = 1 << 15
# A request far from the cached path (leaving it in the top this many levels) and from the last
# request (leaving its path below this many) merges the nodes themselves, and the cache stays for
# the requests around it; any other rebuilds the cache from the level its path leaves it.
_FAR_LEVELS = 8
_NEAR_LEVELS = 4

# Spans (or bucket members) up to this many are sorted by comparison; more by buckets or radix.
_SMALL_SORT = 32


@njit(cache=True, nogil=True)
def _radix_rank(lo, members, spare, base):
    """`members` (indices into lo) ordered by lo (stable), by LSD radix sort on lo - base in
    bytes: as fast on clustered offsets as on spread ones. Returns the array holding them."""
    top = 0
    for k in range(members.shape[0]):
        if lo[members[k]] - base > top:
            top = lo[members[k]] - base
    counts = np.empty(256, np.int64)
    shift = 0
    while (top >> shift) > 0:
        counts[:] = 0
        for k in range(members.shape[0]):
            counts[((lo[members[k]] - base) >> shift) & 255] += 1
        total = 0
        for d in range(256):
            c = counts[d]
            counts[d] = total
            total += c
        for k in range(members.shape[0]):
            j = members[k]
            d = ((lo[j] - base) >> shift) & 255
            spare[counts[d]] = j
            counts[d] += 1
        members, spare = spare, members
        shift += 8
    return members


@njit(cache=True, nogil=True)
def _insertion_rank(lo, members):
    """Order `members` (indices into lo) by lo in place, stably: for a few members."""
    for k in range(1, members.shape[0]):
        j = members[k]
        q = k
        while q > 0 and lo[members[q - 1]] > lo[j]:
            members[q] = members[q - 1]
            q -= 1
        members[q] = j


@njit(cache=True, nogil=True)
def _pass(s, h, size, fit, state):
    """`_sweep` over the one span [s, h)."""
    cursor = state[0]
    if s > cursor:
        gap = s - cursor
        if gap >= size:
            if fit == FIRST_FIT:
                return True
            if state[1] < 0 or gap < state[2]:
                state[1] = cursor
                state[2] = gap
    if h > cursor:
        state[0] = h
    return False


@njit(cache=True, nogil=True)
def _sweep(lo, hi, ranked, count, size, fit, state):
    """Pass spans ranked[:count] (by start) with (cursor, best gap start, its length) in
    `state`; True when first fit stops at state[0]."""
    cursor = state[0]
    for k in range(count):
        j = ranked[k]
        s = lo[j]
        if s > cursor:
            gap = s - cursor
            if gap >= size:
                if fit == FIRST_FIT:
                    state[0] = cursor
                    return True
                if state[1] < 0 or gap < state[2]:
                    state[1] = cursor
                    state[2] = gap
        if hi[j] > cursor:
            cursor = hi[j]
    state[0] = cursor
    return False


@njit(cache=True, nogil=True)
def lowest_gap(lo, hi, count, size, fit, scratch, floor=0):
    """The offset for `size` bytes clear of spans [lo[k], hi[k]) for k < count: the lowest
    (first fit) or the start of the smallest gap that holds it, lowest first (best fit), else
    the top; none below `floor` (where the caller knows nothing fits). `scratch` is an int64
    array of at least `scratch_entries(count)` entries.

    Spans go to about one bucket each by their leading bits of start (one pass); buckets are
    then swept in order and sorted only when reached, so first fit stops early. Where a bucket is no
    wider than the request, only its lowest start and highest end matter (a gap inside it is
    too narrow), and nothing is moved at all.
    """
    state = scratch[:3]
    state[0] = floor
    state[1] = -1
    state[2] = 0
    if count <= _SMALL_SORT:
        _sweep(lo, hi, np.argsort(lo[:count]), count, size, fit, state)
    else:
        buckets = _buckets_for(count)
        base, shift = _bucket_shift(lo, count, buckets)
        counts = scratch[3:4 + buckets]
        low = scratch[4 + buckets:4 + 2 * buckets]
        high = scratch[4 + 2 * buckets:4 + 3 * buckets]
        ranked = scratch[4 + 3 * buckets:4 + 3 * buckets + count]
        spare = scratch[4 + 3 * buckets + count:4 + 3 * buckets + 2 * count]
        counts[:] = 0
        low[:] = -1
        high[:] = 0
        for k in range(count):
            b = (lo[k] - base) >> shift
            counts[b + 1] += 1
            if low[b] < 0 or lo[k] < low[b]:
                low[b] = lo[k]
            if hi[k] > high[b]:
                high[b] = hi[k]
        narrow = (1 << shift) <= size
        if not narrow:
            for b in range(buckets):
                counts[b + 1] += counts[b]
            for k in range(count):  # counting sort by bucket; `counts` ends shifted by one
                b = (lo[k] - base) >> shift
                ranked[counts[b]] = k
                counts[b] += 1
        end = 0
        for b in range(buckets):
            begin = end
            end = counts[b]
            if low[b] < 0:
                continue
            if narrow or end - begin == 1:
                if _pass(low[b], high[b], size, fit, state):
                    break
                continue
            members = ranked[begin:end]
            if end - begin <= _SMALL_SORT:
                _insertion_rank(lo, members)
            else:
                members = _radix_rank(lo, members, spare[:end - begin], base)
            if _sweep(lo, hi, members, end - begin, size, fit, state):
                break
    if fit == FIRST_FIT or state[1] < 0:
        return state[0]
    return state[1]


@njit(cache=True, nogil=True, inline="always")
def _bucket_shift(lo, count, buckets):
    """(base, shift) that spread the starts lo[:count] (at least one) over `buckets` buckets:
    start x goes to bucket (x - base) >> shift."""
    base = lo[0]
    top = lo[0]
    for k in range(count):
        if lo[k] < base:
            base = lo[k]
        if lo[k] > top:
            top = lo[k]
    shift = 0
    while (top - base) >> shift >= buckets:
        shift += 1
    return base, shift


@njit(cache=True, nogil=True)
def _buckets_for(count):
    """Buckets by start for `count` spans: about one per span, 256 to 65,536."""
    buckets = 256
    while buckets < count and buckets < 65_536:
        buckets *= 2
    return buckets


def scratch_entries(count: int) -> int:
    """The scratch `lowest_gap` needs for up to `count` spans."""
    return 4 + 3 * _buckets_for(count) + 2 * count


# -- interval lifetimes -------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _tree_capacity(first, last, leaves):
    """Per node (heap layout: root 1, leaf t at leaves + t), how many spans the lifetime tree
    and the start tree can hold there (the start tree's runs are at most the buffers starting
    under the node): CSR starts over nodes, one array each."""
    nodes = 2 * leaves
    cover = np.zeros(nodes + 1, np.int64)
    point = np.zeros(nodes + 1, np.int64)
    for i in range(first.shape[0]):
        a = first[i] + leaves
        b = last[i] + leaves + 1
        while a < b:
            if a & 1:
                cover[a + 1] += 1
                a += 1
            if b & 1:
                b -= 1
                cover[b + 1] += 1
            a >>= 1
            b >>= 1
        v = first[i] + leaves
        while v >= 1:
            point[v + 1] += 1
            v >>= 1
    for v in range(nodes):
        cover[v + 1] += cover[v]
        point[v + 1] += point[v]
    return cover, point


@njit(cache=True, nogil=True)
def _unite(base, fill, run_lo, run_hi, v, at, end):
    """Add [at, end) to node `v`'s runs: sorted, pairwise disjoint and not touching (an empty
    span is a run of its own only where no run reaches it). Runs it touches merge with it.
    True when one run already held it (nothing changed)."""
    b0 = base[v]
    top = b0 + fill[v]
    low, high = b0, top
    while low < high:  # the first run ending at or above `at`
        mid = (low + high) >> 1
        if run_hi[mid] < at:
            low = mid + 1
        else:
            high = mid
    k = low
    joined_lo, joined_hi = at, end
    while k < top and run_lo[k] <= end:
        if run_lo[k] < joined_lo:
            joined_lo = run_lo[k]
        if run_hi[k] > joined_hi:
            joined_hi = run_hi[k]
        k += 1
    merged = k - low
    if merged == 1 and joined_lo == run_lo[low] and joined_hi == run_hi[low]:
        return True
    if merged == 0:  # a run of its own: shift those above up by one
        for q in range(top, low, -1):
            run_lo[q] = run_lo[q - 1]
            run_hi[q] = run_hi[q - 1]
        fill[v] += 1
    elif merged > 1:  # it bridges runs: close up those above
        gone = merged - 1
        for q in range(k, top):
            run_lo[q - gone] = run_lo[q]
            run_hi[q - gone] = run_hi[q]
        fill[v] -= gone
    run_lo[low] = joined_lo
    run_hi[low] = joined_hi
    return False


@njit(cache=True, nogil=True)
def _first_above(keys, first, end, cursor):
    """The first index k in [first, end) with keys[k] > cursor (keys ascending), else end:
    galloping from `first`, since the answer is usually near it."""
    if first >= end or keys[first] > cursor:
        return first
    step = 1
    low = first  # keys[low] <= cursor
    while low + step < end and keys[low + step] <= cursor:
        low += step
        step <<= 1
    high = min(low + step, end)  # keys[high] > cursor, or high == end
    low += 1
    while low < high:
        mid = (low + high) >> 1
        if keys[mid] > cursor:
            high = mid
        else:
            low = mid + 1
    return low


@njit(cache=True, nogil=True, inline="always")
def _window(need):
    """The bytes above the cursor that must be clear for a request of `need`: an empty request
    still needs a gap of at least one byte, as in `lowest_gap`."""
    return need if need > 0 else 1


@njit(cache=True, nogil=True, inline="always")
def _settle(cursor, window, lists, heads, tails, span_lo, span_hi, limit=_NONE):
    """Jump the cursor past every span in the nodes' lists (heads[:lists] to tails, each
    sorted and disjoint) that blocks offsets [cursor, cursor + window), until none does:
    (cursor, entries read). The lists are visited in turn, and in each the cursor climbs
    over the spans that block it one after another; it stops once every list still holding a
    span above the cursor was visited since the cursor last moved. Each head ends at its
    list's first span ending above the cursor (an exhausted list is left empty). Past
    `limit` entries read (looked at after each round over the lists) it gives up: (-1,
    entries read)."""
    read = 0
    live = 0
    for q in range(lists):
        if heads[q] < tails[q]:
            live += 1
    quiet = 0  # lists visited in a row without moving the cursor
    q = 0
    while quiet < live:
        if q == lists:  # a round over the lists: a look at the limit each
            if read > limit:
                return -1, read
            q = 0
        end = tails[q]
        if heads[q] == end:
            q += 1
            continue
        above = _first_above(span_hi, heads[q], end, cursor)
        h = above
        while h < end and span_lo[h] - cursor < window:  # the next span ends higher still
            cursor = span_hi[h]
            h += 1
        moved = h > above
        read += h - heads[q] + 1
        heads[q] = h
        if moved:
            quiet = 0
        if h == end:
            live -= 1
        elif not moved:
            quiet += 1
        q += 1
    return cursor, read


@njit(cache=True, nogil=True)
def _best_fit(need, lists, heads, tails, span_lo, span_hi, keys, tree):
    """The start of the smallest gap that holds `need` bytes among the spans in the nodes'
    lists (heads[:lists] to tails, each sorted and disjoint), the lowest of equal gaps, else
    the top; (offset, entries read). `keys` and `tree` are scratch of `_tree_leaves(lists)`
    and three times as many entries.

    First fit's climb (`_settle`) reaches the lowest gap that holds the request; from there
    the lists are merged by start. The list with the most spans left (the path cache, where
    there is one) is read directly; the others through a tournament tree of their heads.
    The lowest head either lies wholly below the cursor (its list gallops to its first span
    ending above it) or closes a gap (measured when it holds the request) or blocks the
    cursor; the cursor then moves to its end, and on along the same list while that list's
    next span starts too close above the cursor for the request to fit between: a gap
    narrower than the request is no candidate, whatever the other lists hold there. A gap of
    exactly the request's size ends the search: none is smaller, and this one is the lowest
    of its size."""
    window = _window(need)
    cursor, read = _settle(0, window, lists, heads, tails, span_lo, span_hi)
    best = -1
    best_gap = 0
    if lists == 0:
        return cursor, read
    # The longest list goes last, out of the tournament over the others.
    main = 0
    for q in range(1, lists):
        if tails[q] - heads[q] > tails[main] - heads[main]:
            main = q
    others = lists - 1
    heads[main], heads[others] = heads[others], heads[main]
    tails[main], tails[others] = tails[others], tails[main]
    p = heads[others]
    p_end = tails[others]
    leaves = _tree_leaves(others)
    losers = tree[:leaves]  # losers[v]: the list that lost the match at node v (v >= 1)
    winners = tree[leaves:]  # winners[v]: the list that won it (leaves at leaves + q)
    for q in range(leaves):
        keys[q] = span_lo[heads[q]] if q < others and heads[q] < tails[q] else _NONE
        winners[leaves + q] = q
    for v in range(leaves - 1, 0, -1):
        a = winners[2 * v]
        b = winners[2 * v + 1]
        if keys[b] < keys[a]:
            winners[v], losers[v] = b, a
        else:
            winners[v], losers[v] = a, b
    top = winners[1] if leaves > 1 else 0
    # Each loser's key beside it (in the winners' rows, free now): a replay reads one row a
    # level, not a row and then the key it names.
    loser_keys = tree[leaves:2 * leaves]
    for v in range(1, leaves):
        loser_keys[v] = keys[losers[v]]
    while True:
        # The main list's spans up to the lowest other head, and on while they lie closer
        # together than the request.
        below = keys[top]
        while p < p_end:
            lo = span_lo[p]
            if lo > below and lo - cursor >= window:
                break
            if span_hi[p] <= cursor:
                p = _first_above(span_hi, p, p_end, cursor)
                read += 1
                continue
            gap = lo - cursor
            if gap >= window:
                if best < 0 or gap < best_gap:
                    best = cursor
                    best_gap = gap
                    if gap == need:
                        return best, read
            cursor = span_hi[p]
            p += 1
            read += 1
        if below == _NONE:
            break
        q = top
        h = heads[q]
        end = tails[q]
        read += 1
        if span_hi[h] <= cursor:  # wholly below the cursor: find the list's next span above
            h = _first_above(span_hi, h, end, cursor)
            # One that reaches down to the cursor closes no gap, so it blocks now, before any
            # head above the cursor, without a second match.
            blocks = h < end and span_lo[h] <= cursor
        else:
            gap = span_lo[h] - cursor
            if gap >= window:  # it closes a gap that holds the request
                if best < 0 or gap < best_gap:
                    best = cursor
                    best_gap = gap
                    if gap == need:
                        return best, read
            blocks = True
        if blocks:
            cursor = span_hi[h]
            h += 1
            while h < end and span_lo[h] - cursor < window:
                cursor = span_hi[h]
                h += 1
                read += 1
        heads[q] = h
        key = span_lo[h] if h < end else _NONE
        keys[q] = key
        # Replay q's matches from its leaf up; the last winner is the lowest head.
        v = (leaves + q) >> 1
        while v >= 1:
            if loser_keys[v] < key:
                losers[v], q = q, losers[v]
                loser_keys[v], key = key, loser_keys[v]
            v >>= 1
        top = q
    if best >= 0:
        return best, read
    return cursor, read


@njit(cache=True, nogil=True, inline="always")
def _tree_leaves(lists):
    """The leaves of a tournament tree over `lists` lists: a power of two, at least one."""
    leaves = 1
    while leaves < lists:
        leaves <<= 1
    return leaves


@njit(cache=True, nogil=True)
def _merge_runs(a, a_end, b, b_end, span_lo, span_hi, out):
    """Write the union of the runs at rows [a, a_end) and [b, b_end) (each sorted, disjoint
    and not touching) from row `out` on, merged as `_unite` merges them; the runs written."""
    k = out
    have = False
    run_lo = 0
    run_hi = 0
    while a < a_end or b < b_end:
        if b == b_end or (a < a_end and span_lo[a] <= span_lo[b]):
            lo = span_lo[a]
            hi = span_hi[a]
            a += 1
        else:
            lo = span_lo[b]
            hi = span_hi[b]
            b += 1
        if have and lo <= run_hi:
            if hi > run_hi:
                run_hi = hi
        else:
            if have:
                span_lo[k] = run_lo
                span_hi[k] = run_hi
                k += 1
            run_lo = lo
            run_hi = hi
            have = True
    if have:
        span_lo[k] = run_lo
        span_hi[k] = run_hi
        k += 1
    return k - out


@njit(cache=True, nogil=True)
def _path_union(s, leaves, cover_base, cover_fill, span_lo, span_hi, path_base, path_fill,
                path_node):
    """Best fit's path cache for a request at leaf s: level l (from `_cache_floor` up) holds
    the union, as runs, of the lifetime tree's nodes on one leaf's path from level l up to the
    root (path_node[l] names the node at level l it was built for; path_node[-1], the leaf last
    asked; inserts since keep every level whole). The levels still built for leaf s's
    ancestors are kept; below them, down to the floor, the cache is rebuilt level by level,
    each merged from the one above, unless leaf s
    is far from the cached path and from the last leaf asked (it then likely sits apart from
    the requests around it, which the cache keeps serving). (entries read, the lowest level
    that now serves leaf s: the nodes below it are read one by one.)"""
    levels = path_base.shape[0]
    floor = _cache_floor(levels)
    level = levels - 1
    while level >= 0 and path_node[level] == (s + leaves) >> level:
        level -= 1
    last = path_node[levels]
    path_node[levels] = s
    if level < floor:
        return 0, floor
    if level >= levels - _FAR_LEVELS and last >= 0 and (last ^ s) >> _NEAR_LEVELS != 0:
        return 0, level + 1
    read = 0
    while level >= floor:
        v = (s + leaves) >> level
        above = path_base[level + 1] if level + 1 < levels else path_base[level]
        above_end = above + (path_fill[level + 1] if level + 1 < levels else 0)
        path_fill[level] = _merge_runs(above, above_end, cover_base[v],
                                       cover_base[v] + cover_fill[v], span_lo, span_hi,
                                       path_base[level])
        path_node[level] = v
        read += above_end - above + cover_fill[v] + 1
        level -= 1
    return read, floor


@njit(cache=True, nogil=True, inline="always")
def _cache_floor(levels):
    """The path cache's lowest level in a tree of `levels` levels (at least one)."""
    return min(_CACHE_FLOOR, levels - 1)


@njit(cache=True, nogil=True, inline="always")
def _add_list(base, fill, v, lists, heads, tails):
    """Append node `v`'s spans, if any, to the lists; the new count of lists."""
    if fill[v] > 0:
        heads[lists] = base[v]
        tails[lists] = base[v] + fill[v]
        lists += 1
    return lists


@njit(cache=True, nogil=True, inline="always")
def _gather(s, e, served, leaves, cover_base, cover_fill, run_base, run_fill, path_base,
            path_fill, heads, tails):
    """The lists a request over steps [s, e] reads: the path cache's level `served` (when it
    serves one), the lifetime tree's nodes on leaf s's path below it, and the start tree's
    nodes that tile (s, e]; how many."""
    lists = 0
    if served < path_base.shape[0]:
        lists = _add_list(path_base, path_fill, served, lists, heads, tails)
    v = s + leaves
    level = 0
    while v >= 1 and level < served:
        lists = _add_list(cover_base, cover_fill, v, lists, heads, tails)
        v >>= 1
        level += 1
    a = s + 1 + leaves
    b = e + leaves + 1
    while a < b:
        if a & 1:
            lists = _add_list(run_base, run_fill, a, lists, heads, tails)
            a += 1
        if b & 1:
            b -= 1
            lists = _add_list(run_base, run_fill, b, lists, heads, tails)
        a >>= 1
        b >>= 1
    return lists


@njit(cache=True, nogil=True)
def _rebuild_cost(s, leaves, cover_fill, path_fill, path_node):
    """About the entries `_path_union` reads to serve leaf s: each level it rebuilds copies
    the union above it (about as large as the lowest level kept) and merges its node. Records
    s as the leaf last asked, so that the cache, when then asked, serves s whatever its
    distance from the cached path (first fit asks it only when that pays)."""
    levels = path_fill.shape[0]
    level = levels - 1
    while level >= 0 and path_node[level] == (s + leaves) >> level:
        level -= 1
    path_node[levels] = s
    kept = path_fill[level + 1] if level + 1 < levels else 0
    cost = 0
    while level >= _cache_floor(levels):
        cost += kept + cover_fill[(s + leaves) >> level] + 1
        level -= 1
    return cost


@njit(cache=True, nogil=True, inline="always")
def _first_fit(s, e, need, leaves, cover_base, cover_fill, run_base, run_fill, span_lo,
               span_hi, heads, tails, path_base, path_fill, path_node):
    """First fit's offset for `need` bytes over steps [s, e] (as `_merged_fit`); (offset,
    entries read). It climbs the nodes' lists themselves (`_settle`). Without the path cache,
    a climb past `_LONG_CLIMB` entries gives up: (-1, entries read). With it, a climb past an
    eighth of what the cache would read to serve leaf s reads the cache instead (a rebuild
    merges runs in one pass; a climb costs more an entry), where the lifetime tree's nodes
    are one list: lists whose runs interleave (long-lived buffers with holes between them,
    the holes filled by buffers of other lifetimes) make the climb step over each run in
    turn, every list visited at each step."""
    window = _window(need)
    caching = path_base.shape[0] > 0
    limit = _LONG_CLIMB
    if caching:
        limit = (_rebuild_cost(s, leaves, cover_fill, path_fill, path_node) >> 3) + 64
    # Level 64, above the root: the nodes themselves.
    lists = _gather(s, e, 64, leaves, cover_base, cover_fill, run_base, run_fill, path_base,
                    path_fill, heads, tails)
    at, read = _settle(0, window, lists, heads, tails, span_lo, span_hi, limit)
    if at >= 0 or not caching:
        return at, read
    rebuilt, served = _path_union(s, leaves, cover_base, cover_fill, span_lo, span_hi,
                                  path_base, path_fill, path_node)
    lists = _gather(s, e, served, leaves, cover_base, cover_fill, run_base, run_fill,
                    path_base, path_fill, heads, tails)
    at, climbed = _settle(0, window, lists, heads, tails, span_lo, span_hi)
    return at, read + rebuilt + climbed


@njit(cache=True, nogil=True)
def _merged_fit(s, e, need, fit, leaves, cover_base, cover_fill, run_base, run_fill, span_lo,
                span_hi, heads, tails, keys, tree, path_base, path_fill, path_node):
    """The offset that `fit` gives `need` bytes clear of the placed buffers
    overlapping steps [s, e] (as `lowest_gap`); (offset, entries read).

    Those are the buffers alive at step s, on the lifetime tree's nodes from leaf s to the
    root, and those starting in (s, e], under the start tree's nodes that tile (s, e]. Each
    of these nodes holds a sorted list of disjoint spans: the buffers alive together at its
    steps, or the union of the buffers starting under it, merged into runs (an offset a run
    covers is taken at some step of the request's lifetime, whichever buffer takes it). First
    fit climbs over all these lists at once from 0 (`_first_fit`); best fit merges them
    (`_best_fit`), with the lifetime tree's nodes already merged into one list by the path
    cache when there is one (`_path_union`).
    """
    if fit == FIRST_FIT:
        return _first_fit(s, e, need, leaves, cover_base, cover_fill, run_base, run_fill,
                          span_lo, span_hi, heads, tails, path_base, path_fill, path_node)
    cached = 0
    served = 64  # the lowest level the path cache serves (without one: above the root)
    if path_base.shape[0] > 0:
        cached, served = _path_union(s, leaves, cover_base, cover_fill, span_lo, span_hi,
                                     path_base, path_fill, path_node)
    lists = _gather(s, e, served, leaves, cover_base, cover_fill, run_base, run_fill,
                    path_base, path_fill, heads, tails)
    at, read = _best_fit(need, lists, heads, tails, span_lo, span_hi, keys, tree)
    return at, read + cached


@njit(cache=True, nogil=True, inline="always")
def _path_insert(path_base, path_fill, path_node, level, v, span_lo, span_hi, at, end):
    """Add [at, end), just joined to node v at `level`, to the path cache's levels from its
    floor up to `level` when they were built over v (they hold v's runs); the entries moved,
    about."""
    moved = 0
    if level < path_base.shape[0] and path_node[level] == v:
        for below in range(_cache_floor(path_base.shape[0]), level + 1):
            moved += path_fill[below]
            _unite(path_base, path_fill, span_lo, span_hi, below, at, end)
    return moved


@njit(cache=True, nogil=True)
def _interval_chunk(order, begin, size, first, last, fit, leaves, cover_base, cover_fill,
                    run_base, run_fill, span_lo, span_hi, offset, heads, tails, keys, tree,
                    path_base, path_fill, path_node, pair_limit):
    """Place order[begin:] until about `pair_limit` entries were read; the index of the next
    request to place (order.shape[0] when done), or -1 - that index when first fit stopped
    there without the path cache, its climbs too long (`_first_fit`). Each placed span joins
    the runs of the lifetime tree's nodes that tile its lifetime and of the start tree's
    nodes above its first step, up to the first that already held it; and the path cache at
    every level built over a lifetime tree node it joins (`_path_insert`)."""
    visited = 0
    request = begin
    caching = path_base.shape[0] > 0
    # Without the path cache first fit's climbs are also long when they read past an eighth
    # of `_LONG_CLIMB` each on average over the chunk.
    averaged = fit == FIRST_FIT and not caching
    while request < order.shape[0] and visited < pair_limit and request - begin < CHUNK_REQUESTS:
        if averaged and visited > _LONG_CLIMB and visited > (_LONG_CLIMB >> 3) * (request - begin):
            return -1 - request
        i = order[request]
        s = first[i]
        e = last[i]
        need = size[i]
        at, read = _merged_fit(s, e, need, fit, leaves, cover_base, cover_fill, run_base,
                               run_fill, span_lo, span_hi, heads, tails, keys, tree,
                               path_base, path_fill, path_node)
        visited += read
        if at < 0:
            return -1 - request
        end = at + need
        offset[i] = at
        a = s + leaves
        b = e + leaves + 1
        level = 0
        while a < b:
            if a & 1:
                _unite(cover_base, cover_fill, span_lo, span_hi, a, at, end)
                if caching:
                    visited += _path_insert(path_base, path_fill, path_node, level, a,
                                            span_lo, span_hi, at, end)
                a += 1
            if b & 1:
                b -= 1
                _unite(cover_base, cover_fill, span_lo, span_hi, b, at, end)
                if caching:
                    visited += _path_insert(path_base, path_fill, path_node, level, b,
                                            span_lo, span_hi, at, end)
            a >>= 1
            b >>= 1
            level += 1
        # A node's runs hold its children's: once one held the span, so do those above.
        v = s + leaves
        while v >= 1 and not _unite(run_base, run_fill, span_lo, span_hi, v, at, end):
            v >>= 1
        visited += 1
        request += 1
    return request


def place_in_chunks(requests: int, stop: np.ndarray | None, cancel: CancelToken,
                    chunk: Callable[[int], int]) -> None:
    """Run `chunk(done)` (placing from request `done`, returning the next one to place) until
    all `requests` are placed; between two chunks, report progress to `cancel` (raising
    `Cancelled` once it is cancelled) and end early once `stop[0]` is set."""
    done = 0
    while done < requests:
        if stop is not None and stop[0]:
            break
        cancel.report("placement", done / requests)
        done = chunk(done)


class IntervalPlacer:
    """Offsets for request orders where buffers conflict when their [first, last] step ranges
    overlap; the trees' layout is computed once, their contents once per placement."""

    def __init__(self, size: np.ndarray, first: np.ndarray, last: np.ndarray):
        self.size = np.ascontiguousarray(size, dtype=np.int64)
        self.first = np.ascontiguousarray(first, dtype=np.int64)
        self.last = np.ascontiguousarray(last, dtype=np.int64)
        steps = int(self.last.max()) + 1 if len(self.last) else 1
        self.leaves = 1 << max(steps - 1, 0).bit_length()
        self.cover_base, run_base = _tree_capacity(self.first, self.last, self.leaves)
        # Both trees keep their spans in one array: the start tree's after the other's.
        self.run_base = run_base + self.cover_base[-1]
        # The path cache: one level per level of the tree from its floor up, each as many runs
        # as buffers are ever alive at one step, after the trees' spans (the levels below the
        # floor, never built, share the floor's rows; no more rows than the start tree's,
        # which holds every buffer on every level). Best fit keeps it when it takes at most
        # PATH_CACHE_BYTES, first fit from its first long climb (`_first_fit`).
        levels = self.leaves.bit_length()
        built = levels - int(_cache_floor(levels))
        live = (np.bincount(self.first, minlength=steps + 1)
                - np.bincount(self.last + 1, minlength=steps + 1))
        widest = int(np.cumsum(live).max()) if len(self.first) else 0
        self._best_fit_caches = built * (widest + 1) * 16 <= PATH_CACHE_BYTES
        self._path_rows = built * (widest + 1)
        self._path_base = int(self.run_base[-1]) + (widest + 1) * np.maximum(
            np.arange(levels, dtype=np.int64) - (levels - built), 0)

    def _arrays(self, caching: bool) -> tuple[np.ndarray, ...]:
        """The spans, by row, and the path cache's base, fill and node arrays (the node
        array's last entry: the leaf last asked), without a level unless `caching`."""
        path_base = self._path_base if caching else self._path_base[:0]
        path_fill = np.zeros(len(path_base), np.int64)
        path_node = np.full(len(path_base) + 1, -1, np.int64)
        # A span's start and end side by side: one cache line holds both.
        rows = int(self.run_base[-1]) + (self._path_rows if caching else 0)
        return np.empty((rows, 2), np.int64), path_base, path_fill, path_node

    def offsets(self, order: np.ndarray, fit: int = FIRST_FIT, stop: np.ndarray | None = None,
                cancel: CancelToken = NEVER) -> np.ndarray:
        """Each buffer's offset placing `order` with `fit`; ends early (offsets incomplete) once
        `stop[0]` is set, and raises `Cancelled` within one chunk of `cancel`."""
        order = np.ascontiguousarray(order, dtype=np.int64)
        n = len(self.size)
        nodes = 2 * self.leaves
        offset = np.zeros(n, np.int64)
        cover_fill, run_fill = np.zeros(nodes, np.int64), np.zeros(nodes, np.int64)
        arrays = self._arrays(fit == BEST_FIT and self._best_fit_caches)
        # A query reads the nodes on a path from a leaf to the root and up to two per level
        # that tile its other steps.
        depth = self.leaves.bit_length() + 1
        heads, tails = np.empty(3 * depth, np.int64), np.empty(3 * depth, np.int64)
        leaves = 1 << (3 * depth - 1).bit_length()  # `_tree_leaves(3 * depth)`
        keys, tree = np.empty(leaves, np.int64), np.empty(3 * leaves, np.int64)

        def chunk(done: int) -> int:
            nonlocal arrays
            spans, path_base, path_fill, path_node = arrays
            done = _interval_chunk(
                order, done, self.size, self.first, self.last, fit, self.leaves,
                self.cover_base, cover_fill, self.run_base, run_fill, spans[:, 0], spans[:, 1],
                offset, heads, tails, keys, tree, path_base, path_fill, path_node, CHUNK_PAIRS)
            if done < 0:  # first fit's climb was long: on from there with the path cache
                arrays = self._arrays(True)
                arrays[0][:len(spans)] = spans
                done = -1 - done
            return done

        place_in_chunks(len(order), stop, cancel, chunk)
        return offset


# -- any conflict model, as bitsets -------------------------------------------------------------


@njit(cache=True, nogil=True)
def _low_bit(word):
    """The index of the lowest set bit of a nonzero uint64."""
    k = 0
    if word & np.uint64(0xFFFFFFFF) == 0:
        word >>= np.uint64(32)
        k += 32
    if word & np.uint64(0xFFFF) == 0:
        word >>= np.uint64(16)
        k += 16
    if word & np.uint64(0xFF) == 0:
        word >>= np.uint64(8)
        k += 8
    if word & np.uint64(0xF) == 0:
        word >>= np.uint64(4)
        k += 4
    if word & np.uint64(0x3) == 0:
        word >>= np.uint64(2)
        k += 2
    if word & np.uint64(0x1) == 0:
        k += 1
    return k


@njit(cache=True, nogil=True)
def _bitset_chunk(order, begin, size, rows, fit, placed, offset, lo, hi, scratch, pair_limit):
    """Place order[begin:] until about `pair_limit` words and pairs were visited; the index of
    the next request to place."""
    visited = 0
    request = begin
    words = rows.shape[1]
    while request < order.shape[0] and visited < pair_limit:
        i = order[request]
        count = 0
        for w in range(words):
            word = rows[i, w] & placed[w]
            while word != 0:
                j = w * 64 + _low_bit(word)
                lo[count] = offset[j]
                hi[count] = offset[j] + size[j]
                count += 1
                word &= word - np.uint64(1)
        at = lowest_gap(lo, hi, count, size[i], fit, scratch)
        offset[i] = at
        placed[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
        visited += count + words + 1
        request += 1
    return request


@njit(cache=True, nogil=True)
def _widest_row(rows):
    """The most set bits in one row."""
    widest = 0
    for i in range(rows.shape[0]):
        bits = 0
        for w in range(rows.shape[1]):
            word = rows[i, w]
            while word != 0:
                word &= word - np.uint64(1)
                bits += 1
        if bits > widest:
            widest = bits
    return widest


def bitset_rows(masks, n: int, cancel: CancelToken = NEVER) -> np.ndarray:
    """Python-int bitsets over n buffers (one per buffer) as rows of uint64 words."""
    words = (n + 63) // 64
    rows = np.zeros((n, words), dtype=np.uint64)
    width = words * 8
    for i, mask in enumerate(masks):
        if not i & 1023:
            cancel.report("conflict sets", i / max(n, 1))
        if mask:
            rows[i] = np.frombuffer(mask.to_bytes(width, "little"), dtype="<u8")
    return rows


class BitsetPlacer:
    """Offsets for request orders under any conflict model, from its conflict sets as bitsets."""

    def __init__(self, size: np.ndarray, rows: np.ndarray):
        self.size = np.ascontiguousarray(size, dtype=np.int64)
        self.rows = rows
        self._widest = int(_widest_row(rows)) if len(rows) else 0

    def offsets(self, order: np.ndarray, fit: int = FIRST_FIT, stop: np.ndarray | None = None,
                cancel: CancelToken = NEVER) -> np.ndarray:
        """As `IntervalPlacer.offsets`."""
        order = np.ascontiguousarray(order, dtype=np.int64)
        n = len(self.size)
        offset = np.zeros(n, np.int64)
        placed = np.zeros(self.rows.shape[1], np.uint64)
        gathered = self._widest + 1
        lo, hi = np.empty(gathered, np.int64), np.empty(gathered, np.int64)
        scratch = np.empty(scratch_entries(gathered), np.int64)
        place_in_chunks(len(order), stop, cancel, lambda done: _bitset_chunk(
            order, done, self.size, self.rows, fit, placed, offset, lo, hi, scratch,
            CHUNK_PAIRS))
        return offset


def warm_up() -> None:
    """Compile (or load from numba's cache) these kernels on a tiny case."""
    first, last = np.array([0, 0, 1], np.int64), np.array([1, 0, 1], np.int64)
    size = np.array([2, 1, 1], np.int64)
    order = np.arange(3, dtype=np.int64)
    rows = bitset_rows([0b110, 0b001, 0b001], 3)
    for fit in (FIRST_FIT, BEST_FIT):
        IntervalPlacer(size, first, last).offsets(order, fit)
        BitsetPlacer(size, rows).offsets(order, fit)
