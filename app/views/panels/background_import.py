"""Imports, on a background thread, modules the GUI thread will need later, so their first use
does not stall the window (the `gpu` package takes 25-80 ms to import, and the window first
needs it in the tick where a loaded graph arrives, to say whether Run is possible)."""

from __future__ import annotations

import importlib
import threading


def import_in_background(*names: str) -> threading.Thread:
    """Start importing module `names` on a daemon thread and return it. A failed import is left
    for the GUI thread's own import to raise, where it is reported."""

    def load() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                return

    thread = threading.Thread(target=load, name="background-import", daemon=True)
    thread.start()
    return thread
