"""The window's one executor: progress in the status bar, Cancel and Esc, superseded work
ignored, search's best plan so far shown (marked provisional) before the final one, one-line
errors, and runs on the same executor."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from slabscope import planner
from slabscope.app.qt import task_executor
from slabscope.app.qt.task_executor import TaskExecutor, TaskLane
from slabscope.app.state.session import Session
from slabscope.app.state.tasks import Task
from slabscope.app.window import MainWindow
from slabscope.planner.support.cancel import Cancelled
from tests.examples import RELU_UNFUSED, write_slow_search_trace
from tests.qt_waits import settled

LONG_BUDGET = 30.0  # a search that would run far longer than any test waits


@pytest.fixture
def trace(tmp_path):
    """A MiniMalloc trace whose search keeps improving and does not reach the bound early."""
    return write_slow_search_trace(tmp_path / "trace.csv")


@pytest.fixture
def window(qtbot, trace, monkeypatch):
    """The window on `trace`, planned by first fit."""
    win = MainWindow(Session())
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)  # closes without asking
    win.show()
    win.open_path(trace)
    qtbot.waitUntil(lambda: win.session.plan is not None, timeout=20000)
    settled(qtbot, win)
    return win


def start_long_search(window) -> None:
    window.session.budget = LONG_BUDGET
    window.session.set_algorithm("search")


def test_progress_shows_in_the_status_bar_and_cancel_leaves_the_earlier_plan(qtbot, window):
    session, progress = window.session, window.task_progress
    first_fit = session.plan
    assert not progress.isVisible()
    start_long_search(window)
    # The Peak panel's levers run a search too: wait for the plan's own search to show.
    qtbot.waitUntil(lambda: progress.isVisible() and progress.phase.text() == "search"
                    and progress.bar.toolTip().startswith("Planning trace (search")
                    and progress.bar.value() >= 1, timeout=20000)
    assert progress.cancel_button.isVisible()
    qtbot.mouseClick(progress.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.planning.running, timeout=5000)  # long before its budget
    qtbot.waitUntil(lambda: not progress.isVisible())  # the status bar hears of it a turn later
    assert session.plan is None and session.shown_plan is first_fit and session.plan_stale
    assert not session.plan_provisional
    assert window.slab_view.slab_end.value() == first_fit.slab_bytes  # the bar shows it again


def test_the_slab_bar_shows_searchs_best_plan_so_far_marked_provisional(qtbot, window):
    session = window.session
    first_fit = session.plan
    start_long_search(window)
    qtbot.waitUntil(lambda: session.plan_provisional, timeout=20000)
    provisional = session.provisional_plan
    assert session.plan is None and session.shown_plan is provisional
    assert provisional.algorithm.startswith("search") and "search continues" in provisional.proof
    assert planner.verify(session.graph, provisional).ok
    assert provisional.slab_bytes <= first_fit.slab_bytes  # search never loses to first fit
    assert window.slab_view.slab_end.value() == provisional.slab_bytes
    assert window.busy_overlays["slab"].text.endswith("(provisional)")
    assert "provisional" in window.summary_text()
    QTest.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.planning.running, timeout=5000)
    assert session.shown_plan is first_fit and session.provisional_plan is None
    assert window.slab_view.slab_end.value() == first_fit.slab_bytes
    assert "provisional" not in window.summary_text()


def test_a_search_shows_a_partial_plan_before_the_final_one(qtbot, window, monkeypatch):
    monkeypatch.setattr(task_executor, "PARTIAL_INTERVAL", 0.0)  # every improvement is shown
    monkeypatch.setattr(task_executor, "PARTIAL_COST_FACTOR", 0.0)
    session = window.session
    events = []
    session.sigProvisionalPlan.connect(lambda old, new: events.append(("partial", new)))
    session.sigPlanChanged.connect(lambda old, new: events.append(("final", new)))
    session.iterations = 40  # a fixed amount of work: the same plans on any machine
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan is not None, timeout=30000)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "partial" and kinds[-1] == "final" and kinds.count("final") == 1
    partials = [plan for kind, plan in events if kind == "partial"]
    heights = [plan.slab_bytes for plan in partials]
    assert heights == sorted(heights, reverse=True)  # each one better than the last
    assert session.plan.slab_bytes <= heights[-1]
    assert session.provisional_plan is None and not session.plan_provisional
    # Watching does not change what search finds: the same plan as without a listener.
    alone = planner.plan(session.graph, algorithm="search", order=session.order,
                         conflicts=session.conflicts, iterations=40)
    assert [p.offset for p in alone.placements] == [p.offset for p in session.plan.placements]


def test_a_superseded_tasks_late_result_progress_and_partials_are_ignored(qtbot):
    lane = TaskLane("test")
    started, release = threading.Event(), threading.Event()
    done, failed, partials, progress = [], [], [], []
    lane.sigProgress.connect(lambda task, phase, fraction: progress.append(phase))

    def stubborn(token):
        """Ignores its cancel until released, then reports, offers and returns anyway."""
        started.set()
        release.wait(10)
        for late in (lambda: token.report("late", 0.5), lambda: token.offer(lambda: "late")):
            try:
                late()
            except Cancelled:
                pass
        return "old"

    old = Task("old", stubborn, done.append, failed.append, partial=partials.append)
    new = Task("new", lambda token: (token.report("new", 1.0), "new")[1], done.append,
               failed.append, partial=partials.append)
    lane.submit(old)
    assert started.wait(10)
    lane.submit(new)
    assert old.token.cancelled and lane.current is old  # the new task waits for it to stop
    release.set()
    qtbot.waitUntil(lambda: not lane.running, timeout=10000)
    assert done == ["new"] and failed == [] and partials == []
    assert "late" not in progress and progress == ["new"]


def test_progress_is_throttled_but_every_phase_arrives(qtbot):
    lane = TaskLane("test")
    phases = []
    lane.sigProgress.connect(lambda task, phase, fraction: phases.append(phase))
    reports = 20000

    def chatty(token):
        token.report("first", 0.0)
        for i in range(reports):
            token.report("loop", i / reports)
        token.report("last", 1.0)
        return "done"

    with qtbot.waitSignal(lane.sigEnded, timeout=20000):
        lane.submit(Task("chatty", chatty, lambda result: None, lambda message: None))
    qtbot.waitUntil(lambda: not lane.running, timeout=5000)
    assert phases[0] == "first" and phases[-1] == "last" and "loop" in phases
    assert len(phases) < reports // 10  # the GUI thread is not handed every report


def test_a_failure_arrives_as_one_line(qtbot):
    lane = TaskLane("test")
    failed, ended = [], []
    lane.sigEnded.connect(lambda task, how: ended.append(how))

    def broken(token):
        raise ValueError("trace.csv: row 3 has no size\n  (and a second line nobody needs)")

    lane.submit(Task("broken", broken, lambda result: None, failed.append))
    qtbot.waitUntil(lambda: not lane.running, timeout=5000)
    assert failed == ["trace.csv: row 3 has no size"] and ended == ["failed"]


def test_a_failed_plan_is_one_line_in_the_window(qtbot, window):
    window.session.set_capacity(4096)  # far below any plan of the trace
    settled(qtbot, window)
    message = window.last_error
    assert message.startswith("capacity exceeded") and "\n" not in message
    assert window.statusBar().currentMessage() == message


def test_the_executor_shows_the_newest_task_and_runs_lanes_side_by_side(qtbot):
    executor = TaskExecutor()
    release = threading.Event()
    first, second = executor.lane("a"), executor.lane("b")
    assert executor.lane("a") is first
    with pytest.raises(ValueError):
        executor.add(TaskLane("a"))

    def held(token):
        token.report("holding", None)
        release.wait(10)

    first.submit(Task("first", held, lambda r: None, lambda m: None))
    second.submit(Task("second", held, lambda r: None, lambda m: None))
    qtbot.waitUntil(lambda: executor.activity() is not None
                    and executor.activity().phase == "holding"
                    and executor.activity().label == "second", timeout=5000)
    assert first.running and second.running
    release.set()
    qtbot.waitUntil(lambda: not executor.running, timeout=5000)
    assert executor.activity() is None


@pytest.fixture
def relu_window(qtbot, monkeypatch):
    win = MainWindow(Session())
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)
    win.show()
    win.open_path(RELU_UNFUSED)
    settled(qtbot, win)
    return win


def test_a_run_goes_through_the_windows_executor_and_escape_cancels_it(qtbot, relu_window):
    window = relu_window
    controller = window.run_controller
    assert controller.lane is window.executor.lane("run")
    controller.backend, controller.repeats = "numpy", 100000
    messages = []
    controller.sigMessage.connect(messages.append)
    window.run_action.trigger()
    qtbot.waitUntil(lambda: window.task_progress.isVisible()
                    and window.task_progress.bar.toolTip().startswith("Running"), timeout=20000)
    assert window.cancel_action.isEnabled()  # Esc stops a run when nothing plans
    QTest.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not controller.running, timeout=30000)
    qtbot.waitUntil(lambda: "Run cancelled" in messages)
    assert window.session.last_run is None
    progress = window.task_progress  # the Peak panel's levers may still be measured: not the run
    qtbot.waitUntil(lambda: not progress.isVisible() or not progress.bar.toolTip().startswith("Running"))
