"""Stopping long planner work from another thread, and reporting how far it got.

The window runs loading, planning, the lower bound and search in a background worker. A newer
request sets the running task's `CancelToken`; the planner's long loops call `check()` often
enough (every few milliseconds of work) that a cancelled task stops within about 50 ms by
raising `Cancelled`. `Progress` callbacks get a phase name and a fraction done, or None when the
total is unknown.
"""

from __future__ import annotations

import threading
from typing import Callable

from .errors import PlanError

# (phase, fraction in [0, 1] or None) -> None; called from the worker thread.
Progress = Callable[[str, "float | None"], None]


class Cancelled(PlanError):
    """The task's token was cancelled; what it computed so far is discarded."""


class CancelToken:
    """A flag one thread sets and the planner's loops poll; cheap enough to check per item."""

    def __init__(self, progress: Progress | None = None):
        self._event = threading.Event()
        self._progress = progress

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
            self._progress(phase, fraction)
        self.check()


class _Uncancellable(CancelToken):
    def cancel(self) -> None:
        raise TypeError("NEVER cannot be cancelled; make a CancelToken of your own")


# The token of work nobody can cancel (the default): every check passes.
NEVER = _Uncancellable()
