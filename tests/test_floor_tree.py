"""The floor tree against its step-by-step definition, the interval placer's bucketed queue
(past a few thousand spans inside one lifetime) against the bitset placer, and the conflict-list
kernel's cancel."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope.planner import dense_kernels, packing
from slabscope.planner.floor_tree import (floor_query, floor_tree, floor_update,
                                          stack_entries)
from tests.oracles import stops_at_third_report


def plain_floor(ceiling, held, prefix, s, e, need):
    """(top, floor) over steps [s, e] by the definition in `floor_tree`'s docstring."""
    top = int(ceiling[s:e + 1].max())
    floor = max(int(c) if c - h < need else int(p)
                for c, h, p in zip(ceiling[s:e + 1], held[s:e + 1], prefix[s:e + 1]))
    return top, floor


@settings(max_examples=120, deadline=None)
@given(steps=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       sizes=st.sampled_from([[1, 2, 3], [0, 1, 8], [1, 7, 512, 2**30]]))
def test_floor_tree_answers_as_the_step_by_step_arrays(steps, seed, sizes):
    rng = np.random.default_rng(seed)
    leaves = 1 << max(steps - 1, 0).bit_length()
    tree = floor_tree(leaves)
    stack = np.empty((stack_entries(leaves), 3), np.int64)
    ceiling, held, prefix = (np.zeros(steps, np.int64) for _ in range(3))
    for _ in range(60):
        s = int(rng.integers(0, steps))
        e = int(rng.integers(s, steps))
        need = int(rng.choice(sizes))
        top, floor = floor_query(tree, leaves, s, e, need, stack)
        assert (top, floor) == plain_floor(ceiling, held, prefix, s, e, need)
        # Place it as a placer may: at the floor, at the top, or in between.
        at = int(rng.choice([floor, top, (floor + top) // 2]))
        end = at + need
        floor_update(tree, leaves, s, e, at, end, stack)
        held[s:e + 1] += need
        np.maximum(ceiling[s:e + 1], end, out=ceiling[s:e + 1])
        moved = (at <= prefix[s:e + 1]) & (prefix[s:e + 1] < end)
        prefix[s:e + 1][moved] = end


def test_a_lifetime_over_thousands_of_placed_spans_fits_as_the_bitset_placer_fits_it():
    # 6,000 short buffers, then long ones over all of them: each long request gathers more
    # spans than one queue bucket takes, so the bucketed path decides its offset.
    rng = np.random.default_rng(3)
    short, long_ = 6_000, 40
    first = np.concatenate([rng.integers(0, 200, short), rng.integers(0, 20, long_)])
    last = np.concatenate([first[:short] + rng.integers(0, 3, short),
                           rng.integers(180, 200, long_)])
    size = rng.choice([1, 3, 64, 4096, 2**20], short + long_).astype(np.int64)
    order = np.arange(short + long_)
    overlap_rows = np.zeros((len(size), (len(size) + 63) // 64), np.uint64)
    for i in range(len(size)):
        mask = (first <= last[i]) & (first[i] <= last)
        mask[i] = False
        overlap_rows[i] = np.packbits(np.pad(mask, (0, overlap_rows.shape[1] * 64 - len(mask))),
                                      bitorder="little").view("<u8")
    bitset = dense_kernels.BitsetPlacer(size, overlap_rows)
    interval = dense_kernels.IntervalPlacer(size, first, last)
    for fit in (dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT):
        assert interval.offsets(order, fit).tolist() == bitset.offsets(order, fit).tolist()


def test_a_cancel_stops_the_conflict_list_kernel_between_chunks():
    # The kernel for DAGs past the bitset kernel's size polls the cancel token, not only
    # search's stop flag.
    n = 300
    size = np.random.default_rng(2).integers(1, 100, n).astype(np.int64)
    starts, adj = packing._interval_lists(np.zeros(n, np.int64), np.ones(n, np.int64))
    whole = packing.listed_offsets(np.arange(n), size, starts, adj, dense_kernels.FIRST_FIT)
    chunked = packing._listed_offsets(np.arange(n), size, starts, adj, dense_kernels.FIRST_FIT,
                                      chunk=50)
    assert chunked.tolist() == whole.tolist()
    stops_at_third_report(lambda cancel: packing._listed_offsets(
        np.arange(n), size, starts, adj, dense_kernels.FIRST_FIT, cancel=cancel, chunk=50))


def test_long_lifetimes_over_many_steps_read_the_start_tree_past_its_kept_levels():
    # Over 20,000 steps a lifetime's step range tiles into nodes above the start tree's kept
    # levels (4,096 steps each), which are read through their descendants.
    rng = np.random.default_rng(4)
    n = 2_500
    first = np.sort(rng.integers(0, 20_000, n))
    long_lived = rng.random(n) < 0.2
    last = np.minimum(first + np.where(long_lived, rng.integers(5_000, 20_000, n),
                                       rng.integers(0, 40, n)), 19_999)
    size = rng.choice([1, 7, 512, 2**20], n).astype(np.int64)
    overlap = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    np.fill_diagonal(overlap, False)
    words = (n + 63) // 64
    rows = np.packbits(np.pad(overlap, ((0, 0), (0, words * 64 - n))), axis=1,
                       bitorder="little").view("<u8")
    bitset = dense_kernels.BitsetPlacer(size, np.ascontiguousarray(rows))
    interval = dense_kernels.IntervalPlacer(size, first, last)
    for order in (rng.permutation(n), np.arange(n)):
        for fit in (dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT):
            assert interval.offsets(order, fit).tolist() == bitset.offsets(order, fit).tolist()
