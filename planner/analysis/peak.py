"""What is live at the live peak: the one definition `explain`, `diff` and the window share.

The live peak is the most reserved bytes live at once in the graph's schedule (one serial
execution order): a buffer is live from the step of its first use to the step of its last use,
both included, and the peak is the first step where the live total is largest. It is what any
plan for that order must hold at once, whatever the allocator; the slab of a plan and PyTorch's
reserved bytes are measured against it.

Each buffer live there is attributed, for grouping, to its first user (`first_users`): the first
node in the schedule that names it among its operands, where nodes name them (its producer in a
program, or a weight's first reader), else the node at its first use (its alloc event in a
snapshot). A recorded training step stretches the uses of weights, optimizer state and inputs to
the step's first and last nodes, which never touch them: the operands say who does.

- `op`: that node's op (programs only);
- `kind`: the buffer's kind (`weight`, `activation`, ...; a snapshot block's category);
- `module`: that node's module path (`.pt2` archives and recorded training steps; a
  recorded step's optimizer ops are `optimizer`'s);
- `frame`: the first user frame of the block's stack (snapshots).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..conflicts.conflict_model import conflict_model
from ..conflicts.live_bytes import LiveBytes, live_bytes
from ..formats.snapshot_names import user_site
from ..model.graph import Graph

GROUPINGS = ("op", "kind", "module", "frame")


@dataclass(frozen=True)
class LivePeak:
    """The live peak of a graph's schedule and the buffers live at it, largest first."""

    curve: LiveBytes
    buffers: tuple[int, ...]   # indices into graph.buffers
    producers: tuple[int, ...]  # per live buffer, the index of its first user

    @property
    def step(self) -> int:
        """The schedule step of the live peak (the first such step)."""
        return self.curve.peak_step

    @property
    def bytes(self) -> int:
        """Reserved bytes live at the peak."""
        return self.curve.peak

    @property
    def node(self) -> str | None:
        """The node that runs at the peak's step."""
        names = self.curve.step_names
        return names[self.step] if names else None


@dataclass(frozen=True)
class Group:
    """Buffers live at the peak that share one key of a grouping."""

    key: str
    bytes: int
    count: int
    buffers: tuple[int, ...]


def live_peak(graph: Graph, users: np.ndarray | None = None) -> LivePeak:
    """The live peak of `graph`'s schedule and who is live there (see the module's definition);
    `users`: `first_users(graph)` where the caller has it already."""
    curve = live_bytes(graph)
    if not graph.buffers or not len(curve.bytes):
        return LivePeak(curve, (), ())
    buffers = live_at(graph, curve.peak_step)
    users = first_users(graph) if users is None else users
    return LivePeak(curve, buffers, tuple(int(users[b]) for b in buffers))


def first_users(graph: Graph) -> np.ndarray:
    """Per buffer, the index of the node it is attributed to (see the module's definition)."""
    model = conflict_model(graph, "serial")
    schedule = np.asarray(model.schedule, dtype=np.int64)
    users = schedule[np.asarray(model.use_steps()[0], dtype=np.int64)]
    index = graph.buffer_index
    named = np.zeros(len(graph.buffers), dtype=bool)
    for n in schedule.tolist():
        node = graph.nodes[n]
        for name in (*node.outputs, *node.inputs, *node.workspace):
            b = index.get(name)
            if b is not None and not named[b]:
                named[b] = True
                users[b] = n
    return users


def live_at(graph: Graph, step: int) -> tuple[int, ...]:
    """The buffers live at schedule `step` (first use <= step <= last use), largest reserved
    first, ties by index: at the live peak's step these are the peak's buffers."""
    first, last = (np.asarray(a, dtype=np.int64) for a in conflict_model(graph, "serial").use_steps())
    live = np.flatnonzero((first <= step) & (step <= last))
    reserved = np.asarray(graph.reserved, dtype=object)[live]
    order = sorted(range(len(live)), key=lambda i: (-reserved[i], int(live[i])))
    return tuple(int(live[i]) for i in order)


def key_of(graph: Graph, grouping: str) -> Callable[[int, int], str | None]:
    """A function (buffer index, index of the node that first uses it) -> the buffer's key in
    `grouping`, None where the input does not know it."""
    if grouping == "op":
        return lambda b, n: graph.nodes[n].op
    if grouping == "kind":
        return lambda b, n: graph.buffers[b].kind
    if grouping == "module":
        return lambda b, n: _module(graph.nodes[n].attrs)
    if grouping == "frame":
        trace = graph.allocator
        if trace is None:
            return lambda b, n: None
        stacks = trace.full_stacks or trace.stacks
        return lambda b, n: user_site(stacks.get(graph.buffers[b].name, ()))
    raise ValueError(f"unknown grouping {grouping!r}; choose from {', '.join(GROUPINGS)}")


def _module(attrs) -> str | None:
    """A node's module path; a recorded step's optimizer ops, which no module runs, are the
    optimizer's."""
    return attrs.get("module") or ("optimizer" if attrs.get("phase") == "optimizer" else None)


def supported_groupings(graph: Graph) -> tuple[str, ...]:
    """The groupings `graph` carries keys for: ops and modules of programs, frames of snapshots;
    kinds always."""
    has_ops = any(node.op for node in graph.nodes)
    has_modules = any(node.attrs.get("module") for node in graph.nodes)
    return tuple(g for g in GROUPINGS if g == "kind" or (g == "op" and has_ops) or
                 (g == "module" and has_modules) or (g == "frame" and graph.allocator is not None))


def group(graph: Graph, peak: LivePeak, grouping: str) -> tuple[Group, ...]:
    """The buffers live at `peak`, grouped by `grouping`, largest group first. Buffers without a
    key in this grouping form one group, "(none)", so that the groups always add up to the peak."""
    key_of_buffer = key_of(graph, grouping)
    members: dict[str, list[int]] = defaultdict(list)
    for b, n in zip(peak.buffers, peak.producers):
        members[key_of_buffer(b, n) or "(none)"].append(b)
    reserved = graph.reserved
    groups = (Group(key, sum(reserved[b] for b in bs), len(bs), tuple(bs)) for key, bs in members.items())
    return tuple(sorted(groups, key=lambda g: (-g.bytes, g.key)))
