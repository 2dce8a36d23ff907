"""The window's one executor: loads, plans, searches and runs on worker threads, with progress,
partial results and cancel, their outcomes delivered on the GUI thread.

In the manner of Orange's `ConcurrentWidgetMixin`: each running task has a `TaskState` that the
worker thread reports through (`set_progress_value`, `set_partial_result`) and whose signals Qt
delivers, queued, on the GUI thread; a newer task of the same kind cancels the one before it, and
whatever the old one still reports is ignored. Unlike Orange, the work is planner code that knows
no Qt: it takes a `CancelToken` (Orange's interruption flag), reports progress through
`token.report(phase, fraction)` and offers partial results through `token.offer(build)`; the
state listens to the token.

A `TaskLane` runs the tasks of one kind, one at a time: a submitted task waits until the one
running (now cancelled) has stopped, and replaces any task still waiting, so superseded work
never starts. Each task runs on a fresh `QThread`. A `TaskExecutor` holds the window's lanes
("plan": loads, plans and searches, which supersede each other; "run") and says what runs.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from slabscope.app.qt.layout_settle import settle_layouts
from slabscope.app.state.tasks import Task, deliver, run_task

# At most one progress signal per phase in this many seconds (a new phase always gets one), so
# a planner reporting every few milliseconds does not flood the GUI thread's event queue.
PROGRESS_INTERVAL = 0.05
# At least this long between two partial results (each is a whole plan, drawn on arrival), and
# before the first, so a search that ends at once shows none.
PARTIAL_INTERVAL = 0.5
# And at least this many times as long as the last one took to build: on a large graph (Y_1's
# 62,185 buffers take 0.4-0.9 s to build and prepare) partial results take a fifth of its time.
PARTIAL_COST_FACTOR = 4.0


class TaskState(QObject):
    """What one running task tells the GUI thread; its setters are called on the worker thread.

    `sigProgress(phase, fraction|None)`, throttled to one per `PROGRESS_INTERVAL` per phase;
    `sigPartial(result)`, at most one per `PARTIAL_INTERVAL` (or `PARTIAL_COST_FACTOR` times
    the last one's cost, if longer), the first no sooner than that after the start: an offered
    result is built (and readied by the task's `prepare_partial`) on the worker only when it is
    due, the latest offer winning, at the next offer or report after the interval.
    """

    sigProgress = Signal(str, object)
    sigPartial = Signal(object)
    sigOutcome = Signal(object)

    def __init__(self, task: Task, parent: QObject | None = None):
        super().__init__(parent)
        self.task = task
        self.progress: tuple[str, float | None] | None = None  # the last delivered, GUI side
        self._lock = threading.Lock()
        self._phase: str | None = None
        self._emitted = float("-inf")
        self._pending: Callable[[], Any] | None = None
        self._due = time.monotonic() + PARTIAL_INTERVAL  # when the next partial may be built
        self._building = False
        task.token.listen(self.set_progress_value,
                          self.set_partial_result if task.partial is not None else None)

    def set_progress_value(self, phase: str, fraction: float | None) -> None:
        """Report how far `phase` is (called by the token's `report`)."""
        now = time.monotonic()
        with self._lock:
            due = phase != self._phase or now - self._emitted >= PROGRESS_INTERVAL
            if due:
                self._phase, self._emitted = phase, now
        if due:
            self.sigProgress.emit(phase, fraction)
        self._build_partial(now)

    def set_partial_result(self, build: Callable[[], Any]) -> None:
        """Offer a better partial result, built by `build()` once it is due (called by the
        token's `offer`)."""
        with self._lock:
            self._pending = build
        self._build_partial(time.monotonic())

    def _build_partial(self, now: float) -> None:
        with self._lock:
            if self._pending is None or self._building or now < self._due:
                return
            build, self._pending, self._building = self._pending, None, True
        try:
            result = build()
            if self.task.prepare_partial is not None:
                result = self.task.prepare_partial(result)
        finally:
            done = time.monotonic()
            with self._lock:
                self._building = False
                self._due = done + max(PARTIAL_INTERVAL, PARTIAL_COST_FACTOR * (done - now))
        self.sigPartial.emit(result)


class _TaskThread(QThread):
    """Runs one task's work and emits its outcome through the task's state; `idle`: the task is
    background work nobody asked for."""

    def __init__(self, state: TaskState, idle: bool, parent: QObject | None = None):
        super().__init__(parent)
        self.state = state
        self.task = state.task
        self.idle = idle

    def run(self) -> None:
        self.state.sigOutcome.emit(run_task(self.task))


class TaskLane(QObject):
    """Runs `Task`s of one kind one at a time off the GUI thread, the newest winning
    (`submit`, `submit_when_idle`, `cancel`, `shutdown`); the session's `Executor`.

    Signals, on the GUI thread: `sigStarted(task)`, `sigProgress(task, phase, fraction|None)`,
    `sigEnded(task, how)` with how "done", "failed" or "cancelled" (after `done` or `failed`
    was called), `sigRunningChanged(bool)`.
    """

    sigStarted = Signal(object)
    sigProgress = Signal(object, str, object)
    sigEnded = Signal(object, str)
    sigRunningChanged = Signal(bool)

    def __init__(self, kind: str, parent: QObject | None = None):
        super().__init__(parent)
        self.kind = kind
        self.started_at = 0  # when its current task started, in the executor's count
        self._thread: _TaskThread | None = None
        self._waiting: Task | None = None
        self._when_idle: Task | None = None  # background work behind any real request
        self._was_running = False
        # Outcomes and thread ends, in arrival order. After an outcome is delivered the rest
        # waits for the following turn of the event loop: a graph and its quick plan are drawn
        # and painted in two slices of the GUI thread, not one, and the task waiting behind the
        # finished one (a new graph's plan) starts after the window has painted, so its worker
        # does not contend for the GIL with that paint.
        self._arrived: deque[tuple] = deque()
        self._next_turn = QTimer(self)
        self._next_turn.setSingleShot(True)
        self._next_turn.setInterval(0)
        self._next_turn.timeout.connect(self._take_arrived)

    @property
    def running(self) -> bool:
        """Whether a task is running or waiting for the one running to stop."""
        return self._thread is not None or self._waiting is not None or self._when_idle is not None

    @property
    def current(self) -> Task | None:
        """The task running now, or None."""
        return self._thread.task if self._thread is not None else None

    @property
    def progress(self) -> tuple[str, float | None] | None:
        """The running task's last (phase, fraction) delivered, or None."""
        return self._thread.state.progress if self._thread is not None else None

    @property
    def shown_task(self) -> Task | None:
        """The running task, unless it is background work nobody asked for (`submit_when_idle`)."""
        thread = self._thread
        return thread.task if thread is not None and not thread.idle else None

    def submit(self, task: Task) -> None:
        """Run `task` as soon as the running one (now cancelled) has stopped."""
        if self._waiting is not None:
            self._waiting.token.cancel()
        self._waiting = task
        if self._thread is None:
            self._start_waiting()
        else:
            self._thread.task.token.cancel()
        self._sync_running()

    def submit_when_idle(self, task: Task) -> None:
        """Run `task` once nothing else is asked for; a request submitted while it runs waits
        for it (it is not cancelled: meant for work that cannot be interrupted)."""
        self._when_idle = task
        if self._thread is None and self._waiting is None:
            self._start_waiting()
        self._sync_running()

    def cancel(self) -> None:
        """Cancel the running task and forget the waiting one."""
        if self._waiting is not None:
            self._waiting.token.cancel()
            self._waiting = None
        if self._thread is not None:
            self._thread.task.token.cancel()
        self._sync_running()

    def shutdown(self, msecs: int = 10000) -> None:
        """Cancel everything and wait for the worker thread to end (before the window goes)."""
        self._when_idle = None
        self.cancel()
        self._next_turn.stop()
        self._arrived.clear()  # cancelled: their outcomes would be ignored
        thread = self._thread
        if thread is not None:
            thread.wait(msecs)
            self._finished(thread)

    def _start_waiting(self) -> None:
        task, self._waiting = self._waiting, None
        idle = task is None
        if idle:
            task, self._when_idle = self._when_idle, None
        if task is None or task.token.cancelled:
            return
        state = TaskState(task, self)
        thread = _TaskThread(state, idle, self)
        # Bound methods of this GUI-thread object: each arrives queued, on the GUI thread, in the
        # order the worker emitted them.
        state.sigProgress.connect(self._progress)
        state.sigPartial.connect(self._partial)
        state.sigOutcome.connect(self._outcome)
        thread.finished.connect(self._thread_finished)
        self._thread = thread
        parent = self.parent()
        self.started_at = parent.next_start() if isinstance(parent, TaskExecutor) else 0
        thread.start()
        self.sigStarted.emit(task)

    def _live(self, state) -> bool:
        """Whether `state` belongs to the task running now, not cancelled (else what it sends
        comes from superseded work and is ignored)."""
        thread = self._thread
        return thread is not None and thread.state is state and not state.task.token.cancelled

    def _progress(self, phase: str, fraction) -> None:
        state = self.sender()
        if self._live(state):
            state.progress = (phase, fraction)
            self.sigProgress.emit(state.task, phase, fraction)

    def _partial(self, result) -> None:
        state = self.sender()
        if self._live(state) and state.task.partial is not None:
            state.task.partial(result)

    def _outcome(self, outcome) -> None:
        state = self.sender()
        if isinstance(state, TaskState):
            self._arrived.append((self._deliver, state, outcome))
            self._take_arrived()

    def _thread_finished(self) -> None:
        self._arrived.append((self._finished, self.sender()))
        self._take_arrived()

    def _take_arrived(self) -> None:
        """Handle what has arrived, in order, pausing for a turn of the event loop after each
        outcome."""
        while self._arrived:
            if self._next_turn.isActive():
                return  # the timer brings the rest, after the window has painted the outcome
            handle, *args = self._arrived[0]
            self._arrived.popleft()
            handle(*args)
            if handle == self._deliver:
                self._next_turn.start()

    def _deliver(self, state: TaskState, outcome) -> None:
        task = state.task
        deliver(task, outcome)
        settle_layouts()
        how = "cancelled" if task.token.cancelled or outcome[0] == "cancelled" else outcome[0]
        self.sigEnded.emit(task, how)

    def _finished(self, thread) -> None:
        """Forget `thread` once it has ended and start the task waiting, if any."""
        if thread is None or thread is not self._thread:
            return
        self._thread = None
        thread.wait()
        thread.state.deleteLater()
        thread.deleteLater()
        self._start_waiting()
        self._sync_running()

    def _sync_running(self) -> None:
        if self.running != self._was_running:
            self._was_running = self.running
            self.sigRunningChanged.emit(self._was_running)


@dataclass(frozen=True)
class Activity:
    """What the window shows of the work running: the task's lane, label and last progress."""

    lane: TaskLane
    label: str
    phase: str | None
    fraction: float | None


class TaskExecutor(QObject):
    """The window's lanes by kind (`add`, `lane`) and what runs across them (`activity`).

    `sigActivity()` whenever a lane starts, reports progress or stops.
    """

    sigActivity = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lanes: dict[str, TaskLane] = {}
        self._starts = itertools.count(1)

    def add(self, lane: TaskLane) -> TaskLane:
        """Take `lane` (its kind not yet taken) as one of this executor's; returns it."""
        if lane.kind in self._lanes:
            raise ValueError(f"a {lane.kind!r} lane is already there")
        lane.setParent(self)
        self._lanes[lane.kind] = lane
        for signal in (lane.sigStarted, lane.sigProgress, lane.sigRunningChanged):
            signal.connect(self.sigActivity)
        return lane

    def lane(self, kind: str) -> TaskLane:
        """The lane of `kind`, made on first use."""
        return self._lanes.get(kind) or self.add(TaskLane(kind))

    def next_start(self) -> int:
        """A count that orders task starts across lanes (the newest is shown)."""
        return next(self._starts)

    @property
    def running(self) -> bool:
        """Whether any lane runs or has work waiting."""
        return any(lane.running for lane in self._lanes.values())

    def activity(self) -> Activity | None:
        """The newest task started that still runs (background work aside), or None."""
        shown = [lane for lane in self._lanes.values() if lane.shown_task is not None]
        if not shown:
            return None
        lane = max(shown, key=lambda lane: lane.started_at)
        phase, fraction = lane.progress or (None, None)
        return Activity(lane, lane.shown_task.label, phase, fraction)

    def shutdown(self) -> None:
        """Cancel every lane's work and wait for its thread to end."""
        for lane in self._lanes.values():
            lane.shutdown()
