"""One vocabulary in the window: every panel marks the same live-peak step, and the headline leads
with live peak, slab, bound and gap (and for a snapshot, PyTorch reserved against the plan)."""

from __future__ import annotations

import pytest

from slabscope.app.state.session import Session
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.common.peak_headline import graph_live_peak
from slabscope.app.views.slab.slab_section import slab_section
from slabscope.app.window import MainWindow
from slabscope.planner.analysis.peak import live_peak
from tests.examples import RELU_UNFUSED
from tests.qt_waits import settled, show_tab
from tests.snapshot_builder import TINY_SNAPSHOT


def _window(qtbot, path):
    win = MainWindow(Session())
    qtbot.addWidget(win)
    assert win.open_path(path)
    win.show()
    settled(qtbot, win)
    return win


@pytest.mark.parametrize("path", [RELU_UNFUSED, TINY_SNAPSHOT])
def test_every_panel_marks_the_same_live_peak_step(qtbot, path):
    win = _window(qtbot, path)
    graph, plan = win.session.graph, win.session.plan
    live = graph_live_peak(graph)
    assert (live.bytes, live.step, live.buffers) == (lambda p: (p.bytes, p.step, p.buffers))(
        live_peak(graph))
    show_tab(qtbot, win, "lifetime")
    steps = win.lifetime_view._node_layer
    assert win.lifetime_view.live_peak_step() == steps[live.node] + 0.5
    assert slab_section(graph, plan).peak_step == steps[live.node]
    show_tab(qtbot, win, "allocator")
    table = win.allocator_panel.live_at_peak
    listed = [table.topLevelItem(i).text(1) for i in range(table.topLevelItemCount())]
    assert listed == [graph.buffers[b].name for b in live.buffers][:len(listed)] and listed
    assert f"live peak</b> {format_bytes(live.bytes)} at step {live.step:,}" in \
        win.allocator_panel.summary.text()
    live_view = win.graph_panel.live_view
    if live_view.curve is not None:  # a trace's central panel: live bytes over the steps
        assert live_view.curve.peak_step == live.step


def test_the_status_bar_leads_with_live_peak_and_compares_a_snapshot_with_reserved(qtbot):
    win = _window(qtbot, TINY_SNAPSHOT)
    text, plan = win.summary_text(), win.session.plan
    recorded = win.session.graph.allocator.peak_reserved_bytes
    change = (plan.slab_bytes - recorded) / recorded
    assert text.index("live peak") < text.index("slab") < text.index("bound") < \
        text.index("without reuse")
    assert (f"PyTorch reserved {format_bytes(recorded)}; a static plan needs "
            f"{format_bytes(plan.slab_bytes)} (\u2212{abs(change):.1%})") in text
    assert "saved" not in text


def test_the_live_peak_takes_the_first_users_the_buffer_names_found(monkeypatch):
    from slabscope import planner
    from slabscope.app.views.common.buffer_names import buffer_users
    from slabscope.planner.analysis import peak

    graph = planner.load(RELU_UNFUSED)
    users = buffer_users(graph)
    monkeypatch.setattr(peak, "first_users", lambda _graph: pytest.fail("found a second time"))
    live = graph_live_peak(graph)
    assert live.buffers and live.producers == tuple(int(users[b]) for b in live.buffers)
