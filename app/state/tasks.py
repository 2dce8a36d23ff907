"""Work the session hands off (loading, planning, the lower bound) and where it runs.

A `Task` is a function of a `CancelToken` plus what to do with its result. An executor runs
tasks one at a time, and a new task cancels the one before it: the newest request wins. The
session only knows this small interface; `ImmediateExecutor` (here) runs each task at once on
the caller's thread, for scripts, exports and tests (it takes no partial results), and the
window's executor (`app.qt.task_executor`) runs them on a background thread, with progress and
partial results, and delivers them on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from slabscope.planner.support.cancel import Cancelled, CancelToken


@dataclass
class Task:
    """`work(token)` computes a result; exactly one of `done(result)` or `failed(message)` is
    called on the owner's thread, unless the token was cancelled first (then neither is).

    With `partial`, an executor that takes partial results (what the work offers through
    `token.offer`, such as search's best plan so far) hands them, readied on the worker by
    `prepare_partial`, to `partial` on the owner's thread before `done`, and never after a
    cancel."""

    label: str
    work: Callable[[CancelToken], Any]
    done: Callable[[Any], None]
    failed: Callable[[str], None]
    token: CancelToken = field(default_factory=CancelToken)
    partial: Callable[[Any], None] | None = None
    prepare_partial: Callable[[Any], Any] | None = None


class Executor(Protocol):
    """Runs tasks; `submit` cancels the task running or waiting before it."""

    def submit(self, task: Task) -> None: ...

    def cancel(self) -> None:
        """Cancel the task running or waiting, if any."""


def run_task(task: Task) -> tuple[str, Any]:
    """Run `task.work` and say how it ended: ("done", result), ("failed", message) or
    ("cancelled", None). Any exception becomes a one-line message."""
    try:
        task.token.check()
        return "done", task.work(task.token)
    except Cancelled:
        return "cancelled", None
    except Exception as exc:  # the owner must always hear back, never a traceback in a thread
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return "failed", text


def deliver(task: Task, outcome: tuple[str, Any]) -> None:
    """Hand a finished task's outcome to its owner; nothing once the task was cancelled."""
    kind, value = outcome
    if task.token.cancelled or kind == "cancelled":
        return
    (task.done if kind == "done" else task.failed)(value)


class ImmediateExecutor:
    """Runs each task at once, on the calling thread (nothing is ever left waiting)."""

    def submit(self, task: Task) -> None:
        deliver(task, run_task(task))

    def cancel(self) -> None:
        """Nothing runs between calls, so there is nothing to cancel."""

