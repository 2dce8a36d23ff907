"""Reading graph files (JSON) into a validated `Graph`; every failure is a one-line `PlanError`."""

from __future__ import annotations

import difflib
import warnings
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType


from ..conflicts.conflict_model import CONFLICT_MODELS
from ..conflicts.serial_model import serial_schedule
from ..model.graph import BUFFER_KINDS, SIZE_LIMIT, Buffer, Graph, Node, align_up
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from ..support.gc_pause import paused_collection
from .safety.input_limits import check_text, one_line, quoted, read_json, shape_elements

DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8": 1,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}

# The keys each object of a graph file may have; any other is a misspelling or another format.
GRAPH_KEYS = ("description", "alignment", "nodes", "edges", "buffers", "order", "schedule",
              "conflicts")
NODE_KEYS = ("name", "op", "inputs", "outputs", "workspace", "attrs")
BUFFER_KEYS = ("name", "bytes", "shape", "dtype", "uses", "kind")


def load(path, include_weights: bool = False, *, cancel: CancelToken = NEVER) -> Graph:
    """Read the graph file at `path`: JSON, ONNX (`.onnx`), a `torch.export` archive (`.pt2`,
    read as zip + JSON), MiniMalloc CSV (`.csv`) or a PyTorch memory snapshot (`.pickle`, the
    first device with a trace; see `load_snapshot`).

    `include_weights` only matters for ONNX and `.pt2`: keep initializers and constants (or
    parameters, buffers and constants) in the slab. What
    the ONNX import had to guess (dimensions taken as 1) is reported as a `UserWarning`. Every
    failure is a `PlanError` of one line that starts with the path (names with newlines appear
    escaped). `cancel` stops
    reading JSON and CSV files from another thread (raising `Cancelled`).
    """
    try:
        with paused_collection():
            return _read(Path(path), include_weights, cancel)
    except PlanError as exc:
        if type(exc) is not PlanError:  # Cancelled: the caller tells it apart by its type
            raise
        message = str(exc)
        if not message.startswith(str(path)):  # every message names the file it is about
            message = f"{path}: {message}"
        if message != str(exc) or not message.isprintable():
            raise PlanError(one_line(message)) from None
        raise


def _read(path: Path, include_weights: bool, cancel: CancelToken) -> Graph:
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        from .onnx_import import load_onnx

        graph, notes = load_onnx(path, include_weights=include_weights)
        if notes.guesses():
            warnings.warn(f"{path.name}: {notes.guesses()}", stacklevel=3)
        return graph
    if suffix == ".pt2":
        from .torch_export_import import load_pt2

        graph, notes = load_pt2(path, include_weights=include_weights)
        if notes.guesses():
            warnings.warn(f"{path.name}: {notes.guesses()}", stacklevel=3)
        return graph
    if suffix == ".csv":
        from .minimalloc_csv import load_minimalloc_csv

        return load_minimalloc_csv(path, cancel=cancel)
    if suffix == ".pickle":
        from .torch_snapshot import load_snapshot

        return load_snapshot(path)
    data = read_json(path)
    try:
        return graph_from_dict(data, name=path.stem, cancel=cancel)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None


def _expect(value, kind, what: str):
    """`value` if it is a `kind`, else a PlanError naming `what` (bools are not integers here)."""
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        names = {int: "an integer", str: "a string", list: "a list", dict: "an object"}
        want = names.get(kind, getattr(kind, "__name__", str(kind)))
        raise PlanError(f"{what} must be {want}, got {type(value).__name__}")
    return value


def _names(value, what: str) -> tuple[str, ...]:
    return tuple(check_text(_expect(v, str, f"{what} entries"), f"{what} entry")
                 for v in _expect(value, list, what))


def _known_keys(entry: dict, known: tuple[str, ...], what: str) -> None:
    """A PlanError naming the first key of `entry` not in `known`, with the closest known one."""
    for key in entry:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            raise PlanError(f"{what}: unknown key {quoted(key)}{hint}")


def _node(entry, i: int) -> Node:
    if isinstance(entry, str):
        return Node(check_text(entry, "node name"))
    entry = _expect(entry, dict, f"nodes[{i}]")
    name = check_text(_expect(entry.get("name"), str, f"nodes[{i}].name"), "node name")
    _known_keys(entry, NODE_KEYS, f"node {name!r}")
    attrs = _expect(entry.get("attrs", {}), dict, f"node {name!r}: attrs")
    op = entry.get("op")
    return Node(
        name=name,
        op=None if op is None else check_text(_expect(op, str, f"node {name!r}: op"), "op"),
        inputs=_names(entry.get("inputs", []), f"node {name!r}: inputs"),
        outputs=_names(entry.get("outputs", []), f"node {name!r}: outputs"),
        workspace=_names(entry.get("workspace", []), f"node {name!r}: workspace"),
        attrs=MappingProxyType(dict(attrs)),
    )


def _buffer_size(entry: dict, name: str) -> tuple[int, tuple[int, ...] | None, str | None]:
    """Bytes from `bytes`, or from `shape` and `dtype`."""
    shape = dtype = None
    if "shape" in entry or "dtype" in entry:
        dims = _expect(entry.get("shape"), list, f"buffer {name!r}: shape")
        shape = tuple(_expect(d, int, f"buffer {name!r}: shape entries") for d in dims)
        dtype = _expect(entry.get("dtype"), str, f"buffer {name!r}: dtype")
        if dtype not in DTYPE_BYTES:
            raise PlanError(f"buffer {name!r}: unknown dtype {dtype!r}; "
                            f"known: {', '.join(DTYPE_BYTES)}")
        size = DTYPE_BYTES[dtype] * shape_elements(shape, f"buffer {name!r}")
        if "bytes" in entry and entry["bytes"] != size:
            raise PlanError(f"buffer {name!r}: bytes {entry['bytes']} disagrees with shape "
                            f"{list(shape)} of {dtype} ({size} bytes)")
        return size, shape, dtype
    if "bytes" not in entry:
        raise PlanError(f"buffer {name!r} has neither 'bytes' nor 'shape' and 'dtype'")
    size = _expect(entry["bytes"], int, f"buffer {name!r}: bytes")
    if size < 0:
        raise PlanError(f"buffer {name!r}: size must be non-negative, got {size}")
    return size, None, None


def graph_from_dict(data, name: str = "graph", *, cancel: CancelToken = NEVER) -> Graph:
    """Validate graph-file data (see docs/formats.md for the format) and build a `Graph`.

    Uses and edges may be derived from nodes' `inputs`, `outputs` and `workspace`: a buffer
    without `uses` is used by every node that lists it, and each node that writes a buffer gets
    an edge to each node that reads it.
    """
    data = _expect(data, dict, "the graph file's top level")
    _known_keys(data, GRAPH_KEYS, "the graph file's top level")
    if "nodes" not in data and "buffers" not in data:
        raise PlanError("not a graph: the top level has neither 'nodes' nor 'buffers'")
    alignment = _expect(data.get("alignment", 256), int, "alignment")
    if alignment <= 0:
        raise PlanError(f"alignment must be positive, got {alignment}")
    if alignment > SIZE_LIMIT:
        raise PlanError(f"alignment {alignment} exceeds the 64-bit limit {SIZE_LIMIT}")
    nodes = tuple(_node(e, i) for i, e in enumerate(_expect(data.get("nodes", []), list, "nodes")))
    node_names: set[str] = set()
    for node in nodes:
        if node.name in node_names:
            raise PlanError(f"duplicate node name {node.name!r}")
        node_names.add(node.name)

    edges = []
    for i, edge in enumerate(_expect(data.get("edges", []), list, "edges")):
        pair = _names(edge, f"edges[{i}]")
        if len(pair) != 2:
            raise PlanError(f"edges[{i}] must be [src, dst], got {list(pair)}")
        for end in pair:
            if end not in node_names:
                raise PlanError(f"edge {pair[0]!r} -> {pair[1]!r} names unknown node {end!r}")
        edges.append(pair)

    touched_by: dict[str, list[str]] = {}
    writers: dict[str, list[str]] = {}
    for node in nodes:
        for buf in node.outputs:
            writers.setdefault(buf, []).append(node.name)
        for buf in node.inputs + node.outputs + node.workspace:
            touched_by.setdefault(buf, [])
            if node.name not in touched_by[buf]:
                touched_by[buf].append(node.name)
    for node in nodes:
        for buf in node.inputs:
            edges.extend((w, node.name) for w in writers.get(buf, []) if w != node.name)

    buffers = []
    seen: set[str] = set()
    for i, entry in enumerate(_expect(data.get("buffers", []), list, "buffers")):
        if not i & 4095:
            cancel.check()
        entry = _expect(entry, dict, f"buffers[{i}]")
        bname = check_text(_expect(entry.get("name"), str, f"buffers[{i}].name"), "buffer name")
        _known_keys(entry, BUFFER_KEYS, f"buffer {bname!r}")
        if bname in seen:
            raise PlanError(f"duplicate buffer name {bname!r}")
        seen.add(bname)
        size, shape, dtype = _buffer_size(entry, bname)
        if size > SIZE_LIMIT:
            raise PlanError(f"buffer {bname!r}: size {size} exceeds {SIZE_LIMIT}")
        try:
            align_up(size, alignment)
        except PlanError as exc:
            raise PlanError(f"buffer {bname!r}: {exc}") from None
        uses = _names(entry["uses"], f"buffer {bname!r}: uses") if "uses" in entry \
            else tuple(touched_by.get(bname, ()))
        if not uses:
            raise PlanError(f"buffer {bname!r} has no uses")
        for use in uses:
            if use not in node_names:
                raise PlanError(f"buffer {bname!r} uses unknown node {use!r}")
        kind = _expect(entry.get("kind", "intermediate"), str, f"buffer {bname!r}: kind")
        if kind not in BUFFER_KINDS:
            raise PlanError(f"buffer {bname!r}: unknown kind {kind!r}; "
                            f"known: {', '.join(BUFFER_KINDS)}")
        buffers.append(Buffer(bname, size, uses, kind, shape, dtype))
    for node in nodes:
        for buf in node.inputs + node.outputs + node.workspace:
            if buf not in seen:
                raise PlanError(f"node {node.name!r} names unknown buffer {buf!r}")

    schedule = None
    if "schedule" in data:
        schedule = _names(data["schedule"], "schedule")
        for n in schedule:
            if n not in node_names:
                raise PlanError(f"schedule names unknown node {n!r}")

    conflicts = None
    if "conflicts" in data:
        conflicts = _expect(data["conflicts"], str, "conflicts")
        if conflicts not in CONFLICT_MODELS:
            raise PlanError(f"conflicts must be one of {', '.join(CONFLICT_MODELS)}, "
                            f"got {quoted(conflicts)}")

    graph = Graph(
        nodes=nodes,
        edges=tuple(dict.fromkeys(edges)),
        buffers=tuple(buffers),
        alignment=alignment,
        order=tuple(b.name for b in buffers),
        schedule=schedule,
        name=name,
        conflicts=conflicts,
    )
    if "order" in data:
        requested = graph.request_order(_names(data["order"], "order"))
        graph = replace(graph, order=tuple(buffers[i].name for i in requested))
    if schedule is not None:
        serial_schedule(graph)  # every node once, in an order the edges allow
    cancel.check()
    graph.topo  # a cycle is a load error (found by a topological sort, no closure)
    return graph
