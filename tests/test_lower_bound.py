"""Lower bounds: the heaviest antichain (dag) and the peak of live bytes (serial), checked against
a brute-force maximum-weight clique of the conflict graph and against every algorithm's plan."""

import itertools

import pytest
from hypothesis import given, settings

from slabscope import planner
from tests.examples import DIAMOND, RELU_UNFUSED
from tests.oracles import brute_force_clique
from tests.strategies import small_graphs


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
