"""Long command-line work made visible and bounded: progress on a terminal, and `--timeout`.

`LongWork` hands the planner a `CancelToken` whose progress callback only records the phase and
fraction (the planner calls it often; it must cost nothing). A watcher thread, started only when
there is something to watch, prints that progress to stderr when stderr is a terminal and the
work has run past `PROGRESS_AFTER_S`, and cancels the token when `--timeout` is reached. A phase
that does not poll the token (one compiled kernel) is given `GRACE_S` more, then the process
ends with exit 3 itself, after removing any half-written temporary file.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager

from slabscope import planner
from slabscope.planner.formats.safety.input_limits import one_line
from slabscope.planner.support.atomic_write import discard_pending
from slabscope.planner.support.cancel import Cancelled, CancelToken

from slabscope.app.cli.options import seconds

PROGRESS_AFTER_S = 2.0  # quiet for work shorter than this
TICK_S = 0.5  # how often the progress line is redrawn
GRACE_S = 2.0  # how long past the timeout a phase that does not poll may run
EXIT_TIMEOUT = 3


class TimedOut(planner.PlanError):
    """`--timeout` was reached; the message says how far the work got (exit 3)."""

    exit_code = EXIT_TIMEOUT


def add_timeout_option(parser: argparse.ArgumentParser) -> None:
    """Add `--timeout S` to `parser`."""
    parser.add_argument("--timeout", type=seconds, metavar="S",
                        help="stop with exit 3 after S seconds of loading and planning, saying "
                             "how far it got (default: no limit)")


class LongWork:
    """A context for the loading and planning of one command; `token` goes to the planner.

    `what` names the input in messages. Leaving the block by `Cancelled` after the timeout
    raises `TimedOut`; a plain `PlanError` that does not name the input is given its name.
    """

    def __init__(self, what: str, timeout: float | None = None, stream=None):
        self.what = what
        self.timeout = timeout
        self.stream = stream if stream is not None else sys.stderr
        self.token = CancelToken(self._progress)
        self.phase, self.fraction = "loading", None
        self._phase_start, self._phase_fraction = 0.0, None
        self._timed_out = False
        self._at_deadline: str | None = None  # where the work was when the time ran out
        self._stop = threading.Event()
        self._shown = False
        self._thread: threading.Thread | None = None

    def _progress(self, phase: str, fraction: float | None) -> None:
        # Called from the planner's loops: record, nothing more.
        if phase != self.phase:
            self._phase_start, self._phase_fraction = time.monotonic(), fraction
        self.phase, self.fraction = phase, fraction

    def __enter__(self) -> "LongWork":
        self.start = time.monotonic()
        self._phase_start = self.start
        if self.timeout is not None or _is_terminal(self.stream):
            self._thread = threading.Thread(target=self._watch, name="slabscope-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._clear()
        if isinstance(exc, Cancelled) and self._timed_out:
            raise TimedOut(self.timeout_message()) from None
        if type(exc) is planner.PlanError and self.what not in str(exc):
            raise planner.PlanError(f"{self.what}: {exc}") from None
        return False

    def progress_text(self) -> str:
        """Where the work is: the phase, how much of it is done, how long it has run, its rate."""
        elapsed = time.monotonic() - self.start
        text = f"{self.phase}"
        if self.fraction is not None:
            text += f" {self.fraction:.0%}"
            spent = time.monotonic() - self._phase_start
            gained = self.fraction - (self._phase_fraction or 0.0)
            if spent > 0.5 and gained > 0:
                rate = gained / spent
                text += f" ({rate:.1%}/s, about {(1 - self.fraction) / rate:,.0f} s left)"
        return f"{text}, {elapsed:,.1f} s in"

    def timeout_message(self) -> str:
        """The one line `--timeout` ends with: where the work was when the time ran out."""
        where = self._at_deadline or self.progress_text()
        return f"{self.what}: timed out after {self.timeout:g} s in {where}; nothing was written"

    def _watch(self) -> None:
        deadline = None if self.timeout is None else self.start + self.timeout
        show = _is_terminal(self.stream)
        while True:
            now = time.monotonic()
            wait = TICK_S if deadline is None else max(0.0, min(TICK_S, deadline - now))
            if self._stop.wait(wait):
                return
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                self._expire()
                return
            if show and now - self.start >= PROGRESS_AFTER_S:
                self._draw(f"slabscope: {self.progress_text()}")

    def _expire(self) -> None:
        """Cancel the work; end the process if it has not stopped within the grace period."""
        self._at_deadline = self.progress_text()
        self._timed_out = True
        self.token.cancel()
        if self._stop.wait(GRACE_S):
            return
        self._clear()
        discard_pending()
        try:
            self.stream.write(f"slabscope: {one_line(self.timeout_message())}\n")
            self.stream.flush()
        finally:
            os._exit(EXIT_TIMEOUT)

    def _draw(self, line: str) -> None:
        try:
            self.stream.write(f"\r\x1b[K{one_line(line)}")
            self.stream.flush()
            self._shown = True
        except (OSError, ValueError):
            pass

    def _clear(self) -> None:
        if self._shown:
            self._shown = False
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def terminate_cleanly():
    """While the block runs, SIGTERM (`kill`) ends the command as an exception would, so a write
    under way removes its temporary file and the old output stays whole (exit 143)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
