"""Shared test setup: Qt offscreen, isolated QSettings, and no QThread or QTimer left running."""

from __future__ import annotations

import os

# Must be set before any Qt import so GUI tests never need a display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gc  # noqa: E402
import weakref  # noqa: E402

import pytest  # noqa: E402


def _packing_kernels():
    from slabscope.planner.placement.packing import warm_up

    warm_up()


def _prescan_kernels():
    from pathlib import Path

    from slabscope import planner

    planner.load(Path(__file__).parent / "data" / "tiny_snapshot.pickle")


def _clique_kernels():
    from slabscope.planner.placement import exact_cliques

    exact_cliques.warm_up()


def _exact_kernels():
    from slabscope.planner.placement import exact

    exact.warm_up()


# The planner's kernels in groups, dealt out to the workers in turn: with two, about 35 and 40 s
# of CPU in a cold tree. The packing kernels, which nearly every test needs, come first; exact
# search, which also uses packing's interval lists, comes after the pickle pre-scan, by when
# another worker has cached those.
KERNEL_GROUPS = (_packing_kernels, _prescan_kernels, _clique_kernels, _exact_kernels)


def pytest_configure(config):
    """In a worker of `pytest -n N`, compile (or load from numba's cache) every N-th group of
    the planner's kernels before any test runs.

    In a cold tree each worker otherwise compiled every kernel itself, all at the same time
    (about 130 s of CPU more than a warm run over the first quarter of the suite); shared out,
    each kernel compiles once and the other workers load it from the cache. A run without
    workers compiles what its tests use, when they use it."""
    worker = getattr(config, "workerinput", None)
    if worker is None:
        return
    index, count = int(worker["workerid"].removeprefix("gw")), int(worker["workercount"])
    for group in KERNEL_GROUPS[index::count]:
        group()


@pytest.fixture(autouse=True)
def isolated_qsettings(tmp_path, monkeypatch):
    """Point QSettings at a temporary folder so tests never touch the user's recent files."""
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "qsettings"))
    yield


@pytest.fixture(autouse=True)
def no_dangling_qt_work(monkeypatch, request):
    """Fail a test that leaves a QThread running or a QTimer active once its widgets are gone.

    Wraps `QThread.start` and `QTimer.start` to remember what the test started (as napari does);
    after the test, deferred deletions are processed and anything still running is reported.
    """
    from PySide6.QtCore import QCoreApplication, QEvent, QThread, QTimer
    import shiboken6

    threads: "weakref.WeakSet" = weakref.WeakSet()
    timers: "weakref.WeakSet" = weakref.WeakSet()
    thread_start, timer_start = QThread.start, QTimer.start

    def tracked_thread_start(self, *args, **kwargs):
        threads.add(self)
        return thread_start(self, *args, **kwargs)

    def tracked_timer_start(self, *args, **kwargs):
        timers.add(self)
        return timer_start(self, *args, **kwargs)

    monkeypatch.setattr(QThread, "start", tracked_thread_start)
    monkeypatch.setattr(QTimer, "start", tracked_timer_start)
    yield
    app = QCoreApplication.instance()
    if app is not None:
        # Let widgets closed by pytest-qt actually be deleted (taking their timers with them).
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()
        if "qtbot" in request.fixturenames:
            # Collect the test's cycles here, where Qt holds no lock: a collection that starts
            # inside a later Qt call and destroys one of these QObjects there can deadlock.
            gc.collect()
    running = [t for t in list(threads) if shiboken6.isValid(t) and t.isRunning()]
    active = [t for t in list(timers) if shiboken6.isValid(t) and t.isActive()]
    for thread in running:  # stop them so one leak does not cascade into later tests
        thread.quit()
        thread.wait(2000)
    for timer in active:
        timer.stop()
    assert not running, f"test left {len(running)} QThread(s) running: {running}"
    assert not active, f"test left {len(active)} QTimer(s) active: {active}"


@pytest.fixture
def window(qtbot):
    """The window on the relu example, shown and planned (a test module may define its own)."""
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow
    from tests.examples import RELU_UNFUSED
    from tests.qt_waits import settled

    win = MainWindow(Session())
    qtbot.addWidget(win)
    assert win.open_path(RELU_UNFUSED)
    win.show()
    settled(qtbot, win)
    return win


def pytest_sessionstart(session):
    """Stop at once, in one line, on a Qt binding known to abort the interpreter (exit 134 in
    the middle of the suite otherwise)."""
    from slabscope.app.qt_binding import binding_problem

    problem = binding_problem()
    if problem is not None:
        pytest.exit(f"slabscope: {problem}", returncode=2)
