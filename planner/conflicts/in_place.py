"""In place, an opt-in rule: a pointwise op may write its output over an input that dies there.

As XLA, TFLite and ExecuTorch do: a node whose op is pointwise (the `pointwise` attribute a
recorded step carries from ATen's tag; for ONNX, its elementwise ops) may write its output into
the bytes of its first tensor argument that is an intermediate (not an input, output, weight or
optimizer state), when that argument is read last by this node, has the same aligned size, the
same shape and dtype (the same bytes where those are unknown) and, where the graph says (a
recorded step's `same_layout`), the same layout as the output. The output then makes no
buffer of its own: it is merged into that argument's buffer, which lives on to the output's
last use. The strict rule (a buffer's bytes are its own from first to last use) is untouched;
this is a rewrite of the graph, so every planner, bound and the verifier work on the result as
they do on any graph, and default plans never see it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..model.graph import Buffer, Graph

# Kinds whose bytes must survive the graph: never written over.
KEPT_KINDS = ("input", "output", "weight", "optimizer_state")
# ONNX's elementwise ops (one output element from the same element of each input), for graphs
# whose nodes carry no `pointwise` attribute.
ONNX_ELEMENTWISE = frozenset((
    "Abs", "Acos", "Add", "And", "Asin", "Atan", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div",
    "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater", "HardSigmoid", "HardSwish",
    "LeakyRelu", "Less", "Log", "Max", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "PRelu",
    "Pow", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus",
    "Softsign", "Sqrt", "Sub", "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor"))


def _same_extent(a: Buffer, b: Buffer) -> bool:
    """Whether output element i can overwrite argument element i: the same shape and dtype
    where both are known (a broadcast argument, or a narrower dtype, would be overwritten
    before all of it is read), else the same bytes."""
    if a.shape is not None and b.shape is not None and a.dtype and b.dtype:
        return a.shape == b.shape and a.dtype == b.dtype
    return a.bytes == b.bytes


def _pointwise(node) -> bool:
    """Whether `node`'s op is pointwise: its `pointwise` attribute (a recorded step's, from
    ATen's tag), else whether it is one of ONNX's elementwise ops."""
    if "pointwise" in node.attrs:
        return bool(node.attrs["pointwise"])
    return node.op in ONNX_ELEMENTWISE


@dataclass(frozen=True)
class InPlace:
    """A graph with in-place outputs merged, and which output went into which buffer."""

    graph: Graph
    merged: dict[str, str]  # output buffer -> the buffer whose bytes it reuses (by name)


def in_place(graph: Graph, arguments: Mapping[str, Collection[str]] | None = None) -> InPlace:
    """`graph` with each output that the in-place rule allows merged into its host buffer (see
    the module's description), judged in the graph's schedule. Each other user of a host gets an
    edge to the node that overwrites it, so any order the result allows keeps the rule true.
    `arguments`, where given (a .pt2's runner reads it from the program), decides instead of the
    nodes' attributes: a node is pointwise when it is a key, and its value names the argument
    buffers laid out exactly as the output (dense, offset 0, same shape and dtype: never a
    transposed or sliced view)."""
    order = graph.schedule or tuple(graph.nodes[v].name for v in graph.topo)
    position = {name: i for i, name in enumerate(order)}
    buffers = {b.name: b for b in graph.buffers}
    uses = {b.name: set(b.uses) for b in graph.buffers}
    reserved = dict(zip(graph.buffer_names, graph.reserved))
    host_of: dict[str, str] = {}

    def host(name: str) -> str:
        while name in host_of:
            name = host_of[name]
        return name

    edges = set(graph.edges)
    nodes = {node.name: node for node in graph.nodes}
    for name in order:
        node = nodes[name]
        if not (_pointwise(node) if arguments is None else name in arguments) or \
                len(node.outputs) != 1:
            continue
        output = node.outputs[0]
        if buffers[output].kind in KEPT_KINDS:
            continue
        first = next((b for b in node.inputs if buffers[b].kind not in KEPT_KINDS), None)
        # Where the graph tells layouts (a recorded step), the argument must be laid out as the
        # output is; other graphs' buffers are dense tensors of their own.
        laid_out = node.attrs.get("same_layout") if arguments is None else arguments[name]
        if first is None or laid_out is not None and first not in laid_out:
            continue
        candidate = host(first)
        if candidate == output or \
                max(position[u] for u in uses[candidate]) != position[name] or \
                reserved[candidate] != reserved[output] or \
                not _same_extent(buffers[first], buffers[output]):
            continue
        edges.update((user, name) for user in uses[candidate] if user != name)
        uses[candidate] |= uses.pop(output)
        host_of[output] = candidate
    if not host_of:
        return InPlace(graph, {})
    merged = {output: host(output) for output in host_of}

    def renamed(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(merged.get(b, b) for b in names))

    new_nodes = tuple(dataclasses.replace(node, inputs=renamed(node.inputs),
                                          outputs=renamed(node.outputs),
                                          workspace=renamed(node.workspace))
                      for node in graph.nodes)
    new_buffers = tuple(Buffer(b.name, max(b.bytes, *(buffers[o].bytes for o, h in merged.items()
                                                      if h == b.name), 0),
                               tuple(sorted(uses[b.name], key=position.__getitem__)), b.kind,
                               b.shape, b.dtype)
                        for b in graph.buffers if b.name not in merged)
    result = dataclasses.replace(graph, nodes=new_nodes, buffers=new_buffers,
                                 edges=tuple(sorted(edges)),
                                 order=tuple(b for b in graph.order if b not in merged),
                                 name=f"{graph.name} (in place)")
    return InPlace(result, merged)


