"""Lower bounds: the heaviest antichain (dag) and the peak of live bytes (serial), checked against
a brute-force maximum-weight clique of the conflict graph and against every algorithm's plan."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from tests.examples import DIAMOND, RELU_UNFUSED


@st.composite
def small_graphs(draw, max_nodes=8, max_buffers=9):
    """Random DAGs (edges only from lower to higher index) with a few buffers each."""
    n = draw(st.integers(1, max_nodes))
    names = [f"n{i}" for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    buffers = [{"name": f"b{b}", "bytes": draw(st.integers(0, 3000)),
                "uses": draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))}
               for b in range(draw(st.integers(1, max_buffers)))]
    perm = draw(st.permutations(range(n)))
    return planner.graph_from_dict({
        "alignment": draw(st.sampled_from([1, 16, 256])),
        "nodes": [names[i] for i in perm],
        "edges": [[names[i], names[j]] for i, j in edges],
        "buffers": buffers,
    })


def brute_force_clique(graph, model) -> int:
    """The heaviest set of pairwise conflicting buffers, by trying every subset."""
    n = len(graph.buffers)
    best = 0
    for k in range(1, n + 1):
        for subset in itertools.combinations(range(n), k):
            if all(model.conflicts(a, b) for a, b in itertools.combinations(subset, 2)):
                best = max(best, sum(graph.reserved[i] for i in subset))
    return best


@pytest.mark.parametrize("conflicts", ["dag", "serial"])
@settings(max_examples=60, deadline=None)
@given(graph=small_graphs())
def test_bound_is_the_heaviest_clique_and_its_witness_conflicts(graph, conflicts):
    model = planner.conflict_model(graph, conflicts)
    bound = planner.lower_bound(graph, conflicts)
    assert bound.bytes == brute_force_clique(graph, model)
    witness = [graph.buffer_index[name] for name in bound.witness]
    assert sum(graph.reserved[i] for i in witness) == bound.bytes
    assert all(model.conflicts(a, b) for a, b in itertools.combinations(witness, 2))


@pytest.mark.parametrize("conflicts", ["dag", "serial"])
@settings(max_examples=25, deadline=None)
@given(graph=small_graphs())
def test_no_plan_is_below_the_bound(graph, conflicts):
    bound = planner.lower_bound(graph, conflicts).bytes
    for algorithm in planner.ALGORITHMS:
        assert planner.plan(graph, algorithm, conflicts=conflicts, budget=0.05).slab_bytes >= bound


def test_worked_example_bound_equals_its_first_fit_slab():
    graph = planner.load(RELU_UNFUSED)
    bound = planner.lower_bound(graph)
    assert bound.bytes == 1_196_288
    assert set(bound.witness) == {"x", "w", "b", "workspace", "t0"}


def test_diamond_bound_differs_between_models():
    graph = planner.load(DIAMOND)
    assert planner.lower_bound(graph, "dag").bytes == 8192  # p and q may run together
    assert planner.lower_bound(graph, "serial").bytes == 4096  # one at a time in the schedule


def test_serial_bound_is_the_peak_of_live_bytes():
    graph = planner.graph_from_dict({
        "alignment": 1, "nodes": ["s0", "s1", "s2", "s3"],
        "edges": [["s0", "s1"], ["s1", "s2"], ["s2", "s3"]],
        "buffers": [{"name": "a", "bytes": 5, "uses": ["s0", "s1"]},
                    {"name": "b", "bytes": 3, "uses": ["s1", "s2"]},
                    {"name": "c", "bytes": 7, "uses": ["s2", "s3"]},
                    {"name": "d", "bytes": 2, "uses": ["s3"]}],
    })
    bound = planner.lower_bound(graph, "serial")
    assert (bound.bytes, bound.witness) == (10, ("b", "c"))


def test_antichain_bound_on_a_thousand_buffers():
    """A layered DAG the size of densenet121's activations: the flow bound (a clique search would
    not finish; bench/quality.py times it on densenet121 itself)."""
    layers, width = 100, 10
    nodes = [f"v{layer}_{k}" for layer in range(layers) for k in range(width)]
    edges = [[f"v{layer}_{k}", f"v{layer + 1}_{(k + d) % width}"]
             for layer in range(layers - 1) for k in range(width) for d in (0, 1)]
    buffers = [{"name": f"t{layer}_{k}", "bytes": 1024 * (1 + (layer * k) % 7),
                "uses": [f"v{layer}_{k}", f"v{layer + 1}_{k}"]}
               for layer in range(layers - 1) for k in range(width)]
    graph = planner.graph_from_dict({"nodes": nodes, "edges": edges, "buffers": buffers})
    bound = planner.lower_bound(graph)
    assert bound.bytes <= planner.plan(graph).slab_bytes
    model = planner.conflict_model(graph)
    witness = [graph.buffer_index[name] for name in bound.witness]
    assert sum(graph.reserved[i] for i in witness) == bound.bytes
    assert all(model.conflicts(a, b) for a in witness for b in witness if a != b)
