"""The run worker (background thread, progress, cancel, delivery) and the timeline panel."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMainWindow, QMenu

from slabscope import gpu
from slabscope import planner
from slabscope.app.qt.run_worker import RunController
from slabscope.app.state.session import Session
from slabscope.app.views.panels.run_actions import install_run_actions
from slabscope.app.views.timeline.timeline_view import EMPTY_TEXT, TimelineView, timeline_rows
from tests.examples import EXAMPLES, RELU_UNFUSED

DIAMOND_EXEC = EXAMPLES / "diamond_exec.json"


@pytest.fixture
def session(qtbot):
    s = Session()
    s.open(RELU_UNFUSED)
    return s


def test_worker_runs_in_the_background_and_delivers_to_the_session(qtbot, session):
    controller = RunController(session, backend="numpy", repeats=2)
    progress = []
    controller.sigProgress.connect(lambda fraction, phase: progress.append(phase))
    with qtbot.waitSignal(session.sigRunChanged, timeout=30000) as delivered:
        assert controller.start()
    report = delivered.args[0]
    assert session.last_run is report
    assert report.verification.ok and report.repeats == 2
    assert report.slab_bytes == session.plan.slab_bytes
    qtbot.waitUntil(lambda: not controller.running)
    assert progress[0] == "graph_compile" and progress[-1] == "done"


def test_worker_runs_with_the_sessions_settings(qtbot):
    s = Session()
    s.open(DIAMOND_EXEC)
    s.set_conflicts("serial")
    controller = RunController(s, backend="numpy", repeats=1)
    with qtbot.waitSignal(s.sigRunChanged, timeout=30000) as delivered:
        controller.start()
    assert delivered.args[0].conflicts == "serial"
    assert delivered.args[0].verification.ok  # the schedule's own order is safe
    qtbot.waitUntil(lambda: not controller.running)


def test_cancel_stops_the_run_without_delivering(qtbot, session):
    controller = RunController(session, backend="numpy", repeats=100000)
    delivered = []
    session.sigRunChanged.connect(delivered.append)
    messages = []
    controller.sigMessage.connect(messages.append)
    controller.start()
    qtbot.waitUntil(lambda: any("Running" in m for m in messages))
    controller.cancel()
    qtbot.waitUntil(lambda: not controller.running, timeout=30000)
    qtbot.waitUntil(lambda: "Run cancelled" in messages)
    assert delivered == []


def test_failure_is_a_session_error_not_an_exception(qtbot):
    s = Session()
    s.open(EXAMPLES / "diamond.json")  # plannable, but its nodes have no ops
    controller = RunController(s, backend="numpy", repeats=1)
    with qtbot.waitSignal(s.sigError, timeout=30000) as failed:
        controller.start()
    assert "has no op" in failed.args[0]
    qtbot.waitUntil(lambda: not controller.running)


def test_run_actions_go_into_the_given_menu(qtbot, session):
    window = QMainWindow()
    qtbot.addWidget(window)
    menu = QMenu("Run", window)
    controller = install_run_actions(window, session, menu)
    controller.backend, controller.repeats = "numpy", 1
    texts = [a.text() for a in menu.actions()]
    assert texts == ["&Run", "&Cancel Run"]
    assert window.run_action.shortcut().toString() == "Ctrl+R"
    assert not window.cancel_run_action.isEnabled()
    with qtbot.waitSignal(session.sigRunChanged, timeout=30000):
        window.run_action.trigger()
    qtbot.waitUntil(lambda: not controller.running)
    assert not window.cancel_run_action.isEnabled()


def test_timeline_shows_empty_state_then_a_report(qtbot, session):
    view = TimelineView(session)
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    assert view.empty.isVisibleTo(view) and view.empty.text() == EMPTY_TEXT
    assert not view.plot.isVisibleTo(view)
    report = gpu.run(session.graph, backend="numpy", repeats=3, measure_memory=False)
    session.set_last_run(report)
    assert view.plot.isVisibleTo(view) and not view.empty.isVisibleTo(view)
    header = view.header.text()
    assert "numpy" in header and report.device in header and "phases cover" in header
    assert "peak unknown" in header and "unavailable on numpy" in header
    assert "verified" in view.verdict.text()
    ticks = [label for _, label in view.plot.getPlotItem().getAxis("left")._tickLevels[0]]
    assert [t.split("  ")[0] for t in ticks[:4]] == ["graph_compile", "search", "prepare",
                                                     "execute ×3"]
    ops = list(dict.fromkeys(k.op for k in report.kernels))
    assert ticks[4].startswith("one execute  median")
    assert [t.split("  ")[0] for t in ticks[5:]] == [
        f"▸ {op} ×{sum(k.op == op for k in report.kernels)}" for op in ops]
    view.log_scale.setChecked(True)
    assert "log scale" in view.plot.getPlotItem().getAxis("bottom").labelText
    session.set_last_run(None)
    assert view.empty.isVisibleTo(view)


def test_timeline_rows_carry_measured_durations_and_shares(session):
    report = gpu.run(session.graph, backend="numpy", repeats=2, measure_memory=False)
    rows = timeline_rows(report)
    assert [r.seconds for r in rows[:4]] == [p.seconds for p in report.phases]
    assert f"{report.phase('prepare').share:.1%}" in rows[2].note
    # Phases end to end; the kernels of one execute start with execute and fit in one execute.
    assert [r.start for r in rows[1:4]] == [r.end for r in rows[:3]]
    assert rows[4].label.startswith("one execute") and rows[4].start == rows[3].start
    groups = rows[5:]  # one row per op, folded
    assert groups[0].start == rows[3].start
    assert all(b.start == a.end for a, b in zip(groups, groups[1:]))
    assert groups[-1].end - groups[0].start <= report.execute_seconds * (1 + 1e-9)
    assert all("of one execute" in r.note and r.group for r in groups)


def test_timeline_names_the_clobbered_buffer(qtbot):
    s = Session()
    s.open(DIAMOND_EXEC)
    view = TimelineView(s)
    qtbot.addWidget(view)
    graph = s.graph

    report = gpu.run(graph, backend="numpy", repeats=1, plan=planner.plan(graph, conflicts="serial"),
                     execute_order_names=["a", "c", "b", "d", "e"], measure_memory=False)
    s.set_last_run(report)
    text = view.verdict.text()
    assert "NOT VERIFIED" in text and "clobbered: q (read by d" in text
