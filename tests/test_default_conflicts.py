"""The conflict model a graph is planned under when the user names none: the one its file names
(a recorded training step names serial), else serial for a chain (a MiniMalloc trace), else dag;
and every command and the window name the model they used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.analysis.peak import live_peak
from slabscope.planner.formats.graph_writer import write_graph
from tests.examples import DIAMOND, LUMINAL_CHAIN

STEPS = Path(__file__).parent / "data" / "steps"
MLP_STEP = STEPS / "mlp_adam_step.json"


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("id,lower,upper,size\na,0,2,64\nb,1,3,64\nc,3,4,64\n")
    return path


def test_each_input_keeps_its_default(trace):
    assert planner.default_conflicts(planner.load(DIAMOND)) == "dag"
    assert planner.default_conflicts(planner.load(trace)) == "serial"
    for name in ("mlp_adam_step.json", "block_sgd_step.json"):
        assert planner.default_conflicts(planner.load(STEPS / name)) == "serial"


def test_the_model_a_file_names_wins_over_its_shape(tmp_path):
    diamond = json.loads(DIAMOND.read_text())
    chain = json.loads(LUMINAL_CHAIN.read_text())
    chain["schedule"] = [n if isinstance(n, str) else n["name"] for n in chain["nodes"]]
    assert planner.default_conflicts(planner.graph_from_dict(chain)) == "serial"
    assert planner.default_conflicts(planner.graph_from_dict({**chain, "conflicts": "dag"})) == \
        "dag"
    named = planner.graph_from_dict({**diamond, "conflicts": "serial"})
    assert named.conflicts == planner.default_conflicts(named) == "serial"
    # Written and read back, the file still names it.
    write_graph(named, tmp_path / "named.json")
    assert json.loads((tmp_path / "named.json").read_text())["conflicts"] == "serial"
    assert planner.load(tmp_path / "named.json").conflicts == "serial"


def test_plan_names_the_model_it_used_and_conflicts_overrides_it(capsys, trace):
    for path, model in ((MLP_STEP, "serial"), (DIAMOND, "dag"), (trace, "serial")):
        assert main(["plan", str(path)]) == 0
        out = capsys.readouterr().out
        assert f"conflicts {model}," in out.splitlines()[0] and f"({model} model)" in out, path
    assert main(["plan", str(MLP_STEP), "--conflicts", "dag"]) == 0
    out = capsys.readouterr().out
    assert "conflicts dag," in out.splitlines()[0] and "(dag model)" in out


def test_a_recorded_step_plans_to_its_recorded_live_peak_by_default(capsys):
    assert main(["plan", str(MLP_STEP), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert main(["plan", str(MLP_STEP), "--json", "--conflicts", "dag"]) == 0
    dag = json.loads(capsys.readouterr().out)
    peak = live_peak(planner.load(MLP_STEP)).bytes
    assert default["conflicts"] == "serial" and default["lower_bound_bytes"] == peak
    assert dag["conflicts"] == "dag" and dag["slab_bytes"] > default["slab_bytes"]
    # The Python entry points choose as the command line does.
    graph = planner.load(MLP_STEP)
    chosen = planner.plan(graph)
    assert chosen.conflict_model == "serial" and chosen.slab_bytes == default["slab_bytes"]
    assert planner.lower_bound(graph).bytes == default["lower_bound_bytes"]
    assert planner.plan(planner.load(DIAMOND)).conflict_model == "dag"


def test_explain_names_the_model_of_its_slab(capsys):
    assert main(["explain", str(MLP_STEP), "--by", "kind", "--budget", "0.1"]) == 0
    assert "(first-fit, serial conflicts)" in capsys.readouterr().out
    assert main(["explain", str(MLP_STEP), "--conflicts", "dag", "--budget", "0.1"]) == 0
    assert "(first-fit, dag conflicts)" in capsys.readouterr().out


def test_the_window_opens_a_recorded_step_under_serial_and_says_so(qtbot):
    from slabscope.app.state.session import Session
    from slabscope.app.views.export.export_title import export_title
    from slabscope.app.window import MainWindow
    from tests.qt_waits import settled

    win = MainWindow(Session())
    qtbot.addWidget(win)
    assert win.open_path(MLP_STEP)
    win.show()
    settled(qtbot, win)
    assert win.session.conflicts == win.session.plan.conflict_model == "serial"
    assert win.conflict_actions["serial"].isChecked()
    assert "serial conflicts" in win.summary_text()
    assert "serial&nbsp;conflicts" in win.slab_view.summary.text()
    assert "serial conflicts" in export_title(win.session)
