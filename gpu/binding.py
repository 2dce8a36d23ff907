"""Binding a graph's buffers to memory and its nodes to launchable steps.

Two layouts share this code: the plan's slab (one allocation, every buffer a view at its planned
offset) and the reference layout (every buffer its own allocation). One view object per buffer,
so a node that reads and writes the same buffer passes CuPy the same array object, and operands
of one node never overlap otherwise (checked before anything runs).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np

from slabscope.planner import Graph, Node, Plan, PlanError

from .backends import COMPUTE_DTYPES
from .ops import OPS, OpSpec, check_attributes, op_spec

# Scratch pieces carved from a workspace start on this boundary (a cache line, and any dtype's).
SCRATCH_ALIGNMENT = 64


def _aligned(n: int, to: int = SCRATCH_ALIGNMENT) -> int:
    return -(-n // to) * to


def _scratch_layout(spec: OpSpec, in_shapes, dtype: str) -> tuple[list, int]:
    """(byte offset within the workspace, shape) of each scratch piece of one node, and the
    bytes they span together."""
    pieces, at = [], 0
    itemsize = np.dtype(dtype).itemsize
    for shape in spec.scratch(in_shapes):
        pieces.append((at, tuple(shape)))
        at += _aligned(math.prod(shape) * itemsize)
    return pieces, at


def scratch_bytes(op: str, in_shapes, dtype: str) -> int:
    """Workspace bytes a node of `op` needs for its scratch, given its input shapes and dtype."""
    return _scratch_layout(OPS[op], in_shapes, dtype)[1]


def check_executable(graph: Graph) -> None:
    """Raise `PlanError` naming the first node or buffer that keeps `graph` from executing.

    Every node needs a known op with the right operand counts and attributes; operands need a
    shape and a dtype the runner computes in; shapes must agree; scratch must fit the node's
    workspace; every buffer a node reads must be written by another node (an upload, or an op),
    or the run would compute on uninitialised memory.
    """
    index = graph.buffer_index
    for node in graph.nodes:
        spec = op_spec(node)
        check_attributes(node)
        for role, names, (low, high) in (("inputs", node.inputs, spec.inputs),
                                         ("outputs", node.outputs, spec.outputs)):
            if not low <= len(names) <= high:
                want = str(low) if low == high else f"{low} to {high}"
                raise PlanError(f"node {node.name!r} ({node.op}) takes {want} {role}, "
                                f"got {len(names)}")
        for name in node.inputs + node.outputs + node.workspace:
            if name not in index:
                raise PlanError(f"node {node.name!r} names unknown buffer {name!r}")
        for name in node.inputs + node.outputs:
            buf = graph.buffers[index[name]]
            if buf.shape is None:
                raise PlanError(f"buffer {name!r} (used by node {node.name!r}) has no shape and "
                                f"dtype, so it cannot be executed")
            if buf.dtype not in COMPUTE_DTYPES:
                raise PlanError(f"buffer {name!r}: dtype {buf.dtype} is not supported by the "
                                f"runner (supported: {', '.join(COMPUTE_DTYPES)})")
        ins = [graph.buffers[index[n]].shape for n in node.inputs]
        outs = [graph.buffers[index[n]].shape for n in node.outputs]
        spec.check(node, ins, outs)
        pieces, need = _scratch_layout(spec, ins, graph.buffers[index[node.inputs[0]]].dtype) \
            if node.inputs else ([], 0)
        if pieces:
            have = graph.buffers[index[node.workspace[0]]].bytes if node.workspace else 0
            if have < need:
                raise PlanError(f"node {node.name!r} ({node.op}) needs a workspace buffer of at "
                                f"least {need:,} bytes for its scratch, has {have:,}")
    _check_initialised(graph)


def _check_initialised(graph: Graph) -> None:
    """Every buffer a node reads is written by another node, or the run reads garbage."""
    writers: dict[str, set[str]] = {}
    for node in graph.nodes:
        for name in node.outputs:
            writers.setdefault(name, set()).add(node.name)
    for node in graph.nodes:
        for name in node.inputs:
            if not writers.get(name, set()) - {node.name}:
                raise PlanError(f"node {node.name!r} reads buffer {name!r}, which no other node "
                                f"writes: it would read uninitialised memory (upload it, or "
                                f"have a node compute it)")


@dataclass
class Binding:
    """Every buffer's array in one layout: `views` by buffer name, `spans` their byte ranges.

    `layout` is "slab" or "per-buffer"; `allocations` holds what was allocated (one slab, or
    one array per buffer), `allocated_bytes` their total.
    """

    layout: str
    views: dict
    spans: dict[str, tuple[int, int]]
    allocations: list
    allocated_bytes: int
    bases: dict
    # In-place plans: each merged output -> the buffer whose bytes it reuses (its host).
    hosts: dict = field(default_factory=dict)


def bind(backend, graph: Graph, plan: Plan | None) -> Binding:
    """Views for every buffer: at `plan`'s offsets in one slab, or (plan None) one allocation each."""
    views, spans, bases = {}, {}, {}
    if plan is not None:
        slab = backend.allocate(plan.slab_bytes)
        allocations = [slab]
        for buf in graph.buffers:
            placed = plan.by_name.get(buf.name)
            if placed is None:
                raise PlanError(f"the plan does not place buffer {buf.name!r}")
            bases[buf.name] = (slab, placed.offset)
            spans[buf.name] = (placed.offset, placed.offset + max(buf.bytes, 1))
        allocated = plan.slab_bytes
    else:
        allocations, allocated, cursor = [], 0, 0
        for buf, reserved in zip(graph.buffers, graph.reserved):
            own = backend.allocate(reserved)
            allocations.append(own)
            allocated += reserved
            bases[buf.name] = (own, 0)
            # distinct allocations never overlap: give each its own range for overlap checks
            spans[buf.name] = (cursor, cursor + max(buf.bytes, 1))
            cursor += reserved
    for buf in graph.buffers:
        memory, offset = bases[buf.name]
        if buf.shape is not None:
            views[buf.name] = backend.view(memory, offset, buf.shape, buf.dtype)
        else:
            views[buf.name] = backend.view(memory, offset, (buf.bytes,), "uint8")
    return Binding("slab" if plan is not None else "per-buffer", views, spans, allocations,
                   allocated, bases)


def bind_in_place(backend, graph: Graph, shared, plan: Plan | None) -> Binding:
    """Views for every buffer of `graph` (the graph as read) where `plan` places the in-place
    rewrite `shared` (`planner.conflicts.in_place.InPlace`): a merged output is a view, in its
    own shape and dtype, of its host's bytes (plan None: the rewrite with one allocation per
    buffer)."""
    own = bind(backend, shared.graph, plan)
    views, spans, bases = dict(own.views), dict(own.spans), dict(own.bases)
    for output, host in shared.merged.items():
        buf = graph.buffer(output)
        memory, offset = bases[output] = bases[host]
        spans[output] = spans[host]
        views[output] = backend.view(memory, offset, buf.shape, buf.dtype) \
            if buf.shape is not None else backend.view(memory, offset, (buf.bytes,), "uint8")
    return Binding(own.layout, views, spans, own.allocations, own.allocated_bytes, bases,
                   dict(shared.merged))


def operand_overlaps(binding: Binding, node: Node) -> list[tuple[str, str]]:
    """(input, output) pairs of `node` that are different buffers but share bytes.

    CuPy copies such an input before writing the output (an allocation during execute), and the
    result would be wrong on any backend; a sound plan never produces one.
    """
    found = []
    for i in dict.fromkeys(node.inputs + node.workspace):
        for o in dict.fromkeys(node.outputs + node.workspace):
            if i == o or binding.hosts.get(i, i) == binding.hosts.get(o, o):  # in place: allowed
                continue
            (a, b), (c, d) = binding.spans[i], binding.spans[o]
            if a < d and c < b:
                found.append((i, o))
    return found


def check_operands(binding: Binding, node: Node) -> None:
    """Refuse `node` in one line when an input and an output share bytes (`operand_overlaps`)."""
    overlaps = operand_overlaps(binding, node)
    if overlaps:
        pairs = ", ".join(f"{a} and {b}" for a, b in overlaps)
        raise PlanError(f"node {node.name!r}: operands share bytes in the {binding.layout} "
                        f"({pairs}); the plan is unsound for this node")


@dataclass(frozen=True)
class Step:
    """One node bound to its views: `launch()` runs it; `flops` and `bytes` are its cost."""

    node: Node
    launch: Callable[[], None]
    flops: int
    bytes: int


def _scratch_views(backend, graph: Graph, binding: Binding, node: Node, spec: OpSpec):
    if not node.inputs or not spec.scratch([graph.buffer(n).shape for n in node.inputs]):
        return ()
    dtype = graph.buffer(node.inputs[0]).dtype
    memory, base = binding.bases[node.workspace[0]]
    pieces, _ = _scratch_layout(spec, [graph.buffer(n).shape for n in node.inputs], dtype)
    return tuple(backend.view(memory, base + at, shape, dtype) for at, shape in pieces)


def _upload(backend, views, host, names):
    for name in names:
        backend.upload(views[name], host[name])


def _readback(backend, views, host, names):
    for name in names:
        backend.readback(views[name], host[name])


def build_steps(backend, graph: Graph, binding: Binding, order, staging) -> list[Step]:
    """The nodes in `order` (indices) bound to `binding`'s views and `staging`'s host arrays.

    Raises `PlanError` if any node's input shares bytes with a different output buffer.
    """
    steps = []
    views = binding.views
    for i in order:
        node = graph.nodes[i]
        check_operands(binding, node)
        spec = op_spec(node)
        ins = tuple(views[n] for n in node.inputs)
        outs = tuple(views[n] for n in node.outputs)
        moved = sum(graph.buffer(n).bytes for n in node.inputs + node.outputs)
        if node.op == "upload":
            launch = partial(_upload, backend, views, staging.inputs, node.outputs)
        elif node.op == "readback":
            launch = partial(_readback, backend, views, staging.outputs, node.inputs)
        else:
            scratch = _scratch_views(backend, graph, binding, node, spec)
            launch = partial(spec.kernel, backend.xp, ins, outs, scratch, dict(node.attrs))
        flops = spec.flops([graph.buffer(n).shape for n in node.inputs],
                           [graph.buffer(n).shape for n in node.outputs], node.attrs)
        steps.append(Step(node, launch, flops, moved))
    return steps


@dataclass
class Staging:
    """Host arrays: what upload nodes copy in (`inputs`) and readback nodes copy out (`outputs`)."""

    inputs: dict
    outputs: dict

    def fresh_outputs(self) -> "Staging":
        """The same inputs with new host space for the outputs (for a second, separate run)."""
        return Staging(self.inputs, {n: np.empty_like(a) for n, a in self.outputs.items()})


def stage(graph: Graph) -> Staging:
    """Deterministic host data for every uploaded buffer, and host space for every read-back one.

    Values are seeded by buffer name, so every run of a graph sees the same inputs; weights are
    scaled by 1/sqrt(fan-in) to keep activations of deep graphs in range.
    """
    inputs, outputs = {}, {}
    for node in graph.nodes:
        if node.op == "upload":
            for name in node.outputs:
                buf = graph.buffer(name)
                rng = np.random.default_rng(zlib.crc32(name.encode()))
                # drawn in float32 (or float64) directly: half the time and memory of a cast
                drawn = "float64" if buf.dtype == "float64" else "float32"
                values = rng.standard_normal(buf.shape, dtype=drawn)
                if buf.kind == "weight" and len(buf.shape) == 2:
                    values *= 1.0 / math.sqrt(buf.shape[0])
                inputs[name] = values if drawn == buf.dtype else values.astype(buf.dtype)
        elif node.op == "readback":
            for name in node.inputs:
                buf = graph.buffer(name)
                outputs[name] = np.empty(buf.shape, dtype=buf.dtype)
    return Staging(inputs, outputs)
