"""Property tests on random DAGs: plans verify, first fit is deterministic, precedes is a strict
partial order, and the bitset conflict sets agree with a plain pairwise definition."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from tests.oracles import plain_precedes, plain_reaches


@st.composite
def graph_data(draw, max_nodes=9, max_buffers=10):
    n = draw(st.integers(1, max_nodes))
    names = [f"n{i}" for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    buffers = []
    for b in range(draw(st.integers(1, max_buffers))):
        uses = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        size = draw(st.integers(0, 5000))
        buffers.append({"name": f"b{b}", "bytes": size, "uses": uses})
    alignment = draw(st.sampled_from([1, 16, 256]))
    # Shuffle node declaration order so topological order differs from index order.
    perm = draw(st.permutations(range(n)))
    return {
        "alignment": alignment,
        "nodes": [names[i] for i in perm],
        "edges": [[names[i], names[j]] for i, j in edges],
        "buffers": buffers,
    }


def graphs():
    return graph_data().map(planner.graph_from_dict)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_plan_verifies_and_never_overlaps_a_conflicting_buffer(graph):
    plan = planner.plan(graph)
    assert planner.verify(graph, plan).ok
    reach = plain_reaches(graph)
    spans = {p.name: (p.offset, p.end) for p in plan.placements}
    for a, b in itertools.combinations(graph.buffers, 2):
        if not plain_precedes(reach, a, b) and not plain_precedes(reach, b, a):
            (lo1, hi1), (lo2, hi2) = spans[a.name], spans[b.name]
            assert hi1 <= lo2 or hi2 <= lo1, (a.name, b.name)


@settings(max_examples=100, deadline=None)
@given(graph_data(), st.randoms(use_true_random=False))
def test_first_fit_is_deterministic(data, rng):
    order = [b["name"] for b in data["buffers"]]
    rng.shuffle(order)
    first = planner.plan(planner.graph_from_dict(data), order=order)
    again = planner.plan(planner.graph_from_dict(data), order=order)
    assert first == again


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_precedes_is_a_strict_partial_order_matching_the_definition(graph):
    model = planner.conflict_model(graph)
    reach = plain_reaches(graph)
    n = len(graph.buffers)
    for a in range(n):
        assert not model.precedes(a, a)
        for b in range(n):
            assert model.precedes(a, b) == plain_precedes(reach, graph.buffers[a], graph.buffers[b])
            if model.precedes(a, b):
                assert not model.precedes(b, a)
                for c in range(n):
                    if model.precedes(b, c):
                        assert model.precedes(a, c)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_conflict_masks_match_pairwise_conflicts(graph):
    model = planner.conflict_model(graph)
    n = len(graph.buffers)
    for a in range(n):
        expected = {b for b in range(n) if model.conflicts(a, b)}
        assert set(planner.model.bitset.members(model.conflict_mask(a))) == expected
