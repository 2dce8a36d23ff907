"""Every number of docs/semantics.md §4 (the worked example), reproduced by the planner."""

import pytest

from slabscope import planner
from tests.examples import DIAMOND, LUMINAL_CHAIN, LUMINAL_JOIN, RELU_FUSED, RELU_UNFUSED

RELU_OFFSETS = {"x": 0, "w": 65_536, "b": 131_072, "workspace": 131_328, "t0": 1_179_904,
                "t1": 0, "y": 16_384}
RELU_BYTES = {"x": 65_536, "w": 65_536, "b": 256, "workspace": 1_048_576, "t0": 16_384,
              "t1": 16_384, "y": 16_384}


def offsets(plan):
    return {p.name: p.offset for p in plan.placements}


def test_relu_unfused_offsets_and_slab():
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph)
    assert offsets(plan) == RELU_OFFSETS
    assert {p.name: p.bytes for p in plan.placements} == RELU_BYTES
    assert plan.order == ("x", "w", "b", "workspace", "t0", "t1", "y")
    assert plan.slab_bytes == 1_196_288
    assert plan.no_reuse_bytes == 1_229_056
    assert planner.verify(graph, plan).ok


def test_relu_uses_derived_from_node_operands():
    graph = planner.load(RELU_UNFUSED)
    uses = {b.name: set(b.uses) for b in graph.buffers}
    assert uses == {"x": {"upload", "lt_matmul"}, "w": {"upload", "lt_matmul"},
                    "b": {"upload", "add_bias"}, "workspace": {"lt_matmul"},
                    "t0": {"lt_matmul", "add_bias"}, "t1": {"add_bias", "relu"},
                    "y": {"relu", "readback"}}


def test_relu_trace_matches_the_lesson():
    plan = planner.plan(planner.load(RELU_UNFUSED))
    conflicts = {s.name: s.conflicts for s in plan.steps}
    assert conflicts["t1"] == ("b", "t0")
    assert conflicts["y"] == ("t1",)
    assert conflicts["t0"] == ("x", "w", "b", "workspace")
    assert {s.name: s.reuses for s in plan.steps}["t1"] == ("x",)
    assert plan.steps[5].narration() == "t1 conflicts with b and t0; lands at 0, in x's bytes"
    assert plan.steps[6].skipped_gaps == ()


def test_y_conflicts_with_t1_through_relu():
    graph = planner.load(RELU_UNFUSED)
    model = planner.conflict_model(graph)
    t1, y, x = (graph.buffer_index[n] for n in ("t1", "y", "x"))
    assert model.conflicts(t1, y)
    assert model.precedes(x, t1) and not model.precedes(t1, x)
    assert "lt_matmul cannot reach itself" in model.explain(x, graph.buffer_index["t0"])


def test_reordered_requests_give_the_same_slab():
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph, order=["t1", "y", "x", "w", "b", "workspace", "t0"])
    assert plan.slab_bytes == 1_196_288
    assert offsets(plan)["t1"] == 0 and offsets(plan)["y"] == 16_384 and offsets(plan)["x"] == 0
    assert planner.verify(graph, plan).ok


def test_order_changes_the_result_in_general():
    graph = planner.graph_from_dict({"nodes": ["n1", "n2"], "edges": [["n1", "n2"]], "buffers": [
        {"name": "s", "bytes": 256, "uses": ["n1"]}, {"name": "m", "bytes": 256, "uses": ["n1", "n2"]},
        {"name": "L", "bytes": 512, "uses": ["n2"]}]})
    assert planner.plan(graph, order=["s", "m", "L"]).slab_bytes == 1024  # s fragments the slab
    assert planner.plan(graph, order=["m", "s", "L"]).slab_bytes == 768


def test_fused_plan_has_the_same_slab():
    graph = planner.load(RELU_FUSED)
    plan = planner.plan(graph)
    assert plan.slab_bytes == 1_196_288
    assert planner.verify(graph, plan).ok


def test_diamond_branches_never_alias():
    plan = planner.plan(planner.load(DIAMOND))
    assert offsets(plan) == {"p": 0, "q": 4096, "r": 0}


def test_luminal_join_capacity_768_fits():
    plan = planner.plan(planner.load(LUMINAL_JOIN), capacity=768)
    assert offsets(plan) == {"a": 0, "b": 512, "joined": 0}


def test_luminal_join_capacity_767_fails_naming_the_request():
    with pytest.raises(planner.CapacityError, match="request 1 'b'") as caught:
        planner.plan(planner.load(LUMINAL_JOIN), capacity=767)
    assert caught.value.request_name == "b"


def test_luminal_chain_capacity_32_fits():
    plan = planner.plan(planner.load(LUMINAL_CHAIN), capacity=32)
    assert offsets(plan) == {"0": 0, "1": 16, "2": 16}


def test_luminal_chain_capacity_31_fails():
    with pytest.raises(planner.CapacityError, match="request 1 '1'"):
        planner.plan(planner.load(LUMINAL_CHAIN), capacity=31)


def test_zero_byte_buffer_reserves_one_aligned_unit():
    graph = planner.graph_from_dict({"nodes": ["a"], "buffers": [
        {"name": "empty", "bytes": 0, "uses": ["a"]}, {"name": "full", "bytes": 1, "uses": ["a"]}]})
    plan = planner.plan(graph)
    assert [(p.offset, p.reserved) for p in plan.placements] == [(0, 256), (256, 256)]


def test_verify_reports_overlap_misalignment_and_overrun():
    graph = planner.load(RELU_UNFUSED)
    good = planner.plan(graph)
    bad = planner.Plan(
        placements=tuple(planner.Placement(p.name, {"y": 0, "w": 65_537}.get(p.name, p.offset),
                                           p.bytes, p.reserved) for p in good.placements),
        steps=good.steps, slab_bytes=1_000_000, no_reuse_bytes=good.no_reuse_bytes,
        algorithm="hand-made", conflict_model="dag", alignment=256)
    problems = planner.verify(graph, bad).problems
    assert any("'t1' and 'y' conflict but share bytes" in p or "'y' and 't1'" in p for p in problems)
    assert any("'w' at offset 65,537 is not aligned" in p for p in problems)
    assert any("'workspace'" in p and "past the slab's end" in p for p in problems)
