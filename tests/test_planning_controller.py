"""Planning in the background: cancel, newest settings win, undo without waiting, the window's
busy marks, and an event loop that keeps running while a search does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest

from slabscope import planner
from slabscope.app.qt.planning_controller import PlanningController
from slabscope.app.state.session import Session
from slabscope.app.window import MainWindow
from tests.examples import write_slow_search_trace

LONG_BUDGET = 30.0  # a search that would run far longer than any test waits


@pytest.fixture
def trace(tmp_path):
    """A MiniMalloc trace whose search does not reach the lower bound early."""
    return write_slow_search_trace(tmp_path / "trace.csv")


@pytest.fixture
def background(qtbot, trace):
    """A session on `trace` (first fit, planned), with a PlanningController as its executor."""
    controller = PlanningController()
    session = Session()
    session.set_graph(planner.load(trace), trace)
    session.use_executor(controller)
    submitted = []
    submit = controller.submit
    controller.submit = lambda task: (submitted.append(task), submit(task))
    yield session, controller, submitted
    controller.shutdown()


def start_long_search(qtbot, session) -> None:
    session.budget = LONG_BUDGET
    session.set_algorithm("search")
    assert session.busy is not None
    qtbot.wait(200)  # let it get going on the worker


def test_a_cancelled_search_stops(qtbot, background):
    session, controller, _ = background
    first_fit = session.plan
    start_long_search(qtbot, session)
    assert controller.running and session.plan is None
    session.cancel()
    qtbot.waitUntil(lambda: not controller.running, timeout=5000)  # long before its budget
    assert session.busy is None and session.plan is None
    assert session.shown_plan is first_fit and session.plan_stale


def test_a_reorder_during_a_search_cancels_it_and_the_newest_settings_win(qtbot, background):
    session, controller, submitted = background
    start_long_search(qtbot, session)
    arrived = []
    session.sigPlanChanged.connect(lambda old, new: arrived.append(new))
    session.budget = 0.2
    newest = list(reversed(session.order))
    session.set_order(newest)
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10000)
    assert submitted[0].token.cancelled and not submitted[-1].token.cancelled
    assert arrived == [session.plan]  # only the newest settings' plan reached the session
    assert session.order == tuple(newest) and session.plan.algorithm.startswith("search")
    assert planner.verify(session.graph, session.plan).ok


def test_undo_and_redo_put_the_earlier_plans_back_at_once(qtbot, background):
    session, controller, submitted = background
    session.budget = 0.2
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10000)
    searched = session.plan
    session.set_order(list(reversed(session.order)))
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10000)
    reordered, planned = session.plan, len(submitted)
    # The plan arrives before the worker's thread has ended: wait for it, so that "running"
    # below can only mean undo or redo started something.
    qtbot.waitUntil(lambda: not controller.running, timeout=10000)
    session.undo_stack.undo()
    assert session.plan is searched and session.busy is None  # no waiting, no worker
    assert [p.offset for p in session.plan.placements] == [p.offset for p in searched.placements]
    session.undo_stack.redo()
    assert session.plan is reordered
    assert len(submitted) == planned and not controller.running


def test_the_event_loop_keeps_running_during_a_search(qtbot, background):
    session, controller, _ = background
    ticks = [0]
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    session.budget = 1.0
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10000)
    timer.stop()
    # A search on this thread would let the timer fire once, after it; the loop served it
    # throughout. (How long the loop stalls is bench/app_speed.py's to measure, not a test's.)
    assert ticks[0] >= 20


def test_the_window_says_what_runs_marks_busy_panels_and_escape_stops_it(qtbot, trace,
                                                                       monkeypatch):
    window = MainWindow(Session())
    qtbot.addWidget(window)
    monkeypatch.setattr(window, "confirm_discard", lambda: True)  # closes without asking
    window.show()
    window.open_path(trace)
    assert window.session.loading  # returned at once, the load is on its way
    qtbot.waitUntil(lambda: window.session.plan is not None, timeout=10000)
    assert not window.busy_overlays["slab"].isVisible()
    window.session.budget = LONG_BUDGET
    window.session.set_algorithm("search")
    qtbot.wait(2 * 200 + 50)  # two ticks of the running count
    status = window.busy_label.text()
    assert status.startswith("Planning trace (search") and " s " in status
    assert float(status.split("… ")[1].split(" s")[0]) > 0.3
    assert window.busy_overlays["slab"].isVisible()
    # The earlier plan until search's first best-so-far arrives; then that one, marked.
    shown = window.busy_overlays["slab"].text
    assert shown == "Planning… the earlier plan is shown" or (
        shown.startswith("Searching… best so far") and shown.endswith("(provisional)"))
    assert not window.busy_overlays["graph"].isVisible()  # the graph waits for loads only
    assert "(planning…)" in window.windowTitle()
    assert window.cancel_action.isEnabled()
    QTest.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.planning.running, timeout=5000)
    assert window.busy_label.text() == ""
    assert window.busy_overlays["slab"].text == "Out of date: planning was cancelled"
    assert "(plan out of date)" in window.windowTitle()
    assert "out of date" in window.summary_text()
    window.session.undo_stack.undo()  # first fit again, kept
    assert window.session.plan is not None and "out of date" not in window.windowTitle()
    assert not window.busy_overlays["slab"].isVisible()


def test_warm_up_runs_on_the_worker(qtbot):
    controller = PlanningController()
    controller.warm_up()
    assert controller.running  # it returned while the worker compiles
    qtbot.waitUntil(lambda: not controller.running, timeout=60000)
    controller.shutdown()


def test_warm_up_waits_behind_a_request(qtbot, background):
    session, controller, _ = background
    session.set_algorithm("best-fit")
    controller.warm_up()
    assert controller._thread.task.label.startswith("Planning")  # the request goes first
    qtbot.waitUntil(lambda: session.plan is not None, timeout=10000)
    qtbot.waitUntil(lambda: not controller.running, timeout=60000)
