"""How long a worker thread may keep the GIL while the GUI thread waits for it.

PySide releases the GIL on every call from Python into Qt and takes it back on return. A worker
running Python (loading a graph, preparing the views' data) takes the GIL as soon as it is free
and keeps it until the interpreter's switch interval runs out (5 ms by default), so each return
from Qt can cost the GUI thread that long: a slice of 50 ms of work that crosses into Qt fifty
times stalled for 300 ms (pangu's open, `bench.app_speed`). A shorter interval bounds each wait.
"""

from __future__ import annotations

import sys

# Seconds; 0.5 ms kept every open under 100 ms in `bench.app_speed` where 5 ms let pangu's
# reach 310 ms, with the same GUI-thread CPU.
GUI_SWITCH_INTERVAL = 0.0005


def share_gil_with_gui() -> None:
    """Make worker threads hand the GIL back within `GUI_SWITCH_INTERVAL` (never lengthen it)."""
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL)
