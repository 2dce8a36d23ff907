"""A trace's graph held as columns: buffers live over intervals of one chain of time nodes.

A MiniMalloc file of a million rows would be a million `Buffer`s, a million `Node`s, a million
edges and the dictionaries that index them: most of a gigabyte of Python objects, and seconds
to build, for a plan that needs only four integer arrays. `TimelineGraph` is a `Graph` whose
nodes, edges, schedule and buffers are built from those arrays on first use (`Lazy`), and whose
derived views that a plan needs (reserved bytes, uses as arrays, the request order, the
schedule) come from the arrays without them. It reads like any other `Graph`.

Each derived view checks that the field it stands for is still the timeline's own (a
`dataclasses.replace` may have swapped it), and otherwise defers to `Graph`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np

from .graph import Buffer, Graph, Node
from .intervals import distinct
from .lazy_sequence import Lazy


class TimeAttrs(Mapping):
    """A time node's `attrs`, `{"time": t}`, as one small object: files have a million nodes."""

    __slots__ = ("time",)

    def __init__(self, time: int):
        self.time = time

    def __getitem__(self, key):
        if key == "time":
            return self.time
        raise KeyError(key)

    def __iter__(self):
        return iter(("time",))

    def __len__(self) -> int:
        return 1


@dataclass(frozen=True)
class Timeline:
    """The columns: buffer `ids` (the request order), each buffer's `size` in bytes and the
    indices `first` and `last` of the time nodes of its first and last use, and each time
    node's original `time` (ascending)."""

    ids: tuple[str, ...]
    size: np.ndarray
    first: np.ndarray
    last: np.ndarray
    time: np.ndarray

    @cached_property
    def sequences(self) -> dict[str, Lazy]:
        """The graph's fields built from these columns on first use, by field name."""
        steps = len(self.time)
        return {"nodes": Lazy(steps, self.nodes), "edges": Lazy(max(steps - 1, 0), self.edges),
                "schedule": Lazy(steps, lambda: self.node_names),
                "buffers": Lazy(len(self.ids), self.buffers)}

    @cached_property
    def node_names(self) -> list[str]:
        """Each time node's name, `t<time>`."""
        return [f"t{t}" for t in self.time.tolist()]

    def nodes(self):
        """The `Node`s, each keeping its original time."""
        return (Node(name, attrs=TimeAttrs(t)) for name, t in
                zip(self.node_names, self.time.tolist()))

    def edges(self):
        """One edge from each time node to the next."""
        names = self.node_names
        return zip(names, names[1:])

    def buffers(self):
        """The `Buffer`s, used at their first and last time nodes."""
        names = self.node_names
        return (Buffer(name, size, (names[a],) if a == b else (names[a], names[b]))
                for name, size, a, b in zip(self.ids, self.size.tolist(), self.first.tolist(),
                                            self.last.tolist()))


@dataclass(frozen=True)
class TimelineGraph(Graph):
    """A `Graph` of a trace (a chain of time nodes, a schedule running them in order, buffers
    requested in file order) built from a `Timeline`'s columns on first use."""

    timeline: Timeline | None = field(default=None, repr=False, compare=False)

    def __eq__(self, other) -> bool:
        # Equal to any `Graph` with equal fields: how a graph is held is not what it is.
        if not isinstance(other, Graph):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name)
                   for f in fields(Graph) if f.compare)

    def _own(self, *fields: str) -> bool:
        """Whether the named fields are still the ones built from the timeline."""
        own = self.timeline.sequences if self.timeline is not None else {}
        return all(getattr(self, f) is own.get(f) for f in fields)

    def known_chain(self) -> bool:
        return self._own("nodes", "edges", "schedule")

    def build_objects(self) -> None:
        for sequence in self.timeline.sequences.values():
            if isinstance(sequence, Lazy):
                sequence.items  # noqa: B018  (built here, not by the first reader)

    @cached_property
    def buffer_names(self) -> tuple[str, ...]:
        return self.timeline.ids if self._own("buffers") else super().buffer_names

    @cached_property
    def buffer_bytes(self) -> tuple[int, ...]:
        return tuple(self.timeline.size.tolist()) if self._own("buffers") else \
            super().buffer_bytes

    @cached_property
    def node_index(self) -> dict[str, int]:
        if not self._own("nodes"):
            return super().node_index
        return {name: i for i, name in enumerate(self.timeline.node_names)}

    @cached_property
    def reserved(self) -> tuple[int, ...]:
        size, unit = self.timeline.size, self.alignment
        if not self._own("buffers") or (len(size) and int(size.max()) > 2**62 - unit):
            return super().reserved  # Python integers: aligning could overflow 64 bits
        return tuple(np.maximum(-(-size // unit) * unit, unit).tolist())

    @cached_property
    def edge_array(self) -> np.ndarray:
        if not self._own("nodes", "edges"):
            return super().edge_array
        steps = np.arange(len(self.nodes), dtype=np.int64)
        return np.stack([steps[:-1], steps[1:]], axis=1)

    @cached_property
    def use_indices(self) -> tuple[tuple[int, ...], ...]:
        if not self._own("nodes", "buffers"):
            return super().use_indices
        return tuple((a,) if a == b else (a, b) for a, b in
                     zip(self.timeline.first.tolist(), self.timeline.last.tolist()))

    @cached_property
    def use_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if not self._own("nodes", "buffers"):
            return super().use_arrays
        first, last = self.timeline.first, self.timeline.last
        two = first != last
        starts = np.zeros(len(first) + 1, dtype=np.int64)
        np.cumsum(1 + two, out=starts[1:])
        flat = np.empty(int(starts[-1]), dtype=np.int64)
        flat[starts[:-1]] = first
        flat[starts[:-1][two] + 1] = last[two]
        return flat, starts

    def request_order(self, names=None) -> tuple[int, ...]:
        if names is None and self._own("buffers") and self.order is self.timeline.ids:
            return tuple(range(len(self.timeline.ids)))
        return super().request_order(names)


def timeline_graph(ids: list[str], lower: np.ndarray, upper: np.ndarray, size: np.ndarray,
                   alignment: int, name: str) -> TimelineGraph:
    """The graph of buffers `ids`, each live over time steps [lower, upper) and `size` bytes
    (int64 arrays, lower < upper), on a chain of the distinct times `lower` and `upper - 1`."""
    time = distinct(np.concatenate([lower, upper - 1]))
    timeline = Timeline(ids=tuple(ids), size=size, first=np.searchsorted(time, lower),
                        last=np.searchsorted(time, upper - 1), time=time)
    own = timeline.sequences
    return TimelineGraph(nodes=own["nodes"], edges=own["edges"], buffers=own["buffers"],
                         alignment=alignment, order=timeline.ids, schedule=own["schedule"],
                         name=name, timeline=timeline)
