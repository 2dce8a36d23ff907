"""Stopping long planner work from another thread, and reporting how far it got.

The window runs loading, planning, the lower bound and search in a background worker. A newer
request sets the running task's `CancelToken`; the planner's long loops call `check()` often
enough (every few milliseconds of work) that a cancelled task stops within about 50 ms by
raising `Cancelled`. `Progress` callbacks get a phase name and a fraction done, or None when the
total is unknown. Work that improves a result as it goes (search) offers each better one to a
`Partial` listener as a builder, so nothing is built when no one listens; the time listeners
take is counted (`listening_seconds`), so that a time budget is not spent on them.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from .errors import PlanError

# (phase, fraction in [0, 1] or None) -> None; called from the worker thread.
Progress = Callable[[str, "float | None"], None]
# (build) -> None, where build() makes the better partial result; called from the worker thread.
Partial = Callable[[Callable[[], object]], None]


class Cancelled(PlanError):
    """The task's token was cancelled; what it computed so far is discarded."""


class CancelToken:
    """A flag one thread sets and the planner's loops poll; cheap enough to check per item."""

    def __init__(self, progress: Progress | None = None, partial: Partial | None = None):
        self._event = threading.Event()
        self._progress = progress
        self._partial = partial
        self._listening = 0.0
        self._lock = threading.Lock()  # several threads of one search may report at once

    def listen(self, progress: Progress | None, partial: Partial | None = None) -> None:
        """Send this token's reports to `progress` and offered partial results to `partial`
        from now on (an executor attaches them before the work starts)."""
        self._progress, self._partial = progress, partial

    @property
    def wants_partial(self) -> bool:
        """Whether a listener takes partial results (else offering one is not worth building)."""
        return self._partial is not None

    @property
    def listening_seconds(self) -> float:
        """Seconds spent so far in the progress and partial listeners."""
        return self._listening

    def cancel(self) -> None:
        """Ask the task holding this token to stop at its next check."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether `cancel()` was called."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise `Cancelled` once the token is cancelled; otherwise return at once."""
        if self._event.is_set():
            raise Cancelled("cancelled")

    def report(self, phase: str, fraction: float | None = None) -> None:
        """Tell the progress callback (if any) how far `phase` is, then `check()`."""
        if self._progress is not None:
            self._timed(self._progress, phase, fraction)
        self.check()

    def offer(self, build: Callable[[], object]) -> None:
        """Offer a better partial result (search's best plan so far): the listener, if any, calls
        `build()` when it wants the result, now or at a later report. Then `check()`."""
        if self._partial is not None:
            self._timed(self._partial, build)
        self.check()

    def _timed(self, listener: Callable, *args) -> None:
        start = time.perf_counter()
        try:
            listener(*args)
        finally:
            spent = time.perf_counter() - start
            with self._lock:
                self._listening += spent


class _Uncancellable(CancelToken):
    def cancel(self) -> None:
        raise TypeError("NEVER cannot be cancelled; make a CancelToken of your own")

    def listen(self, progress: Progress | None, partial: Partial | None = None) -> None:
        raise TypeError("NEVER takes no listeners; make a CancelToken of your own")


# The token of work nobody can cancel (the default): every check passes.
NEVER = _Uncancellable()
