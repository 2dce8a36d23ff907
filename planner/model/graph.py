"""The planner's model: nodes of a DAG, the buffers they use, and the request order."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ..support.errors import PlanError

if TYPE_CHECKING:
    from .allocator_trace import AllocatorTrace

# Offsets are unsigned 64-bit on every runtime we model (Luminal's usize, CUDA's size_t).
SIZE_LIMIT = 2**64 - 1

# The last four are a recorded training step's (planner.recording): what a storage held there.
BUFFER_KINDS = ("input", "output", "intermediate", "workspace", "weight", "gradient",
                "optimizer_state", "activation", "temporary")


def align_up(size: int, alignment: int) -> int:
    """Round `size` up to `alignment`; a zero-byte buffer still reserves one aligned unit."""
    reserved = max(-(-size // alignment) * alignment, alignment)
    if reserved > SIZE_LIMIT:
        raise PlanError(f"size {size} overflows when aligned to {alignment} (limit {SIZE_LIMIT})")
    return reserved


@dataclass(frozen=True, slots=True)  # slots: a million of them stay small
class Node:
    """One launch or transfer of the DAG; `op` and its operands only matter for execution."""

    name: str
    op: str | None = None
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    workspace: tuple[str, ...] = ()
    attrs: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Buffer:
    """A tensor, workspace or staging area: `bytes` long, used by the nodes in `uses`."""

    name: str
    bytes: int
    uses: tuple[str, ...]
    kind: str = "intermediate"
    shape: tuple[int, ...] | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class Graph:
    """A validated DAG of nodes, its buffers, the alignment and the request order.

    Build one with `planner.load` or `planner.graph_from_dict`; those validate. `order` is the
    request order as buffer names; `schedule`, when given, is one serial execution order.
    `conflicts`, when given, is the conflict model the file names for itself ("dag" or
    "serial"; a recorded training step names "serial"), what `default_conflicts` answers.
    `allocator`, for a PyTorch snapshot, is what the caching allocator did over the same trace.
    """

    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...]
    buffers: tuple[Buffer, ...]
    alignment: int = 256
    order: tuple[str, ...] = ()
    schedule: tuple[str, ...] | None = None
    name: str = "graph"
    conflicts: str | None = None
    allocator: AllocatorTrace | None = field(default=None, repr=False, compare=False)

    @cached_property
    def node_index(self) -> dict[str, int]:
        """Node name to its index in `nodes`."""
        return {node.name: i for i, node in enumerate(self.nodes)}

    @cached_property
    def buffer_index(self) -> dict[str, int]:
        """Buffer name to its index in `buffers`."""
        return {name: i for i, name in enumerate(self.buffer_names)}

    @cached_property
    def buffer_names(self) -> tuple[str, ...]:
        """Each buffer's name, by buffer index."""
        return tuple([buf.name for buf in self.buffers])

    @cached_property
    def buffer_bytes(self) -> tuple[int, ...]:
        """Each buffer's bytes (before alignment), by buffer index."""
        return tuple([buf.bytes for buf in self.buffers])

    def known_chain(self) -> bool:
        """Whether the graph is, by construction, exactly the chain of its schedule (every node
        once, in schedule order, one edge from each to the next), so nothing need check it."""
        return False

    def build_objects(self) -> None:
        """Build now the node, edge and buffer objects that a graph read from a large trace
        builds on first use (call it on a worker thread before a window walks them)."""

    @cached_property
    def reserved(self) -> tuple[int, ...]:
        """Each buffer's bytes rounded up to the alignment, by buffer index."""
        unit = self.alignment
        reserved = tuple([max(-(-buf.bytes // unit) * unit, unit) for buf in self.buffers])
        if reserved and max(reserved) > SIZE_LIMIT:
            biggest = max(self.buffers, key=lambda buf: buf.bytes)
            raise PlanError(f"{self.name}: buffer {biggest.name!r} of {biggest.bytes:,} bytes "
                            f"overflows when aligned to {unit} (limit {SIZE_LIMIT:,})")
        return reserved

    @cached_property
    def edge_array(self) -> np.ndarray:
        """The edges as an (edges, 2) int64 array of node indices (source, destination)."""
        index = self.node_index
        return np.fromiter((index[end] for edge in self.edges for end in edge), dtype=np.int64,
                           count=2 * len(self.edges)).reshape(-1, 2)

    @cached_property
    def successors(self) -> tuple[tuple[int, ...], ...]:
        """Per node index, the indices of its direct successors (deduplicated)."""
        out: list[set[int]] = [set() for _ in self.nodes]
        for src, dst in self.edges:
            out[self.node_index[src]].add(self.node_index[dst])
        return tuple(tuple(sorted(s)) for s in out)

    @cached_property
    def use_indices(self) -> tuple[tuple[int, ...], ...]:
        """Per buffer index, the node indices of its uses (deduplicated, ascending)."""
        index = self.node_index

        def indices(uses: tuple[str, ...]) -> tuple[int, ...]:
            if len(uses) == 1:  # most buffers have one or two uses: no set, no sort
                return (index[uses[0]],)
            if len(uses) == 2:
                a, b = index[uses[0]], index[uses[1]]
                return (a, b) if a < b else (b, a) if b < a else (a,)
            return tuple(sorted({index[u] for u in uses}))

        return tuple([indices(buf.uses) for buf in self.buffers])

    @cached_property
    def topo(self) -> tuple[int, ...]:
        """Node indices in one topological order (Kahn, ties by index); a cycle is a `PlanError`."""
        from .reachability import topological_order

        return tuple(topological_order([n.name for n in self.nodes], self.successors))

    @cached_property
    def use_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """All buffers' use node indices as one int64 array, and the n + 1 offsets where each
        buffer's run starts (buffer i's uses are `flat[starts[i]:starts[i + 1]]`, ascending)."""
        counts = np.fromiter(map(len, self.use_indices), dtype=np.int64, count=len(self.buffers))
        starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        flat = np.fromiter((u for uses in self.use_indices for u in uses), dtype=np.int64,
                           count=int(starts[-1]))
        return flat, starts

    @cached_property
    def reachability(self):
        """The strict transitive closure of the DAG, by node index (computed once, on demand:
        O(nodes²) bits; the planner itself never needs it)."""
        from .reachability import Reachability

        return Reachability.of(self)

    def buffer(self, name: str) -> Buffer:
        """The buffer called `name`."""
        try:
            return self.buffers[self.buffer_index[name]]
        except KeyError:
            raise PlanError(f"unknown buffer {name!r}") from None

    def request_order(self, names=None) -> tuple[int, ...]:
        """Buffer indices in request order: `names` first (default: the graph's order), then the rest.

        Names not listed keep the graph's order after the listed ones; a name listed twice or
        unknown is an error.
        """
        listed = self.order if names is None else tuple(names)
        index = self.buffer_index
        if len(listed) == len(self.buffers):
            # The common cases, the graph's own order or a reordering of every buffer (each drag
            # in the window): one pass, no per-name bookkeeping; an unknown name or one listed
            # twice falls through to the loop below, which names it.
            try:
                indices = [index[name] for name in listed]
            except KeyError:
                indices = []
            if len(indices) == len(listed) and len(set(indices)) == len(indices):
                return tuple(indices)
        seen: set[int] = set()
        indices = []
        for name in listed:
            if name not in self.buffer_index:
                raise PlanError(f"order names unknown buffer {name!r}")
            i = self.buffer_index[name]
            if i in seen:
                raise PlanError(f"order lists buffer {name!r} twice")
            seen.add(i)
            indices.append(i)
        base = [self.buffer_index[n] for n in self.order] if names is not None else []
        base += range(len(self.buffers))
        for i in base:
            if i not in seen:
                seen.add(i)
                indices.append(i)
        return tuple(indices)
