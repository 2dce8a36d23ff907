"""A shorter interpreter switch interval while background work runs.

The GUI thread gives up the GIL around many Qt calls (painting, above all) and must win it back
after each; while a worker runs Python code, each such return waits up to the switch interval,
5 ms by default. Showing a plan of Y_1 and repainting the window, 22-40 ms alone, took 80-185 ms
beside a busy Python thread at 5 ms and 70-90 ms at 1 ms (medians of 8, two shared cores).
Outside background work the default stands.
"""

from __future__ import annotations

import sys

BUSY_SWITCH_INTERVAL = 0.001  # seconds: the most the GUI thread waits per GIL hand-back


class ShortSwitchWhileBusy:
    """`set_busy(True)` shortens the switch interval to `BUSY_SWITCH_INTERVAL` (never
    lengthens it); `set_busy(False)` puts back the interval found then, unless someone else
    has changed it meanwhile."""

    def __init__(self, interval: float = BUSY_SWITCH_INTERVAL):
        self.interval = interval
        self._saved: float | None = None

    def set_busy(self, busy: bool) -> None:
        if busy and self._saved is None:
            self._saved = sys.getswitchinterval()
            sys.setswitchinterval(min(self._saved, self.interval))
        elif not busy and self._saved is not None:
            if sys.getswitchinterval() == min(self._saved, self.interval):
                sys.setswitchinterval(self._saved)
            self._saved = None
