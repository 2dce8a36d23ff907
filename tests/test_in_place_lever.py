"""The in-place lever: `explain` re-plans the graph as the opt-in in-place rule rewrites it and
gives its live peak, lower bound and slab before and after with what the user would change;
`explain --inplace` explains the rewritten graph; the Peak panel shows the lever."""

from __future__ import annotations

import json
from pathlib import Path

from slabscope import planner
from slabscope.app.cli import main
from slabscope.app.state.session import Session
from slabscope.app.views.panels.peak_panel import PeakPanel
from slabscope.planner.analysis.peak import live_peak
from slabscope.planner.conflicts.in_place import in_place
from tests.examples import DIAMOND, IN_PLACE_CHAIN


def _graph() -> planner.Graph:
    """mm makes x; relu (pointwise) reads x last and makes y of the same size; sum reads y."""
    return planner.graph_from_dict(IN_PLACE_CHAIN)


def _lever(found: planner.Explanation) -> planner.Lever:
    return next(lever for lever in found.levers if lever.lever == "in place")


def test_the_lever_is_the_rewritten_graph_replanned_with_before_and_after():
    graph = _graph()
    found = planner.explain(graph, conflicts="serial", budget=0.1)
    lever = _lever(found)
    after = planner.explain(in_place(graph).graph, conflicts="serial", levers=False)
    figures = {name: (before, later) for name, before, later in lever.figures}
    assert figures == {"live peak": (found.peak.bytes, after.peak.bytes),
                       "lower bound": (found.lower_bound_bytes, after.lower_bound_bytes),
                       "slab": (found.slab_bytes, after.slab_bytes)}
    assert lever.bytes_after == after.peak.bytes == live_peak(in_place(graph).graph).bytes
    assert lever.saving_bytes == found.peak.bytes - after.peak.bytes == 2048 - 1280  # w and s reserve 512 B each
    assert "inplace=True" in lever.change and "relu" in lever.change
    assert lever.to_dict()["figures"]["slab"] == {"before": found.slab_bytes,
                                                  "after": after.slab_bytes}


def test_the_lever_is_absent_where_the_rule_merges_nothing():
    found = planner.explain(planner.load(DIAMOND), budget=0.1)
    assert "in place" not in [lever.lever for lever in found.levers]
    assert all(lever.change for lever in found.levers)  # each says what the user would change


def test_explain_inplace_explains_the_rewritten_graph(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(IN_PLACE_CHAIN))
    assert main(["explain", str(path), "--budget", "0.1", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["explain", str(path), "--budget", "0.1", "--json", "--inplace"]) == 0
    shared = json.loads(capsys.readouterr().out)
    assert shared["in_place"] == {"y": "x"} and "in_place" not in plain
    lever = next(lever for lever in plain["levers"] if lever["lever"] == "in place")
    assert shared["peak_live_bytes"] == lever["figures"]["live peak"]["after"]
    assert "in place" not in [lever["lever"] for lever in shared["levers"]]  # already applied
    assert main(["explain", str(path), "--budget", "0.1"]) == 0
    assert "change: inplace=True on these ops (relu)" in capsys.readouterr().out


def test_the_peak_panel_shows_the_lever_and_what_to_change(qtbot):
    session = Session()
    session.set_graph(_graph())
    panel = PeakPanel(session, appliers={"in place": lambda: None})
    qtbot.addWidget(panel)
    rows = {panel.levers.topLevelItem(i).text(0): panel.levers.topLevelItem(i)
            for i in range(panel.levers.topLevelItemCount())}
    assert rows["in place"].text(4).startswith("inplace=True on these ops (relu)")
    button = panel.levers.apply_button(rows["in place"])
    assert button.text() == "Apply" and button.toolTip() == "Plan in place"



def test_a_steps_backward_and_optimizer_ops_are_not_told_inplace_true():
    # No module's inplace=True reaches autograd's backward ops or an optimizer's temporaries.
    step = planner.load(Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json")
    merged = in_place(step).merged
    producer = {b: n for n in step.nodes for b in n.outputs}
    assert {producer[b].attrs.get("phase") for b in merged} <= {"backward", "optimizer"}
    change = _lever(planner.explain(step, budget=0.1)).change
    assert "inplace=True" not in change
    assert change.startswith("in-place kernels for these backward and optimizer ops "
                             "(div, threshold_backward)")
    assert change.endswith(", or slabscope plan --inplace")
