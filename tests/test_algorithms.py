"""The placers under both conflict models: every plan verifies, search is never worse than first
fit, the array kernels agree with the traced placer, and the serial model shows the hazard."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.placement import dense_kernels, greedy, packing
from tests.examples import DIAMOND, RELU_UNFUSED
from tests.strategies import interval_graphs, small_graphs


@pytest.mark.parametrize("conflicts", ["dag", "serial"])
@settings(max_examples=40, deadline=None)
@given(graph=small_graphs())
def test_every_algorithm_plan_verifies_and_search_beats_first_fit(graph, conflicts):
    first_fit = planner.plan(graph, conflicts=conflicts)
    for algorithm in planner.ALGORITHMS:
        plan = planner.plan(graph, algorithm, conflicts=conflicts, budget=0.05)
        assert planner.verify(graph, plan).ok
        assert plan.conflict_model == conflicts
        assert len(plan.steps) == len(graph.buffers)
        if algorithm == "search":
            assert plan.slab_bytes <= first_fit.slab_bytes


@pytest.mark.parametrize("fit", ["first", "best"])
@settings(max_examples=40, deadline=None)
@given(graph=interval_graphs(), data=st.data())
def test_array_kernels_match_the_traced_placer(graph, fit, data):
    model = planner.conflict_model(graph, "serial")
    order = data.draw(st.permutations(range(len(graph.buffers))))
    traced = planner.placement.traced_placement.place(graph, model, tuple(order), fit=fit)
    order = np.asarray(order, dtype=np.int64)
    size = np.asarray(graph.reserved, dtype=np.int64)
    starts, adj = packing._interval_lists(model.first, model.last)
    for offsets in (packing.listed_offsets(order, size, starts, adj, greedy.FITS[fit]),
                    dense_kernels.IntervalPlacer(size, model.first, model.last)
                    .offsets(order, greedy.FITS[fit])):
        assert [int(offsets[graph.buffer_index[p.name]]) for p in traced.placements] == \
            [p.offset for p in traced.placements]


def test_kernel_plans_trace_lazily_and_respect_capacity():
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph, "largest-first", conflicts="serial")
    model = planner.conflict_model(graph, "serial")
    traced = planner.placement.traced_placement.place(graph, model, greedy.largest_first_order(graph, model))
    assert planner.verify(graph, plan).ok and tuple(plan.steps) == traced.steps
    with pytest.raises(planner.CapacityError, match="request 1"):
        planner.plan(graph, "largest-first", conflicts="serial", capacity=1_100_000)


def test_first_fit_keeps_the_golden_numbers():
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph)
    assert plan.slab_bytes == 1_196_288 and plan.algorithm == "first-fit"
    assert plan.by_name["t1"].offset == 0 and plan.by_name["y"].offset == 16_384


def test_largest_first_breaks_ties_by_first_use_then_name():
    graph = planner.graph_from_dict({
        "alignment": 1, "nodes": ["a", "b"], "edges": [["a", "b"]],
        "buffers": [{"name": "z", "bytes": 8, "uses": ["b"]},
                    {"name": "y", "bytes": 8, "uses": ["a", "b"]},
                    {"name": "x", "bytes": 8, "uses": ["b"]},
                    {"name": "big", "bytes": 9, "uses": ["b"]}],
    })
    plan = planner.plan(graph, "largest-first")
    assert plan.order == ("big", "y", "x", "z") and plan.algorithm == "largest-first"


def test_best_fit_takes_the_smallest_gap_that_holds_the_request():
    # At s0 the slab holds hole8 [0, 8), wall [8, 10), hole4 [10, 14), top [14, 16); at s1
    # only wall and top remain, leaving gaps of 8 and 4 bytes: best fit puts e in the 4.
    graph = planner.graph_from_dict({
        "alignment": 1, "nodes": ["s0", "s1"], "edges": [["s0", "s1"]],
        "buffers": [{"name": "hole8", "bytes": 8, "uses": ["s0"]},
                    {"name": "wall", "bytes": 2, "uses": ["s0", "s1"]},
                    {"name": "hole4", "bytes": 4, "uses": ["s0"]},
                    {"name": "top", "bytes": 2, "uses": ["s0", "s1"]},
                    {"name": "e", "bytes": 4, "uses": ["s1"]}],
    })
    first = planner.plan(graph, "first-fit", conflicts="serial")
    best = planner.plan(graph, "best-fit", conflicts="serial")
    assert first.by_name["e"].offset == 0
    assert best.by_name["e"].offset == 10 and best.algorithm == "best-fit"


def test_serial_model_lets_the_diamond_branches_share_bytes():
    graph = planner.load(DIAMOND)
    dag = planner.plan(graph, conflicts="dag")
    serial = planner.plan(graph, conflicts="serial")
    assert dag.by_name["q"].offset == 4096
    assert serial.by_name["q"].offset == 0  # only safe if b and c never run concurrently
    assert not planner.verify(graph, serial, planner.conflict_model(graph, "dag")).ok
    model = planner.conflict_model(graph, "serial")
    p, q = graph.buffer_index["p"], graph.buffer_index["q"]
    assert "may share bytes in this schedule" in model.explain(p, q)
    assert not model.conflicts(p, q)


def test_serial_model_falls_back_to_a_topological_order():
    graph = planner.graph_from_dict({
        "nodes": ["late", "early"], "edges": [["early", "late"]],
        "buffers": [{"name": "p", "bytes": 1, "uses": ["early"]},
                    {"name": "q", "bytes": 1, "uses": ["late"]}],
    })
    model = planner.conflict_model(graph, "serial")
    assert model.precedes(graph.buffer_index["p"], graph.buffer_index["q"])


@pytest.mark.parametrize("schedule, message", [
    (["a", "b", "b", "c", "d"], "lists node 'b' twice"),
    (["a", "b", "c"], "misses node 'd'"),
    (["a", "d", "b", "c"], "runs 'd' before 'b'"),
])
def test_a_bad_schedule_is_a_plan_error(schedule, message):
    graph = planner.load(DIAMOND)
    from dataclasses import replace

    with pytest.raises(planner.PlanError, match=message):
        planner.plan(replace(graph, schedule=tuple(schedule)), conflicts="serial")


def test_search_stops_at_the_lower_bound_and_names_the_winner():
    # Greedy in request order leaves a hole; the search finds the tight packing (peak 12).
    graph = planner.graph_from_dict({
        "alignment": 1, "nodes": ["s0", "s1", "s2"], "edges": [["s0", "s1"], ["s1", "s2"]],
        "buffers": [{"name": "a", "bytes": 4, "uses": ["s0"]},
                    {"name": "b", "bytes": 8, "uses": ["s0", "s1"]},
                    {"name": "c", "bytes": 4, "uses": ["s1", "s2"]},
                    {"name": "d", "bytes": 8, "uses": ["s2"]}],
    })
    plan = planner.plan(graph, "search", conflicts="serial", budget=5)
    assert plan.slab_bytes == planner.lower_bound(graph, "serial").bytes == 12
    assert plan.algorithm.startswith("search (")


def test_unknown_names_and_negative_budget_are_plan_errors():
    graph = planner.load(DIAMOND)
    with pytest.raises(planner.PlanError, match="unknown algorithm"):
        planner.plan(graph, "worst-fit")
    with pytest.raises(planner.PlanError, match="unknown conflict model"):
        planner.lower_bound(graph, "parallel")
    with pytest.raises(planner.PlanError, match="budget"):
        planner.plan(graph, "search", budget=-1)


def test_cli_reports_bound_gap_model_and_algorithm(capsys):
    import json

    from slabscope.app.cli import main

    assert main(["plan", str(DIAMOND), "--algorithm", "search", "--conflicts", "serial",
                 "--budget", "0.5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["conflicts"] == "serial" and data["algorithm"].startswith("search")
    assert data["lower_bound_bytes"] == 4096 and data["gap"] == 0.0
    assert main(["plan", str(DIAMOND), "--algorithm", "best-fit"]) == 0
    out = capsys.readouterr().out
    assert "lower bound" in out and "gap" in out


@pytest.mark.parametrize("fit", ["first", "best"])
def test_kernels_match_the_traced_placer_on_many_overlapping_spans(fit):
    """Enough buffers live together that the kernels bucket spans instead of sorting them."""
    rng = np.random.default_rng(7)
    steps = 30
    names = [f"s{i}" for i in range(steps)]
    buffers = []
    for b in range(300):
        first = int(rng.integers(steps))
        last = min(steps - 1, first + int(rng.integers(12)))
        buffers.append({"name": f"b{b}", "bytes": int(rng.integers(1, 5000)),
                        "uses": list(dict.fromkeys([names[first], names[last]]))})
    graph = planner.graph_from_dict({"alignment": 1, "nodes": names,
                                     "edges": [[a, b] for a, b in zip(names, names[1:])],
                                     "buffers": buffers, "schedule": names})
    model = planner.conflict_model(graph, "serial")
    order = rng.permutation(len(buffers))
    traced = planner.placement.traced_placement.place(graph, model, tuple(map(int, order)), fit=fit)
    size = np.asarray(graph.reserved, dtype=np.int64)
    starts, adj = packing._interval_lists(model.first, model.last)
    want = [p.offset for p in traced.placements]
    for offsets in (packing.listed_offsets(order, size, starts, adj, greedy.FITS[fit]),
                    dense_kernels.IntervalPlacer(size, model.first, model.last)
                    .offsets(order, greedy.FITS[fit])):
        assert [int(offsets[graph.buffer_index[p.name]]) for p in traced.placements] == want
