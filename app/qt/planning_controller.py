"""The window's executor: the session's tasks run on one background thread, results on the GUI's.

In the manner of Orange's widgets: one worker at a time, and a new request cancels the one
running (its `CancelToken`, which the planner's long loops check) and replaces any request
still waiting, so the newest settings win and superseded work never starts. Each task runs on a
fresh `QThread`; its outcome comes back through a queued Qt signal, so the session's psygnal
slots, and every view behind them, run on the GUI thread. Nothing runs when there is no work.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal

from slabscope.app.state.tasks import Task, deliver, run_task
from slabscope.planner.cancel import CancelToken


class _TaskThread(QThread):
    """Runs one task's work and emits its outcome from the worker thread."""

    sigOutcome = Signal(object)

    def __init__(self, task: Task, parent: QObject | None = None):
        super().__init__(parent)
        self.task = task

    def run(self) -> None:
        self.sigOutcome.emit(run_task(self.task))


class PlanningController(QObject):
    """Runs `Task`s one at a time off the GUI thread (`submit`, `cancel`, `shutdown`)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: _TaskThread | None = None
        self._waiting: Task | None = None
        self._when_idle: Task | None = None  # the kernels' warm-up, behind any real request

    @property
    def running(self) -> bool:
        """Whether a task is running or waiting for the one running to stop."""
        return self._thread is not None or self._waiting is not None or self._when_idle is not None

    def submit(self, task: Task) -> None:
        """Run `task` as soon as the running one (now cancelled) has stopped."""
        if self._waiting is not None:
            self._waiting.token.cancel()
        self._waiting = task
        if self._thread is None:
            self._start_waiting()
        else:
            self._thread.task.token.cancel()

    def cancel(self) -> None:
        """Cancel the running task and forget the waiting one."""
        if self._waiting is not None:
            self._waiting.token.cancel()
            self._waiting = None
        if self._thread is not None:
            self._thread.task.token.cancel()

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the planner's kernels on the worker once it is
        free, so that a later plan needing them (search) does not wait for a compiler. A request
        submitted while it runs waits for it (a compile cannot be interrupted)."""
        self._when_idle = Task("Preparing the planner's kernels", warm_up_kernels,
                               lambda result: None, lambda message: None)
        if self._thread is None and self._waiting is None:
            self._start_waiting()

    def shutdown(self, msecs: int = 10000) -> None:
        """Cancel everything and wait for the worker thread to end (before the window goes)."""
        self._when_idle = None
        self.cancel()
        thread = self._thread
        if thread is not None:
            thread.wait(msecs)
            self._finished(thread)

    def _start_waiting(self) -> None:
        task, self._waiting = self._waiting, None
        if task is None:
            task, self._when_idle = self._when_idle, None
        if task is None or task.token.cancelled:
            return
        thread = _TaskThread(task, self)
        # Bound methods of this GUI-thread object: both arrive queued, on the GUI thread, in order.
        thread.sigOutcome.connect(self._outcome)
        thread.finished.connect(self._thread_finished)
        self._thread = thread
        thread.start()

    def _outcome(self, outcome) -> None:
        thread = self.sender()
        if isinstance(thread, _TaskThread):
            deliver(thread.task, outcome)

    def _thread_finished(self) -> None:
        self._finished(self.sender())

    def _finished(self, thread) -> None:
        """Forget `thread` once it has ended and start the task waiting, if any."""
        if thread is None or thread is not self._thread:
            return
        self._thread = None
        thread.wait()
        thread.deleteLater()
        self._start_waiting()


def warm_up_kernels(token: CancelToken) -> None:
    """Run every placer once on a tiny serial trace, so numba's kernels are compiled or loaded."""
    from slabscope import planner

    try:
        from slabscope.planner.search import warm_up
    except ImportError:
        warm_up = None
    if warm_up is not None:
        warm_up()
        return
    graph = planner.graph_from_dict({
        "nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c"]],
        "buffers": [{"name": "p", "bytes": 512, "uses": ["a", "b"]},
                    {"name": "q", "bytes": 256, "uses": ["b", "c"]},
                    {"name": "r", "bytes": 768, "uses": ["c"]}]})
    for algorithm in planner.ALGORITHMS:
        token.check()
        planner.plan(graph, algorithm=algorithm, conflicts="serial", budget=0.05)
