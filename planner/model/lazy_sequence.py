"""`Lazy`: a tuple whose length is known at once and whose items are built on first use.

A graph read from a million-row trace, or the plan of it, would otherwise build a million
Python objects that a `plan --json` never reads (see `timeline_graph`, `plan.Placements`).
"""

from __future__ import annotations

from collections.abc import Sequence


class Lazy(Sequence):
    """A tuple built on first use: its length is known at once, its items on first access."""

    def __init__(self, length: int, build):
        self._length = length
        self._build = build
        self._items: tuple | None = None

    @property
    def items(self) -> tuple:
        """The items as a tuple, built once (two threads asking at once may both build it)."""
        items = self._items
        if items is None:
            build = self._build
            if build is None:  # another thread has just built it
                return self._items
            items = self._items = tuple(build())
            self._build = None  # the columns it read may go
        return items

    @property
    def built(self) -> bool:
        """Whether the items exist yet."""
        return self._items is not None

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, key):
        return self.items[key]

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, value) -> bool:
        return value in self.items

    def __eq__(self, other) -> bool:
        if isinstance(other, Lazy):
            other = other.items
        return isinstance(other, tuple) and self.items == other

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return repr(self.items)

    def __reduce__(self):  # pickles (and copies) as the plain tuple it stands for
        return tuple, (self.items,)
