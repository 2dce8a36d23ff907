"""The dense placement kernels against the plain definitions: the lowest clear offset among
spans, first fit by pairwise overlap, and the traced placer; the lazy trace against the trace the
traced placer records; chunked kernels stop on a cancel."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.placement import dense_kernels, greedy
from slabscope.planner.placement.lazy_trace import PlacementTrace, reuses_by_name
from slabscope.planner.placement.traced_placement import _choose, place
from tests.examples import RELU_UNFUSED
from tests.oracles import stops_at_third_report


def plain_lowest(spans, size, floor=0):
    """The lowest offset >= floor whose `size` bytes overlap no span: tried at floor and at
    every span's end, each checked against every span."""
    for x in sorted({floor, *(h for _, h in spans if h >= floor)}):
        if all(x + size <= lo or hi <= x for lo, hi in spans):
            return x
    raise AssertionError("the top always fits")


spans_lists = st.lists(st.tuples(st.integers(0, 2**40), st.integers(1, 2**20))
                       .map(lambda t: (t[0], t[0] + t[1])), max_size=300)
clustered = st.lists(st.tuples(st.integers(0, 64), st.integers(1, 16))
                     .map(lambda t: (t[0], t[0] + t[1])), max_size=300)


def gap(spans, size, fit, floor=0):
    lo = np.array([s for s, _ in spans], dtype=np.int64)
    hi = np.array([h for _, h in spans], dtype=np.int64)
    scratch = np.empty(dense_kernels.scratch_entries(len(spans)), np.int64)
    return int(dense_kernels.lowest_gap(lo, hi, len(spans), size, fit, scratch, floor))


@settings(max_examples=200, deadline=None)
@given(spans=st.one_of(spans_lists, clustered), size=st.integers(1, 2**22),
       floor=st.integers(0, 8))
def test_lowest_gap_is_the_lowest_clear_offset(spans, size, floor):
    assert gap(spans, size, dense_kernels.FIRST_FIT, floor) == plain_lowest(spans, size, floor)


@settings(max_examples=150, deadline=None)
@given(spans=st.one_of(spans_lists, clustered), size=st.integers(1, 2**22))
def test_best_fit_gap_matches_the_traced_placers_choice(spans, size):
    assert gap(spans, size, dense_kernels.BEST_FIT) == _choose(sorted(spans), size, "best")[0]


@st.composite
def dense_traces(draw):
    """Intervals over few steps, so most buffers overlap most others; sizes spread widely."""
    n = draw(st.integers(1, 120))
    steps = draw(st.integers(1, 12))
    first = np.array(draw(st.lists(st.integers(0, steps - 1), min_size=n, max_size=n)))
    length = np.array(draw(st.lists(st.integers(0, steps), min_size=n, max_size=n)))
    size = np.array(draw(st.lists(st.sampled_from([1, 3, 64, 4096, 2**20, 2**33]),
                                  min_size=n, max_size=n)), dtype=np.int64)
    order = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    return size, first.astype(np.int64), np.minimum(first + length, steps - 1), order


def plain_first_fit(size, conflicts, order):
    """First fit by the definition: each request at the lowest offset clear of every placed
    buffer that `conflicts(i, j)` says it overlaps."""
    offset = {}
    for i in order.tolist():
        spans = [(offset[j], offset[j] + size[j]) for j in offset if conflicts(i, j)]
        offset[i] = plain_lowest(spans, int(size[i]))
    return np.array([offset[i] for i in range(len(size))], dtype=np.int64)


@settings(max_examples=80, deadline=None)
@given(trace=dense_traces())
def test_interval_placer_is_first_fit_by_pairwise_overlap(trace):
    size, first, last, order = trace
    got = dense_kernels.IntervalPlacer(size, first, last).offsets(order)
    want = plain_first_fit(size, lambda i, j: first[i] <= last[j] and first[j] <= last[i],
                           order)
    assert got.tolist() == want.tolist()


@st.composite
def conflict_matrices(draw):
    n = draw(st.integers(1, 90))
    density = draw(st.floats(0.0, 1.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    upper = np.triu(rng.random((n, n)) < density, 1)
    size = rng.choice([1, 7, 512, 2**30], size=n).astype(np.int64)
    return upper | upper.T, size, rng.permutation(n).astype(np.int64)


@settings(max_examples=150, deadline=None)
@given(case=conflict_matrices(), fit=st.sampled_from([0, 1]))
def test_bitset_placer_matches_the_plain_placers(case, fit):
    matrix, size, order = case
    masks = [sum(1 << int(j) for j in np.flatnonzero(row)) for row in matrix]
    got = dense_kernels.BitsetPlacer(size, dense_kernels.bitset_rows(masks, len(size)))
    got = got.offsets(order, fit)
    if fit == dense_kernels.FIRST_FIT:
        want = plain_first_fit(size, lambda i, j: matrix[i, j], order)
    else:  # best fit by the traced placer's gap choice over the placed conflicting buffers
        want, placed = np.zeros(len(size), np.int64), []
        for i in order.tolist():
            spans = sorted((int(want[j]), int(want[j] + size[j])) for j in placed if matrix[i, j])
            want[i] = _choose(spans, int(size[i]), "best")[0]
            placed.append(i)
    assert got.tolist() == want.tolist()


@st.composite
def serial_graphs(draw):
    """A chain of steps with dense buffers over random ranges (a serial trace)."""
    steps = draw(st.integers(1, 10))
    names = [f"s{i}" for i in range(steps)]
    buffers = []
    for b in range(draw(st.integers(1, 40))):
        first = draw(st.integers(0, steps - 1))
        last = draw(st.integers(first, steps - 1))
        buffers.append({"name": f"b{b}", "bytes": draw(st.integers(1, 5000)),
                        "uses": list(dict.fromkeys([names[first], names[last]]))})
    return planner.graph_from_dict({"alignment": 1, "nodes": names,
                                    "edges": [[a, b] for a, b in zip(names, names[1:])],
                                    "buffers": buffers, "schedule": names})


@st.composite
def fork_graphs(draw):
    """A DAG with parallel lanes (no single order), so the dag model needs conflict sets."""
    lanes, depth = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    names = [f"n{lane}_{d}" for lane in range(lanes) for d in range(depth)]
    edges = [[f"n{lane}_{d}", f"n{lane}_{d + 1}"] for lane in range(lanes)
             for d in range(depth - 1)]
    buffers = []
    for b in range(draw(st.integers(1, 30))):
        uses = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        buffers.append({"name": f"b{b}", "bytes": draw(st.integers(1, 5000)), "uses": uses})
    return planner.graph_from_dict({"alignment": 1, "nodes": names, "edges": edges,
                                    "buffers": buffers})


@pytest.mark.parametrize("algorithm", ["first-fit", "largest-first", "best-fit"])
@settings(max_examples=40, deadline=None)
@given(graph=st.one_of(serial_graphs(), fork_graphs()), conflicts=st.sampled_from(["dag",
                                                                                     "serial"]),
       data=st.data())
def test_kernel_plans_and_lazy_traces_equal_the_traced_placer(graph, conflicts, algorithm,
                                                               data):
    names = [b.name for b in graph.buffers]
    order = data.draw(st.permutations(names))
    plan = planner.plan(graph, algorithm, order=order, conflicts=conflicts)
    model = planner.conflict_model(graph, conflicts)
    if algorithm == "largest-first":
        indices = greedy.largest_first_order(graph, model)
    else:
        indices = tuple(graph.buffer_index[name] for name in order)
    reference = place(graph, model, indices, fit="best" if algorithm == "best-fit" else "first")
    assert isinstance(plan.steps, PlacementTrace)
    assert plan.placements == reference.placements
    assert plan.slab_bytes == reference.slab_bytes
    k = data.draw(st.integers(0, len(names) - 1))
    assert plan.steps[k] == reference.steps[k]  # one step, derived alone
    assert plan.steps[-1] == reference.steps[-1]
    assert tuple(plan.steps) == reference.steps
    assert reuses_by_name(plan) == {s.name: s.reuses for s in reference.steps}


def test_a_plan_builds_no_step_until_one_is_asked_for():
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph)
    assert plan.steps._steps == {}
    plan.to_dict()
    assert plan.steps._steps == {}
    assert plan.steps[2].request == 2 and list(plan.steps._steps) == [2]


def test_chunked_kernels_give_the_same_offsets(monkeypatch):
    rng = np.random.default_rng(5)
    n = 400
    first = rng.integers(0, 50, n)
    last = first + rng.integers(0, 30, n)
    size = rng.integers(1, 10_000, n)
    order = rng.permutation(n)
    placer = dense_kernels.IntervalPlacer(size, first, last)
    whole = placer.offsets(order)
    monkeypatch.setattr(dense_kernels, "CHUNK_PAIRS", 7)
    assert placer.offsets(order).tolist() == whole.tolist()


@pytest.mark.parametrize("kind", ["interval", "bitset"])
def test_a_cancel_stops_the_kernels_between_chunks(monkeypatch, kind):
    monkeypatch.setattr(dense_kernels, "CHUNK_PAIRS", 50)
    n = 300
    rng = np.random.default_rng(1)
    size = rng.integers(1, 100, n)
    if kind == "interval":
        placer = dense_kernels.IntervalPlacer(size, np.zeros(n, np.int64), np.ones(n, np.int64))
    else:
        everyone = (1 << n) - 1
        placer = dense_kernels.BitsetPlacer(
            size, dense_kernels.bitset_rows([everyone & ~(1 << i) for i in range(n)], n))
    stops_at_third_report(lambda cancel: placer.offsets(np.arange(n), cancel=cancel))


def test_bitset_rows_hold_the_masks():
    masks = [0, 1 << 64 | 1, (1 << 130) - 1]
    rows = dense_kernels.bitset_rows(masks, 131)
    back = [int.from_bytes(row.astype("<u8").tobytes(), "little") for row in rows]
    assert back[:3] == masks and not any(back[3:])


def plain_fit(size, first, last, order, fit):
    """First or best fit of interval lifetimes by the definitions: each request's placed
    conflicting buffers by pairwise overlap, its offset by `plain_lowest` (first fit) or by
    the traced placer's gap choice (best fit)."""
    offset = {}
    for i in order.tolist():
        spans = [(offset[j], offset[j] + int(size[j])) for j in offset
                 if first[i] <= last[j] and first[j] <= last[i]]
        offset[i] = plain_lowest(spans, int(size[i])) if fit == dense_kernels.FIRST_FIT \
            else _choose(sorted(spans), int(size[i]), "best")[0]
    return [offset[i] for i in range(len(size))]


@st.composite
def merged_traces(draw, sizes=([1, 2, 3], [1, 7, 512, 2**30], [1, 5, 64])):
    """Long and short lifetimes over up to 40 steps, in any order: the cases the merged sweep
    orders by offset; `sizes`, the size sets to draw from."""
    n = draw(st.integers(1, 90))
    steps = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    first = rng.integers(0, steps, n)
    length = np.where(rng.random(n) < 0.2, rng.integers(0, steps, n), rng.integers(0, 4, n))
    size = rng.choice(draw(st.sampled_from(sizes)), size=n)
    return (size.astype(np.int64), first.astype(np.int64),
            np.minimum(first + length, steps - 1).astype(np.int64),
            rng.permutation(n).astype(np.int64))


@settings(max_examples=150, deadline=None)
@given(trace=merged_traces(), fit=st.sampled_from([0, 1]))
def test_interval_placer_merges_to_first_and_best_fit_by_definition(trace, fit):
    size, first, last, order = trace
    got = dense_kernels.IntervalPlacer(size, first, last).offsets(order, fit)
    assert got.tolist() == plain_fit(size, first, last, order, fit)


@settings(max_examples=60, deadline=None)
@given(trace=merged_traces(sizes=([0, 1, 2, 3], [0, 5, 64])), fit=st.sampled_from([0, 1]))
def test_interval_and_bitset_placers_give_the_same_offsets(trace, fit):
    # The merged sweep (interval kernel) and the bucketed one (bitset kernel, `lowest_gap`),
    # empty buffers included (they sit between the spans the merge keeps sorted).
    size, first, last, order = trace
    overlap = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    np.fill_diagonal(overlap, False)
    masks = [sum(1 << int(j) for j in np.flatnonzero(row)) for row in overlap]
    bitset = dense_kernels.BitsetPlacer(size, dense_kernels.bitset_rows(masks, len(size)))
    interval = dense_kernels.IntervalPlacer(size, first, last)
    assert interval.offsets(order, fit).tolist() == bitset.offsets(order, fit).tolist()


def plain_runs(spans):
    """The union of the closed intervals [lo, hi] of `spans`, as sorted (lo, hi) components:
    spans that overlap or touch are one run, an empty span inside or at the edge of another
    adds nothing."""
    runs = []
    for lo, hi in sorted(spans):
        if runs and lo <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], hi))
        else:
            runs.append((lo, hi))
    return runs


@settings(max_examples=150, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 12))
                      .map(lambda t: (t[0], t[0] + t[1])), max_size=60))
def test_a_nodes_runs_are_the_union_of_its_spans(spans):
    base, fill = np.zeros(1, np.int64), np.zeros(1, np.int64)
    lo, hi = np.empty(len(spans) + 1, np.int64), np.empty(len(spans) + 1, np.int64)
    for k, (a, b) in enumerate(spans):
        before = plain_runs(spans[:k])
        held = dense_kernels._unite(base, fill, lo, hi, 0, a, b)
        assert held == any(x <= a and b <= y for x, y in before)
        assert list(zip(lo[:fill[0]].tolist(), hi[:fill[0]].tolist())) == plain_runs(spans[:k + 1])


node_lists = st.lists(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 30))
                               .map(lambda t: (t[0], t[0] + t[1])), max_size=25), max_size=8)


@settings(max_examples=150, deadline=None)
@given(lists=node_lists, need=st.integers(0, 40))
def test_first_and_best_fit_over_run_lists_are_the_lowest_gap(lists, need):
    # Several nodes' runs at once, as a request reads them: the same offsets as the lowest-gap
    # search over every span, one by one.
    runs = [plain_runs(spans) for spans in lists]
    lo = np.array([a for r in runs for a, _ in r], np.int64)
    hi = np.array([b for r in runs for _, b in r], np.int64)
    sizes = [len(r) for r in runs if r]
    starts = np.cumsum([0] + sizes)
    spans = [span for spans in lists for span in spans]
    for fit in (dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT):
        heads, tails = starts[:-1].copy(), starts[1:].copy()
        leaves = dense_kernels._tree_leaves(len(sizes))
        keys, tree = np.empty(leaves, np.int64), np.empty(3 * leaves, np.int64)
        if fit == dense_kernels.FIRST_FIT:
            at, _ = dense_kernels._settle(0, max(need, 1), len(sizes), heads, tails, lo, hi)
            if need > 0:
                assert at == plain_lowest(spans, need)
        else:
            at, _ = dense_kernels._best_fit(need, len(sizes), heads, tails, lo, hi, keys, tree)
        assert at == gap(spans, need, fit)


@pytest.mark.parametrize("seed", range(4))
def test_first_and_best_fit_over_hundreds_of_spans_per_lifetime(seed):
    # Long lifetimes over few steps meet hundreds of buffers starting inside them, merged into
    # runs on the start tree's nodes: the same offsets as the bitset kernel, which gathers
    # every conflicting buffer one by one.
    rng = np.random.default_rng(seed)
    n, steps = 1500, 60
    first = rng.integers(0, steps, n)
    last = np.minimum(first + np.where(rng.random(n) < 0.3, rng.integers(10, steps, n),
                                       rng.integers(0, 3, n)), steps - 1)
    size = rng.choice([0, 1, 8, 100, 4096, 2**20], n).astype(np.int64)
    order = rng.permutation(n).astype(np.int64)
    overlap = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    np.fill_diagonal(overlap, False)
    masks = [sum(1 << int(j) for j in np.flatnonzero(row)) for row in overlap]
    bitset = dense_kernels.BitsetPlacer(size, dense_kernels.bitset_rows(masks, n))
    interval = dense_kernels.IntervalPlacer(size, first, last)
    for fit in (dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT):
        assert interval.offsets(order, fit).tolist() == bitset.offsets(order, fit).tolist()


@pytest.mark.parametrize("seed", range(3))
def test_best_fit_on_a_dense_trace_is_the_bucketed_best_fit(seed):
    # A generated trace at Y_1's shape (thousands of buffers, most short-lived, sizes from a
    # palette, so gaps of exactly a request's size are common): best fit over the nodes' run
    # lists, which starts at first fit's gap, passes gaps narrower than the request list by
    # list and keeps the union of the last path's nodes (requests in order near it, far ones
    # out of order, long lifetimes joining nodes on it), against best fit over every
    # conflicting span gathered one by one.
    from bench.dense_trace import dense_arrays

    lower, upper, size = dense_arrays(3000, live=300, seed=seed)
    first, last = lower.astype(np.int64), (upper - 1).astype(np.int64)
    size = size.astype(np.int64)
    size[::17] = 0
    overlap = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    np.fill_diagonal(overlap, False)
    masks = [int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")
             for row in overlap]
    bitset = dense_kernels.BitsetPlacer(size, dense_kernels.bitset_rows(masks, len(size)))
    interval = dense_kernels.IntervalPlacer(size, first, last)
    index = np.arange(len(size))
    for order in (index, np.lexsort((index, first, -size)), index[::-1].copy()):
        assert (interval.offsets(order, dense_kernels.BEST_FIT).tolist()
                == bitset.offsets(order, dense_kernels.BEST_FIT).tolist())


@st.composite
def long_traces(draw):
    """Buffers over up to 600 steps, most short and in start order, some long or out of order:
    best fit's path cache rebuilds from where consecutive requests' paths part (never below
    its floor), serves far requests by the nodes themselves and takes inserts on its levels."""
    n = draw(st.integers(1, 150))
    steps = draw(st.integers(1, 600))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    first = np.sort(rng.integers(0, steps, n))
    length = np.where(rng.random(n) < 0.25, rng.integers(0, steps, n), rng.integers(0, 6, n))
    size = rng.choice(draw(st.sampled_from([[1, 2, 3], [1, 5, 64], [0, 7, 512]])), size=n)
    order = np.arange(n)
    swapped = np.flatnonzero(rng.random(n) < draw(st.sampled_from([0.0, 0.3, 1.0])))
    order[swapped] = rng.permutation(swapped)
    return (size.astype(np.int64), first.astype(np.int64),
            np.minimum(first + length, steps - 1).astype(np.int64), order.astype(np.int64))


@settings(max_examples=60, deadline=None)
@given(trace=long_traces())
def test_best_fit_over_many_steps_is_best_fit_by_definition(trace):
    size, first, last, order = trace
    got = dense_kernels.IntervalPlacer(size, first, last).offsets(order, dense_kernels.BEST_FIT)
    assert got.tolist() == plain_fit(size, first, last, order, dense_kernels.BEST_FIT)
