"""First fit and best fit at real density: thousands of placed buffers beside each request.

Two placement kernels, both exact (the same offsets as `traced_placement.place`):

- `IntervalPlacer`, for interval lifetimes (the serial model, or a DAG with one order). Placed
  buffers are kept in two segment trees over steps, their offsets stored in the trees' own
  contiguous arrays: one holds each buffer on the nodes that tile its lifetime (a walk from a
  leaf to the root finds every placed buffer alive at a step), the other on the nodes above its
  first step, up to `_START_LEVELS` (the nodes that tile a step range find every placed buffer
  starting inside it; each of its nodes also keeps its highest end, so one wholly below a
  request's floor is skipped unread). A
  request's conflicting placed buffers are then a few contiguous runs. Those alive at one step
  are pairwise disjoint, so each node of the first tree keeps its spans sorted by offset (their
  ends then sort too), and a request merges the runs on its path by offset.
- `BitsetPlacer`, for any conflict model: conflict sets as rows of 64-bit words, ANDed with the
  placed set word by word.

Per step, the interval kernel also keeps (in `floor_tree`, a segment tree over steps with
range updates) the highest end and the bytes held by the placed buffers alive there, and an
offset below which all is taken: a step of the request's lifetime whose free bytes below that
end are fewer than the request needs rules out every offset below it, as does each step's
taken prefix, so many requests land at once. For the rest a cursor climbs from that floor,
jumping past every span that blocks it: each node's list is searched by galloping, and the
spans starting inside the lifetime are passed over unsorted, by buckets of start, until none
blocks (`_climb_passes`, first fit), or bucketed by start and sorted only where the climb
reads (`_climb`, best fit). The bitset kernel gathers its spans and buckets them instead
(`lowest_gap`).

Kernels work in chunks of about `CHUNK_PAIRS` conflicting pairs and return, so the caller can
poll a cancel token or a stop flag between chunks (each chunk takes a few milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._numba import njit
from .cancel import NEVER, CancelToken
from .floor_tree import floor_query, floor_tree, floor_update, stack_entries

FIRST_FIT, BEST_FIT = 0, 1

# Conflicting pairs visited between two looks at the cancel token or stop flag (~10-30 ms).
CHUNK_PAIRS = 1 << 23

# Levels of the start tree that hold buffers, from the leaves up: a buffer is stored on this
# many nodes rather than on every one up to the root (22 for a million steps); a query reads
# the descendants at the top kept level (4,096 steps each) of a higher node instead.
_START_LEVELS = 13

# Requests an interval chunk places at most: a dense request's sorting and tree walks are not
# all counted as pairs, so a chunk also ends by count (a few milliseconds).
CHUNK_REQUESTS = 256

# Spans (or bucket members) up to this many are sorted by comparison; more by buckets or radix.
_SMALL_SORT = 32

# Up to this many spans, `_climb`'s queue is one bucket, sorted when first read.
_ONE_BUCKET = 4096

# First fit passes over unsorted spans (`_climb_passes`) until it has read this many entries
# per span (plus 16 spans), then sorts those left: spans gathered far out of order by start
# would need about one pass each.
PASS_WORK = 16

# Past this many spans, first fit's passes take them in by buckets of about this many by
# start (at most `_MOST_BUCKETS`), a bucket once the cursor nears it.
_LAZY_SPANS = 64
_SPANS_PER_BUCKET = 8
_MOST_BUCKETS = 4096

# A window no span can block: gathering spans for best fit never moves the cursor.
_NO_JUMPS = -(1 << 62)


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
    """Per node (heap layout: root 1, leaf t at leaves + t), how many buffers the lifetime tree
    and the start tree can hold there: CSR starts over nodes, one array each."""
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
        for _ in range(_START_LEVELS):
            if v < 1:
                break
            point[v + 1] += 1
            v >>= 1
    for v in range(nodes):
        cover[v + 1] += cover[v]
        point[v + 1] += point[v]
    return cover, point


@njit(cache=True, nogil=True)
def _read(base, fill, node_lo, node_hi, v, cursor, window, lo, hi, count):
    """Append the spans stored on node `v` that reach above the cursor, but jump the cursor
    past each one that blocks offsets [cursor, cursor + window) instead (none, for a window
    of `_NO_JUMPS`); (count, cursor)."""
    for k in range(base[v], base[v] + fill[v]):
        end = node_hi[k]
        if end > cursor:
            if node_lo[k] - cursor < window:
                cursor = end
            else:
                lo[count] = node_lo[k]
                hi[count] = end
                count += 1
    return count, cursor


@njit(cache=True, nogil=True)
def _read_starts(base, fill, node_lo, node_hi, top, v, height, cursor, window, lo, hi, count,
                 read):
    """`_read` of the start tree's node `v` (`height` levels above the leaves), or, above
    the levels it keeps, of its descendants at the highest kept level; (count, cursor,
    entries read). A node whose highest end (`top`) is at most the cursor holds nothing to
    read."""
    if height < _START_LEVELS:
        if top[v] <= cursor:
            return count, cursor, read + 1
        count, cursor = _read(base, fill, node_lo, node_hi, v, cursor, window, lo, hi, count)
        return count, cursor, read + fill[v]
    shift = height - _START_LEVELS + 1
    for u in range(v << shift, (v + 1) << shift):
        if top[u] <= cursor:
            read += 1
            continue
        count, cursor = _read(base, fill, node_lo, node_hi, u, cursor, window, lo, hi, count)
        read += fill[u] + 1
    return count, cursor, read


@njit(cache=True, nogil=True)
def _store(base, fill, node_lo, node_hi, top, v, at, end):
    """Store span [at, end) on node `v`, keeping the node's highest end in `top`."""
    k = base[v] + fill[v]
    node_lo[k] = at
    node_hi[k] = end
    fill[v] += 1
    if end > top[v]:
        top[v] = end


@njit(cache=True, nogil=True)
def _insert_sorted(base, fill, node_lo, node_hi, v, at, end):
    """Store span [at, end) on node `v`, keeping the node's spans sorted by (start, end)."""
    b0 = base[v]
    k = b0 + fill[v]
    while k > b0 and (node_lo[k - 1] > at or (node_lo[k - 1] == at and node_hi[k - 1] > end)):
        node_lo[k] = node_lo[k - 1]
        node_hi[k] = node_hi[k - 1]
        k -= 1
    node_lo[k] = at
    node_hi[k] = end
    fill[v] += 1


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


@njit(cache=True, nogil=True)
def _queue_buckets(count):
    """Buckets for `count` queued spans: one for a few hundred, else about one per two."""
    buckets = 1
    while 2 * buckets < count and buckets < 65_536:
        buckets *= 2
    return buckets if count > _ONE_BUCKET else 1


def _queue_entries(count: int) -> int:
    """The scratch `_enqueue` needs for up to `count` spans."""
    return 4 * _queue_buckets(count) + 1 + count


@njit(cache=True, nogil=True)
def _enqueue(lo, hi, count, scratch):
    """Queue spans lo/hi[:count] for `_climb` in buckets by start (about two spans each; one
    bucket for a few hundred), keeping each bucket's lowest start and highest end; nothing is
    sorted yet. `scratch` holds `_queue_entries(count)` int64: where each bucket begins
    (buckets + 1), their lowest starts, their highest ends, then the spans by bucket.
    Returns (buckets, shift, base): span k is in bucket (lo[k] - base) >> shift."""
    buckets = _queue_buckets(count)
    base, shift = _bucket_shift(lo, count, buckets) if count > 0 else (0, 0)
    begins = scratch[:buckets + 1]
    ranked = scratch[3 * buckets + 1:3 * buckets + 1 + count]
    if buckets == 1:
        begins[0] = 0
        begins[1] = count
        scratch[2] = base
        for k in range(count):
            ranked[k] = k
        return buckets, shift, base
    low = scratch[buckets + 1:2 * buckets + 1]
    high = scratch[2 * buckets + 1:3 * buckets + 1]
    begins[:] = 0
    low[:] = -1
    high[:] = 0
    for k in range(count):
        j = (lo[k] - base) >> shift
        begins[j + 1] += 1
        if low[j] < 0 or lo[k] < low[j]:
            low[j] = lo[k]
        if hi[k] > high[j]:
            high[j] = hi[k]
    for j in range(buckets):
        begins[j + 1] += begins[j]
    fill = scratch[3 * buckets + 1 + count:3 * buckets + 1 + count + buckets]
    fill[:] = begins[:buckets]
    for k in range(count):
        j = (lo[k] - base) >> shift
        ranked[fill[j]] = k
        fill[j] += 1
    return buckets, shift, base


@njit(cache=True, nogil=True)
def _open(lo, scratch, buckets, at):
    """Sort bucket `at`'s members by start (usually few); the index of its first."""
    first, end = scratch[at], scratch[at + 1]
    ranked = scratch[3 * buckets + 1:]
    if end - first <= _SMALL_SORT:
        _insertion_rank(lo, ranked[first:end])
    elif buckets == 1:  # a few hundred spans, in their gathered order
        ranked[:end] = np.argsort(lo[:end])
    else:  # starts bunched in one bucket
        members = ranked[first:end].copy()
        ranked[first:end] = members[np.argsort(lo[members])]
    return first


@njit(cache=True, nogil=True, inline="always")
def _take_below(limit, lo, hi, scratch, buckets, shift, base, at, nxt):
    """Take every queued span starting below `limit`, from bucket `at` (its next member
    `nxt`, or -1 where it is not sorted yet); (highest end among them or -1, at, nxt). A
    bucket whose every start lies below the limit is taken whole, by its highest end."""
    reach = -1
    ranked = scratch[3 * buckets + 1:]
    while at < buckets:
        end = scratch[at + 1]
        if nxt < 0:
            if scratch[at] == end:
                at += 1
                continue
            if buckets > 1 and base + ((at + 1) << shift) <= limit:
                if scratch[2 * buckets + 1 + at] > reach:
                    reach = scratch[2 * buckets + 1 + at]
                at += 1
                continue
            if buckets > 1 and scratch[buckets + 1 + at] >= limit:  # its lowest start
                break
            nxt = _open(lo, scratch, buckets, at)
        while nxt < end and lo[ranked[nxt]] < limit:
            if hi[ranked[nxt]] > reach:
                reach = hi[ranked[nxt]]
            nxt += 1
        if nxt < end:
            break
        at += 1
        nxt = -1
    return reach, at, nxt


@njit(cache=True, nogil=True, inline="always")
def _window(need):
    """The bytes above the cursor that must be clear for a request of `need`: an empty request
    still needs a gap of at least one byte, as in `lowest_gap`."""
    return need if need > 0 else 1


@njit(cache=True, nogil=True, inline="always")
def _lists_reach(cursor, window, lists, heads, tails, cover_lo, cover_hi):
    """The highest end of a span in the nodes' lists (heads[:lists] to tails, each sorted and
    disjoint) that blocks offsets [cursor, cursor + window), else the cursor; each head moves
    to its list's first span ending above the cursor, and a list with none left is dropped:
    (reach, lists left)."""
    reach = cursor
    q = 0
    while q < lists:
        h = _first_above(cover_hi, heads[q], tails[q], cursor)
        if h == tails[q]:
            lists -= 1
            heads[q] = heads[lists]
            tails[q] = tails[lists]
            continue
        heads[q] = h
        if cover_lo[h] - cursor < window and cover_hi[h] > reach:
            reach = cover_hi[h]
        q += 1
    return reach, lists


@njit(cache=True, nogil=True, inline="always")
def _climb_lists(cursor, window, lists, heads, tails, cover_lo, cover_hi):
    """Jump the cursor past the spans in the nodes' lists until none blocks it (as
    `_lists_reach`); (cursor, lists left, entries read)."""
    read = 0
    while True:
        reach, lists = _lists_reach(cursor, window, lists, heads, tails, cover_lo, cover_hi)
        read += lists
        if reach == cursor:
            return cursor, lists, read
        cursor = reach


@njit(cache=True, nogil=True)
def _climb(cursor, need, fit, lists, heads, tails, cover_lo, cover_hi, lo, hi, scratch,
           queued):
    """The offset >= cursor that `fit` gives `need` bytes clear of the spans in the nodes'
    lists (heads[:lists] to tails) and of the spans queued in `scratch` (`_enqueue`, which
    returned `queued`); (offset, lists left, entries read). `cursor` must be a floor below
    which nothing fits and just below which a span ends (or 0).

    Every span that starts below cursor + need and ends above the cursor rules out every
    offset up to its end, so the cursor jumps to the highest such end, and each list is
    searched (galloping) for its first span ending above the new cursor instead of being
    walked span by span; queued spans are taken in order of start, a bucket at a time where
    it lies wholly below. Where nothing blocks, a gap that holds the request starts at the
    cursor: first fit stops there; best fit measures it (up to the lowest start above) and
    goes on past the span that closes it, until a gap fits exactly.
    """
    buckets, shift, base = queued
    at, nxt = 0, -1  # the queue's bucket and next member (-1: not sorted yet)
    ranked = scratch[3 * buckets + 1:]
    last = 0
    if buckets == 1:
        last = scratch[1]
        nxt = _open(lo, scratch, 1, 0)
    window = _window(need)
    read = 0
    best = -1
    best_gap = 0
    while True:
        # The highest end of a span that blocks an offset at the cursor.
        reach, lists = _lists_reach(cursor, window, lists, heads, tails, cover_lo, cover_hi)
        read += lists
        if buckets == 1:  # a few spans, sorted at once: walked here, as cheap as it gets
            while at == 0 and nxt < last and lo[ranked[nxt]] - cursor < window:
                if hi[ranked[nxt]] > reach:
                    reach = hi[ranked[nxt]]
                nxt += 1
            if nxt == last:
                at = 1
        elif at < buckets:
            taken, at, nxt = _take_below(cursor + window, lo, hi, scratch, buckets, shift, base,
                                         at, nxt)
            if taken > reach:
                reach = taken
        if reach > cursor:
            cursor = reach
            continue
        # Nothing blocks: a gap that holds the request starts at the cursor.
        if fit == FIRST_FIT:
            return cursor, lists, read
        closer = -1  # the list (or -2: the queue) holding the lowest start above
        start = 0
        for q in range(lists):
            if closer == -1 or cover_lo[heads[q]] < start:
                closer = q
                start = cover_lo[heads[q]]
        while at < buckets and scratch[at] == scratch[at + 1]:
            at += 1
        if at < buckets:
            if nxt < 0:
                nxt = _open(lo, scratch, buckets, at)
            if closer == -1 or lo[ranked[nxt]] < start:
                closer = -2
                start = lo[ranked[nxt]]
        if closer == -1:  # open to the top: the top is best fit's last resort
            break
        if best < 0 or start - cursor < best_gap:
            best = cursor
            best_gap = start - cursor
            if best_gap == need:  # no gap is smaller; this is the lowest of its size
                return best, lists, read
        if closer == -2:
            cursor, at, nxt = _take_below(start + 1, lo, hi, scratch, buckets, shift, base,
                                          at, nxt)
        else:
            cursor = cover_hi[heads[closer]]
    if best >= 0:
        return best, lists, read
    return cursor, lists, read


@njit(cache=True, nogil=True)
def _bucket_by_start(lo, hi, count, scratch):
    """Move spans lo/hi[:count] into `scratch` in buckets by start (a counting sort, about
    `_SPANS_PER_BUCKET` a bucket): scratch[:buckets] where each bucket ends, then the starts,
    then the ends. Returns (buckets, shift, base): span k went to bucket (lo[k] - base) >> shift."""
    buckets = 16
    while buckets * _SPANS_PER_BUCKET < count and buckets < _MOST_BUCKETS:
        buckets *= 2
    base, shift = _bucket_shift(lo, count, buckets)
    ends = scratch[:buckets]
    ends[:] = 0
    for k in range(count):
        b = (lo[k] - base) >> shift
        if b + 1 < buckets:
            ends[b + 1] += 1
    for b in range(1, buckets):
        ends[b] += ends[b - 1]
    held_lo = scratch[buckets:buckets + count]
    held_hi = scratch[buckets + count:buckets + 2 * count]
    for k in range(count):  # `ends` holds each bucket's begin until its members are in
        b = (lo[k] - base) >> shift
        held_lo[ends[b]] = lo[k]
        held_hi[ends[b]] = hi[k]
        ends[b] += 1
    return buckets, shift, base


@njit(cache=True, nogil=True, inline="always")
def _take_bucket(scratch, buckets, total, b, cursor, lo, hi, count):
    """Append bucket b's spans (`_bucket_by_start` of `total` spans) that end above the
    cursor to lo/hi[:count]; the new count."""
    for k in range(scratch[b - 1] if b > 0 else 0, scratch[b]):
        if scratch[buckets + total + k] > cursor:
            lo[count] = scratch[buckets + k]
            hi[count] = scratch[buckets + total + k]
            count += 1
    return count


@njit(cache=True, nogil=True)
def _climb_passes(cursor, need, lists, heads, tails, cover_lo, cover_hi, lo, hi, count,
                  pass_work, scratch):
    """First fit's `_climb` with the spans lo/hi[:count] left unsorted: (offset, or a floor
    where it gave up; lists left; spans left; entries read; whether it is the offset).
    `scratch` holds at least `_MOST_BUCKETS` + 2 * count int64.

    Any span that blocks the cursor lets it jump to the span's end, whatever the order the
    spans are met in, so the climb passes over them again and again: each pass jumps past those
    that block and drops those below the cursor, until a pass moves nothing. Past
    `_LAZY_SPANS` spans, they are first put in buckets by start, and a bucket joins the
    passes only once the cursor nears its starts: those far above the cursor are not read
    again and again, and those that join come roughly in order. Once the passes have read
    `pass_work` entries per span (plus 16 spans), it gives up and the caller sorts those left
    (`_climb`).
    """
    window = _window(need)
    read = 0
    budget = pass_work * (count + 16)
    total = count
    buckets, shift, base = 0, 0, 0
    if count > _LAZY_SPANS:
        buckets, shift, base = _bucket_by_start(lo, hi, count, scratch)
        read += 2 * count
        count = 0
    taken = 0  # buckets joined so far
    while True:
        cursor, lists, climbed = _climb_lists(cursor, window, lists, heads, tails, cover_lo,
                                              cover_hi)
        read += climbed
        while taken < buckets and base + (taken << shift) - cursor < window:
            count = _take_bucket(scratch, buckets, total, taken, cursor, lo, hi, count)
            taken += 1
        if read > budget:
            for b in range(taken, buckets):
                count = _take_bucket(scratch, buckets, total, b, cursor, lo, hi, count)
            return cursor, lists, count, read, False
        moved = False
        kept = 0
        for k in range(count):
            if hi[k] > cursor:
                if lo[k] - cursor < window:
                    cursor = hi[k]
                    moved = True
                else:
                    lo[kept] = lo[k]
                    hi[kept] = hi[k]
                    kept += 1
        read += count
        count = kept
        if not moved and (taken == buckets or base + (taken << shift) - cursor >= window):
            return cursor, lists, count, read, True


@njit(cache=True, nogil=True)
def _merged_fit(s, e, need, fit, floor, leaves, cover_base, cover_fill, cover_lo, cover_hi,
                point_base, point_fill, point_lo, point_hi, point_top, lo, hi, heads, tails,
                scratch, pass_work):
    """The offset >= floor that `fit` gives `need` bytes clear of the placed buffers
    overlapping steps [s, e] (as `lowest_gap`); (offset, entries read).

    Those alive at step s are pairwise disjoint, so on each node from leaf s to the root,
    sorted by start, their ends are sorted too. Those starting in (s, e] can be many (tens of
    thousands, for a long lifetime placed late) and overlap each other. First fit climbs over
    them unsorted (`_climb_passes`). Best fit keeps only those that can matter: the fit among
    the alive alone gives an offset that nothing lower can beat (any gap of all the spans
    that holds the request lies in a gap of the alive ones that does), so only those ending
    above it. They go into buckets by start, sorted only where the fit reads inside them
    (`_climb`), as do those that first fit's passes gave up on.
    """
    read = 0
    lists = 0
    v = s + leaves
    while v >= 1:
        if cover_fill[v] > 0:
            heads[lists] = cover_base[v]
            tails[lists] = cover_base[v] + cover_fill[v]
            lists += 1
        v >>= 1
    cursor = floor
    window = _NO_JUMPS
    if fit == FIRST_FIT:
        # Climb among the alive first, and gather the rest as a first pass: the higher the
        # cursor, the fewer spans are kept.
        window = _window(need)
        cursor, lists, read = _climb_lists(cursor, window, lists, heads, tails, cover_lo,
                                           cover_hi)
    count = 0
    a = s + 1 + leaves
    b = e + leaves + 1
    height = 0
    while a < b:
        if a & 1:
            count, cursor, read = _read_starts(point_base, point_fill, point_lo, point_hi,
                                               point_top, a, height, cursor, window, lo, hi,
                                               count, read)
            a += 1
        if b & 1:
            b -= 1
            count, cursor, read = _read_starts(point_base, point_fill, point_lo, point_hi,
                                               point_top, b, height, cursor, window, lo, hi,
                                               count, read)
        a >>= 1
        b >>= 1
        height += 1
    if fit == FIRST_FIT:
        cursor, lists, count, climbed, done = _climb_passes(cursor, need, lists, heads, tails,
                                                            cover_lo, cover_hi, lo, hi, count,
                                                            pass_work, scratch)
        read += climbed
        if done:
            return cursor, read
    elif count > 0:  # nothing lower than the fit among the alive alone can be the answer
        cursor, lists, climbed = _climb(floor, need, FIRST_FIT, lists, heads, tails, cover_lo,
                                        cover_hi, lo, hi, scratch, (0, 0, 0))
        read += climbed
        kept = 0
        for k in range(count):
            if hi[k] > cursor:
                lo[kept] = lo[k]
                hi[kept] = hi[k]
                kept += 1
        count = kept
    at, lists, climbed = _climb(cursor, need, fit, lists, heads, tails, cover_lo, cover_hi,
                                lo, hi, scratch, _enqueue(lo, hi, count, scratch))
    return at, read + climbed + count


@njit(cache=True, nogil=True)
def _interval_chunk(order, begin, size, first, last, fit, leaves, cover_base, cover_fill,
                    cover_lo, cover_hi, point_base, point_fill, point_lo, point_hi, point_top,
                    steps, stack, offset, lo, hi, heads, tails, scratch, pass_work,
                    pair_limit):
    """Place order[begin:] until about `pair_limit` steps and pairs were visited; the index of
    the next request to place (order.shape[0] when done).

    Per step, `ceiling` is the highest end and `held` the bytes of the placed buffers alive
    there (pairwise disjoint, as they all conflict), and `prefix` an offset below which every
    byte is taken there. Where a step of the request's lifetime has fewer free bytes below its
    ceiling than the request needs, nothing fits below that ceiling; nothing fits below any
    step's prefix either. The highest of these is a floor, and only spans reaching above it
    are read (`_merged_fit`); when it is the highest ceiling of all, the request lands right
    there.
    """
    visited = 0
    request = begin
    while request < order.shape[0] and visited < pair_limit and request - begin < CHUNK_REQUESTS:
        i = order[request]
        s = first[i]
        e = last[i]
        need = size[i]
        top, floor = floor_query(steps, leaves, s, e, need, stack)
        visited += 64  # about what the two walks of the floor tree cost, in pairs
        if floor == top:
            at = floor
        else:
            at, read = _merged_fit(s, e, need, fit, floor, leaves, cover_base, cover_fill,
                                   cover_lo, cover_hi, point_base, point_fill, point_lo,
                                   point_hi, point_top, lo, hi, heads, tails, scratch,
                                   pass_work)
            visited += read
        end = at + need
        offset[i] = at
        floor_update(steps, leaves, s, e, at, end, stack)
        a = s + leaves
        b = e + leaves + 1
        while a < b:
            if a & 1:
                _insert_sorted(cover_base, cover_fill, cover_lo, cover_hi, a, at, end)
                a += 1
            if b & 1:
                b -= 1
                _insert_sorted(cover_base, cover_fill, cover_lo, cover_hi, b, at, end)
            a >>= 1
            b >>= 1
        v = s + leaves
        for _ in range(_START_LEVELS):
            if v < 1:
                break
            _store(point_base, point_fill, point_lo, point_hi, point_top, v, at, end)
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
    overlap; the trees' layout is computed once, their contents once per placement.
    `pass_work` is how long first fit passes over unsorted spans before it sorts them
    (`_climb_passes`; 0 sorts at once): it changes the time taken, never the offsets."""

    def __init__(self, size: np.ndarray, first: np.ndarray, last: np.ndarray, *,
                 pass_work: int = PASS_WORK):
        self.size = np.ascontiguousarray(size, dtype=np.int64)
        self.first = np.ascontiguousarray(first, dtype=np.int64)
        self.last = np.ascontiguousarray(last, dtype=np.int64)
        self.pass_work = pass_work
        steps = int(self.last.max()) + 1 if len(self.last) else 1
        self.leaves = 1 << max(steps - 1, 0).bit_length()
        self.cover_base, self.point_base = _tree_capacity(self.first, self.last, self.leaves)
        # The most placed buffers one request can meet: its conflict count, at most.
        self._widest = int(_overlap_degree(self.first, self.last).max()) if len(self.last) else 0

    def offsets(self, order: np.ndarray, fit: int = FIRST_FIT, stop: np.ndarray | None = None,
                cancel: CancelToken = NEVER) -> np.ndarray:
        """Each buffer's offset placing `order` with `fit`; ends early (offsets incomplete) once
        `stop[0]` is set, and raises `Cancelled` within one chunk of `cancel`."""
        order = np.ascontiguousarray(order, dtype=np.int64)
        n = len(self.size)
        nodes = 2 * self.leaves
        offset = np.zeros(n, np.int64)
        gathered = self._widest + 1
        lo, hi = np.empty(gathered, np.int64), np.empty(gathered, np.int64)
        cover_fill, point_fill = np.zeros(nodes, np.int64), np.zeros(nodes, np.int64)
        point_top = np.zeros(nodes, np.int64)
        cover_lo = np.empty(int(self.cover_base[-1]), np.int64)
        cover_hi = np.empty_like(cover_lo)
        point_lo = np.empty(int(self.point_base[-1]), np.int64)
        point_hi = np.empty_like(point_lo)
        steps = floor_tree(self.leaves)
        stack = np.empty((stack_entries(self.leaves), 3), np.int64)
        depth = self.leaves.bit_length() + 1  # nodes on a path from a leaf to the root
        heads, tails = np.empty(depth, np.int64), np.empty(depth, np.int64)
        scratch = np.empty(max(_queue_entries(gathered), _MOST_BUCKETS + 2 * gathered),
                           np.int64)
        place_in_chunks(len(order), stop, cancel, lambda done: _interval_chunk(
            order, done, self.size, self.first, self.last, fit, self.leaves, self.cover_base,
            cover_fill, cover_lo, cover_hi, self.point_base, point_fill, point_lo, point_hi,
            point_top, steps, stack, offset, lo, hi, heads, tails, scratch, self.pass_work,
            CHUNK_PAIRS))
        return offset


def _overlap_degree(first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Per buffer, how many others its [first, last] range overlaps, for steps from 0: those
    starting by its last step less those ending before its first (two counts per step)."""
    steps = int(last.max()) + 1
    started = np.cumsum(np.bincount(first, minlength=steps))
    ended = np.concatenate(([0], np.cumsum(np.bincount(last, minlength=steps))))
    return started[last] - ended[first] - 1


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
