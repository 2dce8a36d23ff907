"""`explain` and `slabscope explain`: who is live at the live peak on every kind of input, every
grouping adding up, and levers whose savings are what running them gives."""

from __future__ import annotations

import json

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.allocator.allocator_replay import replay_graph
from slabscope.planner.allocator.caching_allocator import AllocatorSettings
from slabscope.planner.analysis.peak import live_peak
from tests.examples import DIAMOND, RELU_UNFUSED, TWO_BRANCHES, onnx_light_model
from tests.snapshot_builder import TINY_SNAPSHOT

PT2 = RELU_UNFUSED.parent.parent.parent / "tests" / "data" / "pt2" / "attention.pt2"
BUDGET = 0.2


def _csv(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("id,lower,upper,size\n0,0,3,4096\n1,1,2,8192\n2,2,5,1024\n3,3,4,2048\n")
    return path


def _inputs(tmp_path):
    return {"json": RELU_UNFUSED, "dag": DIAMOND, "csv": _csv(tmp_path), "snapshot": TINY_SNAPSHOT,
            "pt2": PT2}


def _live_by_hand(graph):
    """Each step's live reserved bytes from every buffer's first and last use, from scratch."""
    order = planner.conflict_model(graph, "serial").schedule
    at = {graph.nodes[v].name: t for t, v in enumerate(order)}
    spans = [(min(at[u] for u in b.uses), max(at[u] for u in b.uses)) for b in graph.buffers]
    totals = [sum(r for r, (lo, hi) in zip(graph.reserved, spans) if lo <= t <= hi)
              for t in range(len(order))]
    step = totals.index(max(totals))
    return max(totals), step, {graph.buffers[i].name for i, (lo, hi) in enumerate(spans)
                               if lo <= step <= hi}


@pytest.mark.parametrize("kind", ["json", "dag", "csv", "snapshot", "pt2"])
def test_every_input_lists_who_is_live_and_every_grouping_adds_up(tmp_path, kind):
    graph = planner.load(_inputs(tmp_path)[kind])
    data = planner.explain(graph, budget=BUDGET).to_dict()
    peak, step, live = _live_by_hand(graph)
    assert (data["peak_live_bytes"], data["peak_step"]) == (peak, step)
    assert {row["name"] for row in data["live_at_peak"]} == live
    assert sum(row["bytes"] for row in data["live_at_peak"]) == peak
    assert data["groups"] and "kind" in data["groups"]
    for rows in data["groups"].values():
        assert sum(row["bytes"] for row in rows) == peak
    assert data["lower_bound_bytes"] <= data["slab_bytes"]
    assert data["reserved_bytes"] == replay_graph(graph).peak_reserved_bytes
    json.dumps(data)  # every value is JSON


def test_a_snapshot_groups_by_frame_and_reports_the_recorded_reserved():
    graph = planner.load(TINY_SNAPSHOT)
    data = planner.explain(graph, budget=BUDGET).to_dict()
    assert set(data["groups"]) == {"kind", "frame"}
    assert all("frame" in row for row in data["live_at_peak"])
    assert data["recorded_reserved_bytes"] == graph.allocator.peak_reserved_bytes


def test_a_pt2_program_groups_by_op_and_module():
    data = planner.explain(planner.load(PT2), budget=BUDGET).to_dict()
    assert {"op", "module", "kind"} <= set(data["groups"])
    assert all(row["op"] for row in data["live_at_peak"])


def test_onnx_model_is_explained():
    graph = planner.load(onnx_light_model("light_densenet121.onnx"))
    found = planner.explain(graph, levers=False)
    assert found.peak.bytes == live_peak(graph).bytes
    assert sum(g.bytes for g in found.groups["op"]) == found.peak.bytes
    assert found.groups["op"][0].key  # ops are named, not "(none)"


def test_each_lever_is_what_running_it_gives():
    graph = planner.load(DIAMOND)
    found = planner.explain(graph, budget=BUDGET)
    levers = {lever.lever: lever for lever in found.levers}
    assert set(levers) == {"order", "packing", "allocator", "serial"}
    best = planner.schedule(graph, budget=BUDGET)
    assert levers["order"].bytes_after == best.peak_bytes
    assert levers["order"].bytes_after == live_peak(planner.with_schedule(graph, best.order)).bytes
    assert levers["order"].saving_bytes == found.peak.bytes - best.peak_bytes
    searched = planner.plan(graph, "search", conflicts=found.conflicts, budget=BUDGET,
                            iterations=planner.search_iterations(graph, found.conflicts))
    assert levers["packing"].bytes_after == searched.slab_bytes
    assert levers["packing"].saving_bytes == found.slab_bytes - searched.slab_bytes
    expandable = replay_graph(graph, AllocatorSettings(expandable_segments=True))
    assert levers["allocator"].bytes_after == expandable.peak_reserved_bytes
    assert levers["allocator"].saving_bytes == (found.reserved_bytes
                                                - expandable.peak_reserved_bytes)
    serial = planner.plan(graph, conflicts="serial")  # first fit, the order shown
    assert levers["serial"].bytes_after == serial.slab_bytes
    assert levers["serial"].saving_bytes == found.slab_bytes - serial.slab_bytes
    savings = [lever.saving_bytes for lever in found.levers]
    assert savings == sorted(savings, reverse=True)


def test_a_chain_has_no_order_lever_and_a_searched_plan_no_packing_lever(tmp_path):
    graph = planner.load(_csv(tmp_path))
    assert not {"order", "serial"} & {lever.lever
                                      for lever in planner.explain(graph, budget=BUDGET).levers}
    searched = planner.plan(graph, "search", conflicts="serial", budget=BUDGET)
    levers = planner.explain(graph, searched, budget=BUDGET).levers
    assert "packing" not in {lever.lever for lever in levers}


def test_cli_report_names_the_live_peak_groups_figures_and_levers(capsys):
    assert main(["explain", str(RELU_UNFUSED), "--top", "2", "--budget", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "live peak 1.1 MiB (1,196,288 B) at step 1 (lt_matmul)" in out
    assert "by op (" in out and "slab " in out and "lower bound" in out and "reserved" in out
    assert "levers (each run, largest saving first):" in out
    listed = out.split("largest buffers live at the live peak")[1].split("\n\n")[0]
    assert len(listed.strip().splitlines()) == 1 + 2  # the heading and --top rows


def test_cli_json_has_the_documented_keys(capsys):
    assert main(["explain", str(TINY_SNAPSHOT), "--json", "--budget", "0.1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"peak_live_bytes", "peak_step", "live_at_peak", "groups", "slab_bytes",
            "lower_bound_bytes", "reserved_bytes", "recorded_reserved_bytes", "levers"} <= set(data)
    assert all(set(lever) - {"figures"} == {"lever", "bytes_after", "saving_bytes", "how", "change"}
               for lever in data["levers"])


def test_cli_refuses_a_grouping_the_input_lacks_in_one_line(capsys):
    assert main(["explain", str(TINY_SNAPSHOT), "--by", "op", "--budget", "0.1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "groups by kind, frame" in err


def test_the_serial_lever_is_the_slab_when_the_ops_run_in_the_order_shown():
    graph = planner.graph_from_dict(TWO_BRANCHES)
    found = planner.explain(graph, budget=BUDGET)
    lever = next(lever for lever in found.levers if lever.lever == "serial")
    assert found.conflicts == "dag" and found.slab_bytes == planner.plan(graph).slab_bytes
    assert lever.bytes_after == planner.plan(graph, conflicts="serial").slab_bytes
    assert lever.saving_bytes == found.slab_bytes - lever.bytes_after > 0
    assert "--conflicts serial" in lever.change
    under_serial = planner.explain(graph, conflicts="serial", budget=BUDGET)
    assert "serial" not in {lever.lever for lever in under_serial.levers}


def test_the_order_levers_change_says_what_the_order_does():
    from pathlib import Path

    from slabscope.planner.analysis.explain import (_ORDER_CHANGE, _ORDER_CHANGE_STEP, _ORDER_KEPT,
                                                    _order_change)

    step = planner.load(Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json")
    recorded = list(step.schedule)
    phase = {node.name: node.attrs["phase"] for node in step.nodes}
    # The recorded order keeps every update after backward: running another order is the change.
    assert _order_change(step, tuple(recorded), 1) == _ORDER_CHANGE
    # An update moved before the last backward op: the optimizer step into backward.
    update = next(name for name in recorded if phase[name] == "optimizer")
    last_backward = max(k for k, name in enumerate(recorded) if phase[name] == "backward")
    recorded.remove(update)
    recorded.insert(last_backward - 1, update)
    assert _order_change(step, tuple(recorded), 1) == _ORDER_CHANGE_STEP
    assert _order_change(step, tuple(recorded), 0) == _ORDER_KEPT  # saving nothing: no change
    diamond = planner.load(DIAMOND)  # no training step: the order itself
    assert _order_change(diamond, tuple(node.name for node in diamond.nodes), 1) == _ORDER_CHANGE
