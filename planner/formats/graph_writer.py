"""Writing a `Graph` as the project's JSON graph file, the format `graph_file` reads back."""

from __future__ import annotations

import json
from pathlib import Path

from ..model.graph import Graph
from ..support.atomic_write import write_atomic


def graph_to_dict(graph: Graph, description: str | None = None) -> dict:
    """`graph` as graph-file data: nodes (op, inputs, outputs, attrs), explicit edges, buffers
    with bytes, uses and kind, the request order, and the schedule and the conflict model the
    graph names for itself when it has them."""
    data: dict = {}
    if description:
        data["description"] = description
    data["alignment"] = graph.alignment
    data["nodes"] = [_node(node) for node in graph.nodes]
    data["edges"] = [list(edge) for edge in graph.edges]
    data["buffers"] = [_buffer(buffer) for buffer in graph.buffers]
    data["order"] = list(graph.order)
    if graph.schedule is not None:
        data["schedule"] = list(graph.schedule)
    if graph.conflicts is not None:
        data["conflicts"] = graph.conflicts
    return data


def _node(node) -> dict:
    entry: dict = {"name": node.name}
    if node.op is not None:
        entry["op"] = node.op
    for key in ("inputs", "outputs", "workspace"):
        if getattr(node, key):
            entry[key] = list(getattr(node, key))
    if node.attrs:
        entry["attrs"] = {key: value for key, value in node.attrs.items()}
    return entry


def _buffer(buffer) -> dict:
    entry: dict = {"name": buffer.name, "bytes": buffer.bytes}
    if buffer.shape is not None and buffer.dtype is not None:
        entry["shape"], entry["dtype"] = list(buffer.shape), buffer.dtype
    entry["uses"] = list(buffer.uses)
    entry["kind"] = buffer.kind
    return entry


def write_graph(graph: Graph, path, description: str | None = None) -> None:
    """Write `graph` to `path` as a JSON graph file (atomically: an old file stays whole if
    writing fails)."""
    text = json.dumps(graph_to_dict(graph, description), indent=1, ensure_ascii=False) + "\n"
    write_atomic(Path(path), text, "graph")
