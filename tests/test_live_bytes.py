"""Live bytes over time: the curve of a chain of time steps, and the panel that shows it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.dag.graph_panel import GraphPanel  # noqa: E402
from slabscope.planner.conflicts.live_bytes import is_time_chain, live_bytes  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402

TRACE = "id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\nd,3,5,70\n"


def trace_graph(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text(TRACE)
    return planner.load(path), path


def test_live_bytes_add_up_the_buffers_live_at_each_step(tmp_path):
    graph, _ = trace_graph(tmp_path)
    assert is_time_chain(graph)
    curve = live_bytes(graph)
    # steps 0..4 (upper is exclusive): a, a+b, a+c, c+d, d
    assert curve.bytes.tolist() == [100, 150, 130, 100, 70]
    assert (curve.peak, curve.peak_step) == (150, 1)
    assert curve.peak == planner.lower_bound(graph, conflicts="serial").bytes


def test_a_program_graph_is_not_a_time_chain():
    assert not is_time_chain(planner.load(RELU_UNFUSED))


def test_the_central_panel_shows_live_bytes_for_a_trace_and_the_dag_otherwise(qtbot, tmp_path):
    graph, path = trace_graph(tmp_path)
    session = Session()
    session.set_graph(graph, path)
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    panel.resize(800, 500)
    panel.show()
    assert panel.shows_live_bytes()
    assert "peak</b> 150 B" in panel.live_view.summary.text()
    assert f"{session.plan.slab_bytes:,} B" in panel.live_view.summary.text()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert not panel.shows_live_bytes()
