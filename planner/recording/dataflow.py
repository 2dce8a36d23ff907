"""A recorded step with each buffer freed at its last access instead of when Python dropped it.

A recorded buffer lives until its last reference died, which in eager PyTorch can be well after
the last op that read it (a gradient lives until `zero_grad`). Freed at their last access, and
with the recorded data dependencies as the only constraint, the ops may be re-ordered: an
optimizer update can run as soon as its gradient is final, and that gradient then dies (what
PyTorch's "optimizer step in backward" hooks do by hand). Weights, optimizer state and the
step's inputs still live across the whole step.
"""

from __future__ import annotations

import dataclasses

from ..model.graph import Buffer, Graph

# Kinds that exist before the step and after it, whatever the order.
STANDING_KINDS = ("weight", "optimizer_state", "input")


def dataflow_lifetimes(graph: Graph) -> Graph:
    """`graph` (a recorded step) with each buffer used only by the ops that read or write it,
    standing buffers (weights, optimizer state, inputs) by the first and last op as well. The
    recorded step's schedule is kept; its first op precedes and its last op follows every other,
    so standing buffers stay live across any order of the step."""
    order = graph.schedule or tuple(node.name for node in graph.nodes)
    touched: dict[str, list[str]] = {}
    for node in graph.nodes:
        for name in node.inputs + node.outputs + node.workspace:
            touched.setdefault(name, []).append(node.name)
    buffers = []
    for buffer in graph.buffers:
        uses = touched.get(buffer.name, [])
        if buffer.kind in STANDING_KINDS or not uses:
            uses = [order[0], *uses, order[-1]]
        buffers.append(Buffer(buffer.name, buffer.bytes, tuple(dict.fromkeys(uses)), buffer.kind,
                              buffer.shape, buffer.dtype))
    return dataclasses.replace(graph, buffers=tuple(buffers),
                               name=f"{graph.name} (freed at last use)")
