"""Pausing Python's cyclic garbage collector while the planner builds millions of objects.

Loading a million-row trace or placing a million buffers allocates millions of small acyclic
objects (nodes, buffers, placements, tuples); each allocation burst makes the collector walk the
whole heap again, which doubles the time of such loops and frees nothing. `paused_collection`
turns it off for the duration and back on afterwards (nesting and threads count, so the last one
out re-enables it, and only if it was enabled to begin with).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def paused_collection() -> Iterator[None]:
    """Run the body with the cyclic garbage collector off (reference counting still frees)."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
