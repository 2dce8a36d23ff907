"""Keep Python's cyclic garbage collector off the window's large graphs.

A graph of 60,000 buffers and its plans are some 400,000 long-lived objects; every full
collection walks them all (about 280 ms on Y_1, on the GUI thread whenever the allocation count
triggers one). Moving them to the permanent generation once they are loaded costs nothing and
leaves the collector with the young objects only. Objects freed by reference counting (nearly
all of a graph's) are still freed; only cycles among frozen objects are never collected.

While a large graph loads or plans, the worker makes hundreds of thousands of young objects, and
with the default thresholds a full collection ran every few hundred thousand allocations, holding
the GIL 60-100 ms each, which the window waited out. A tenth as many full collections (the
youngest generations are collected as before) keep those waits off the GUI thread.
"""

from __future__ import annotations

import gc

LARGE_GRAPH = 10_000  # buffers: below this a full collection is too quick to matter
FULL_EVERY = 100  # collections of the middle generation per full one (Python's default: 10)


def calm_collector() -> None:
    """Make full collections ten times rarer than Python's default (idempotent)."""
    young, middle, old = gc.get_threshold()
    if old < FULL_EVERY:
        gc.set_threshold(young, middle, FULL_EVERY)


calm_collector()  # on import: the session, which imports this, is what holds large graphs


def freeze_large(graph) -> bool:
    """Freeze everything the collector tracks now when `graph` is large; whether it did."""
    if graph is None or len(graph.buffers) < LARGE_GRAPH:
        return False
    gc.freeze()
    return True
