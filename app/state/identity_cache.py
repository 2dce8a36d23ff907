"""Values derived from a graph or a plan, kept per object so that showing it again costs nothing."""

from __future__ import annotations

import threading
import weakref
from typing import Callable, Generic, TypeVar

Source = TypeVar("Source")
Value = TypeVar("Value")


class IdentityCache(Generic[Source, Value]):
    """`cache(obj, *args)` is `compute(obj, *args)`, computed once per `obj` (the `args` must follow
    from it) for the last `size` objects.

    Objects are told apart by identity and held weakly: plans and graphs compare (and hash) by
    value, which on 60,000 buffers costs more than most of what is derived from them.
    """

    def __init__(self, compute: Callable[..., Value], size: int = 4):
        self._compute = compute
        self._size = size
        self._entries: list[tuple[weakref.ref, Value]] = []
        self._lock = threading.Lock()  # the planning worker may fill it while the window reads

    def __call__(self, source: Source, *args) -> Value:
        with self._lock:
            for ref, value in self._entries:
                if ref() is source:
                    return value
        value = self._compute(source, *args)
        with self._lock:
            alive = [(ref, v) for ref, v in self._entries if ref() is not None and ref() is not source]
            self._entries = [(weakref.ref(source), value)] + alive[: self._size - 1]
        return value
