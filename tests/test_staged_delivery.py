"""A new graph reaches the screen in stages: the window paints between the graph's delivery and
its plan's, and a large trace's live-bytes curve is drawn on the turn after the graph arrives."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QEvent, QObject  # noqa: E402

from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.timeline import live_bytes_view  # noqa: E402
from slabscope.app.window import MainWindow  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402
from tests.qt_waits import settled  # noqa: E402

TRACE = "id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\nd,3,5,70\n"


class PaintCounter(QObject):
    """Counts the window's paint requests (one per turn of the event loop that repaints)."""

    def __init__(self, window):
        super().__init__(window)
        self.count = 0
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self.count += 1
        return False


@pytest.fixture
def window(qtbot, monkeypatch):
    win = MainWindow(Session())
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)
    win.resize(1200, 800)
    win.show()
    return win


def test_the_window_paints_between_a_new_graph_and_its_plan(qtbot, window):
    paints, seen = PaintCounter(window), {}
    window.session.sigGraphChanged.connect(lambda: seen.setdefault("graph", paints.count))
    window.session.sigPlanChanged.connect(
        lambda old, new: new is not None and seen.setdefault("plan", paints.count))
    window.open_path(RELU_UNFUSED)
    qtbot.waitUntil(lambda: "plan" in seen, timeout=20000)
    assert seen["plan"] > seen["graph"]  # the graph was painted before the plan came
    settled(qtbot, window)
    assert window.session.plan is not None


def test_a_large_traces_curve_is_drawn_on_the_turn_after_its_graph(qtbot, window, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setattr(live_bytes_view, "STAGED_BUFFERS", 4)  # this trace counts as large
    path = tmp_path / "trace.csv"
    path.write_text(TRACE)
    live = window.graph_panel.live_view
    at_graph = []
    window.session.sigGraphChanged.connect(lambda: at_graph.append(live.curve))
    window.open_path(path)
    qtbot.waitUntil(lambda: live.curve is not None, timeout=20000)
    assert at_graph == [None]  # nothing drawn (nor hoverable) in the graph's own slice
    assert live.curve.bytes.tolist() == [100, 150, 130, 100, 70]
    settled(qtbot, window)
    assert "peak</b> 150 B" in live.summary.text()
    assert f"{window.session.plan.slab_bytes:,} B" in live.summary.text()


def test_a_small_traces_curve_is_drawn_with_its_graph(qtbot, window, tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text(TRACE)
    live = window.graph_panel.live_view
    at_graph = []
    window.session.sigGraphChanged.connect(
        lambda: at_graph.append(None if live.curve is None else live.curve.bytes.tolist()))
    window.open_path(path)
    settled(qtbot, window)
    assert at_graph == [[100, 150, 130, 100, 70]]
