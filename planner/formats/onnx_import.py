"""ONNX models as graphs: ops become nodes, activations become buffers sized by shape inference.

Initializers, and the tensors that nodes compute only from constants (`Constant`,
`ConstantOfShape` of an initializer, an `Unsqueeze` of a weight), are weights: they are folded
away with the nodes that make them and stay out of the slab unless `include_weights`. Graph
inputs get a use by one `upload` node, graph outputs a use by one `readback` node.

An If, Loop or Scan node uses every tensor of the enclosing graph that its bodies read, at any
depth, as it uses its inputs: the tensor stays live, and unshared, while the node runs. The
tensors a body makes inside are the runtime's, not the slab's; the notes count them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.graph import SIZE_LIMIT, Buffer, Graph, Node
from ..model.reachability import topological_order
from ..support.errors import PlanError
from .safety.input_limits import ONNX_BYTES_LIMIT, read_bytes, shape_elements

# Ops whose outputs change from run to run even when every input is a constant.
RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli"})

# Graphs from ONNX models are planned at the alignment of CUDA's allocations.
ONNX_ALIGNMENT = 256

# Assumed when shape inference gives a tensor no element type (a custom op's output).
UNKNOWN_ELEMENT_BYTES = 4


@dataclass(frozen=True)
class OnnxNotes:
    """What the import decided on its own, for the user to see.

    `unknown_dims`: tensors with a symbolic or missing dimension (or no shape at all), each
    unknown dimension taken as 1; `unknown_types`: tensors without an element type, taken as
    4-byte elements; `folded_nodes`: nodes computing only constants, not part of the graph;
    `weights`, `weight_bytes`: the weights the runtime nodes read, and whether they are in the slab;
    `body_tensors`: tensors made inside If, Loop and Scan bodies, which are not in the slab.
    """

    unknown_dims: tuple[str, ...]
    unknown_types: tuple[str, ...]
    folded_nodes: tuple[str, ...]
    weights: int
    weight_bytes: int
    weights_included: bool
    body_tensors: int = 0

    def guesses(self) -> str:
        """One line naming the tensors whose size was guessed, and the tensors left to the
        runtime inside bodies, or "" when there are none."""
        parts = []
        if self.unknown_dims:
            parts.append(f"unknown dimensions taken as 1 in {len(self.unknown_dims)} tensors: "
                         + _listing(self.unknown_dims))
        if self.unknown_types:
            parts.append(f"no element type, taken as {UNKNOWN_ELEMENT_BYTES} bytes, in "
                         f"{len(self.unknown_types)} tensors: " + _listing(self.unknown_types))
        if self.body_tensors:
            parts.append(f"{self.body_tensors} tensors made inside If, Loop or Scan bodies are "
                         f"not in the slab (the runtime allocates them while the node runs)")
        return "; ".join(parts)


def _listing(names: tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _require_onnx():
    try:
        import onnx
    except ImportError:
        raise PlanError("reading .onnx files needs the onnx package: "
                        "pip install 'slabscope[onnx]'") from None
    return onnx


def _read_model(onnx, path: Path):
    """The model at `path` with inferred shapes; any failure is a one-line PlanError."""
    data = read_bytes(path, ONNX_BYTES_LIMIT)
    if not data:
        raise PlanError(f"{path}: empty file, not an ONNX model")
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf raises its own DecodeError on anything not a model
        raise PlanError(f"{path}: not an ONNX model ({type(exc).__name__}: {exc})") from None
    if not model.HasField("graph") or not model.graph.node:
        raise PlanError(f"{path}: not an ONNX model (it has no graph of nodes)")
    try:
        plain = onnx.shape_inference.infer_shapes(model)
        # Data propagation holds every value of each 1-D tensor it follows (it takes them for
        # shapes): a declared 1-D tensor of 10**8 elements would need gigabytes.
        if _longest_vector(plain) > DATA_PROPAGATION_LIMIT:
            return plain
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # onnx's InferenceError and C++ validation errors alike
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PlanError(f"{path}: shape inference failed: {first}") from None


# The longest declared or inferred 1-D tensor whose values shape inference may propagate: a
# shape has a few entries, and a million values cost it about 0.4 s and tens of megabytes.
DATA_PROPAGATION_LIMIT = 1_000_000


def _longest_vector(model) -> int:
    """The most elements of any 1-D tensor of `model` with a known length but no data in the
    file (initializers hold their values already, bounded by the file's size); 0 when none."""
    graph = model.graph
    longest = 0
    for info in (*graph.input, *graph.value_info, *graph.output):
        dims = info.type.tensor_type.shape.dim
        if len(dims) == 1 and dims[0].HasField("dim_value"):
            longest = max(longest, dims[0].dim_value)
    return longest


class _Sizer:
    """Bytes of a tensor from its inferred type, recording what had to be guessed."""

    def __init__(self, onnx, graph, measured=None):
        self.onnx = onnx
        self.measured = measured or {}
        self.types = {}
        for info in list(graph.input) + list(graph.value_info) + list(graph.output):
            if info.type.HasField("tensor_type"):
                self.types.setdefault(info.name, info.type.tensor_type)
        self.initializers = {t.name: t for t in graph.initializer}
        self.unknown_dims: list[str] = []
        self.unknown_types: list[str] = []

    def size(self, name: str) -> tuple[int, tuple[int, ...], str | None]:
        """(bytes, shape with unknown dimensions as 1, dtype name or None)."""
        if name in self.initializers:
            tensor = self.initializers[name]
            elem_type, dims, known = tensor.data_type, tuple(tensor.dims), True
        elif name in self.measured:
            dims, dtype = self.measured[name]
            elem_type, dims, known = self.onnx.helper.np_dtype_to_tensor_dtype(
                np.dtype(dtype)), tuple(dims), True
        elif name in self.types and self.types[name].elem_type:
            tensor_type = self.types[name]
            elem_type = tensor_type.elem_type
            raw = list(tensor_type.shape.dim) if tensor_type.HasField("shape") else None
            # Some exporters write -1 for a dynamic dimension: unknown, like a symbolic one.
            given = [d.HasField("dim_value") and d.dim_value >= 0 for d in raw or ()]
            known = raw is not None and all(given)
            dims = tuple(d.dim_value if ok else 1 for d, ok in zip(raw or (), given))
        else:
            self.unknown_types.append(name)
            self.unknown_dims.append(name)
            return UNKNOWN_ELEMENT_BYTES, (), None
        if not known:
            self.unknown_dims.append(name)
        try:
            dtype = self.onnx.helper.tensor_dtype_to_np_dtype(elem_type)
        except (KeyError, ValueError, TypeError):
            raise PlanError(f"tensor {name!r} has element type {elem_type}, which has no "
                            f"fixed size") from None
        if dtype.kind in "OUS":
            raise PlanError(f"tensor {name!r} holds strings, which have no fixed size")
        elements = shape_elements(dims, f"tensor {name!r}")
        size = elements * dtype.itemsize
        if size + ONNX_ALIGNMENT - 1 > SIZE_LIMIT:  # reserved bytes are aligned up
            raise PlanError(f"tensor {name!r}: {elements:,} elements of {dtype.itemsize} bytes "
                            f"are past the 64-bit size limit once aligned to {ONNX_ALIGNMENT}")
        return size, dims, dtype.name


def _constant_tensors(graph, initializer_names: set[str]) -> tuple[set[str], list[int]]:
    """Tensors computable before the model runs, and the indices of the nodes that compute them."""
    constants = set(initializer_names)
    folded = []
    for i, node in enumerate(graph.node):
        inputs = [t for t in node.input if t]
        has_subgraph = any(a.HasField("g") or a.graphs for a in node.attribute)
        if node.op_type == "Constant" or (inputs and all(t in constants for t in inputs)
                                          and node.op_type not in RANDOM_OPS
                                          and not has_subgraph):
            constants.update(t for t in node.output if t)
            folded.append(i)
    return constants, folded


def _check_single_writer(graph, path: Path) -> None:
    """A PlanError when a tensor is written twice: by two nodes, or by a node and as a graph
    input or initializer (ONNX graphs are single-assignment)."""
    written = {t: "the graph's inputs" for t in (v.name for v in graph.input)}
    written.update((t.name, "the initializers") for t in graph.initializer)
    for i, node in enumerate(graph.node):
        who = f"node {node.name or f'{node.op_type}_{i}'!r}"
        for t in node.output:
            if not t:
                continue
            if t in written:
                raise PlanError(f"{path}: tensor {t!r} is written by both {written[t]} and {who}")
            written[t] = who


def _unique_names(graph, folded: set[int]) -> list[str | None]:
    """Per ONNX node, its name in our graph (None for folded nodes): the ONNX name, or
    `op_type_i` when it is empty or taken."""
    taken: set[str] = set()
    names: list[str | None] = []
    for i, node in enumerate(graph.node):
        if i in folded:
            names.append(None)
            continue
        name = node.name if node.name and node.name not in taken else f"{node.op_type}_{i}"
        while name in taken:
            name += "_"
        taken.add(name)
        names.append(name)
    return names


def _free_name(base: str, taken) -> str:
    name = base
    while name in taken:
        name = "_" + name
    return name


def _subgraphs(node) -> list:
    """The graphs held by `node`'s attributes (an If's branches, a Loop's or Scan's body)."""
    graphs = []
    for attribute in node.attribute:
        if attribute.HasField("g"):
            graphs.append(attribute.g)
        graphs.extend(attribute.graphs)
    return graphs


def subgraph_reads(node) -> tuple[str, ...]:
    """The tensors of enclosing scopes that `node`'s subgraphs read, at any depth, in order.

    A name a subgraph reads (as a node input, or as one of its outputs) is an outer read
    unless the subgraph defines it (an input, an initializer, a node output) or, for a nested
    subgraph, an enclosing subgraph below `node` does."""
    return _walk_subgraphs(node)[0]


def _walk_subgraphs(node) -> tuple[tuple[str, ...], int]:
    """What `node`'s subgraphs read of enclosing scopes (see `subgraph_reads`), and how many
    tensors their nodes make, at any depth; walked with an explicit stack."""
    reads: dict[str, None] = {}
    made = 0
    # (graph, the names defined by the subgraphs enclosing it below `node`)
    todo = [(g, frozenset()) for g in reversed(_subgraphs(node))]
    while todo:
        graph, outer = todo.pop()
        defined = set(outer)
        defined.update(v.name for v in graph.input)
        defined.update(t.name for t in graph.initializer)
        defined.update(t.values.name for t in graph.sparse_initializer)
        outputs = [t for n in graph.node for t in n.output if t]
        made += len(outputs)
        defined.update(outputs)
        for inner in graph.node:
            reads.update((t, None) for t in inner.input if t and t not in defined)
        reads.update((v.name, None) for v in graph.output if v.name not in defined)
        scope = frozenset(defined)
        todo.extend((g, scope) for n in reversed(graph.node) for g in reversed(_subgraphs(n)))
    return tuple(reads), made


def _node_reads(graph) -> tuple[list[tuple[str, ...]], int]:
    """Per ONNX node, every tensor it reads: its inputs, then what its subgraphs read of the
    enclosing graph (a body reading an outer tensor uses it for the whole of the node); and
    how many tensors the subgraphs make inside."""
    reads, made = [], 0
    for node in graph.node:
        outer, inside = _walk_subgraphs(node)
        reads.append(tuple(dict.fromkeys([t for t in node.input if t] + list(outer))))
        made += inside
    return reads, made


def _consumers(graph, node_names: list[str | None], reads: list[tuple[str, ...]],
               provided: set[str], path: Path) -> dict[str, list[str]]:
    """Per tensor, the runtime nodes that read it, in model order; a read of a tensor nothing
    provides is a PlanError."""
    consumers: dict[str, list[str]] = {}
    for name, node_reads in zip(node_names, reads):
        if name is None:
            continue  # folded into a constant
        for t in node_reads:
            if t not in provided:
                raise PlanError(f"{path}: node {name!r} reads tensor {t!r}, which no node, "
                                f"input or initializer provides")
            if name not in consumers.setdefault(t, []):
                consumers[t].append(name)
    return consumers


def load_onnx(path, include_weights: bool = False, keep_constants: bool = False,
              measured: dict | None = None) -> tuple[Graph, OnnxNotes]:
    """Read an ONNX model as a `Graph` (dag model, alignment 256) and notes on what was guessed.

    Ops become nodes (named by `node.name`, or `op_type_i` when empty); each activation a buffer
    of dtype size times the product of its inferred dimensions (unknown dimensions count as 1
    and are listed in the notes); an edge runs from each tensor's producer to each consumer.
    Buffer kinds: input, output, intermediate, weight. Weights (initializers and tensors
    computed only from constants) stay out unless `include_weights`, and then are uploaded.
    With `keep_constants`, only initializers are weights: the nodes computing constant tensors
    stay in the graph and their outputs are buffers like any other (a harder planning problem:
    such nodes have no inputs in the slab, so the DAG orders them against little).
    The request order, and the schedule, follow a topological order of first use.
    `measured` maps tensors to the (shape, dtype name) a run of the model gave them; they take
    the place of what inference left unknown (a Reshape to a computed shape).
    """
    onnx = _require_onnx()
    path = Path(path)
    model = _read_model(onnx, path)
    graph = model.graph
    _check_single_writer(graph, path)
    sizer = _Sizer(onnx, graph, measured)
    if keep_constants:
        constants, folded = set(sizer.initializers), []
    else:
        constants, folded = _constant_tensors(graph, set(sizer.initializers))
    folded_set = set(folded)
    node_names = _unique_names(graph, folded_set)
    upload = _free_name("upload", set(node_names))
    readback = _free_name("readback", set(node_names))

    producer: dict[str, str] = {}
    for i, node in enumerate(graph.node):
        if i not in folded_set:
            producer.update((t, node_names[i]) for t in node.output if t)
    inputs = [v.name for v in graph.input if v.name not in constants]
    producer.update((t, upload) for t in inputs)
    reads, body_tensors = _node_reads(graph)
    consumers = _consumers(graph, node_names, reads, set(producer) | constants, path)
    outputs = [v.name for v in graph.output]
    for t in outputs:
        if t not in producer and t not in constants:
            raise PlanError(f"{path}: graph output {t!r} is not produced by any node")

    weights = [t for t in dict.fromkeys(list(consumers) + outputs) if t in constants]
    def size_of(t: str) -> tuple[int, tuple[int, ...], str | None]:
        try:
            return sizer.size(t)
        except PlanError as exc:  # a tensor's size is wrong: the message names file and tensor
            raise PlanError(f"{path}: {exc}") from None

    weight_bytes = sum(size_of(t)[0] for t in weights)
    sizer.unknown_dims.clear()  # only the tensors that end up in the slab are worth reporting
    sizer.unknown_types.clear()
    if include_weights:
        producer.update((t, upload) for t in weights)

    buffers: list[Buffer] = []
    output_set = set(outputs)
    for t in dict.fromkeys(list(producer)):
        uses = [producer[t]] + [c for c in consumers.get(t, ()) if c != producer[t]]
        if t in output_set:
            uses.append(readback)
        kind = "weight" if t in constants else "input" if producer[t] == upload \
            else "output" if t in output_set else "intermediate"
        size, shape, dtype = size_of(t)
        buffers.append(Buffer(t, size, tuple(uses), kind, shape, dtype))

    edges = {(producer[t], c) for t, cs in consumers.items() if t in producer for c in cs}
    edges |= {(producer[t], readback) for t in outputs if t in producer}
    slab_names = {b.name for b in buffers}
    nodes = [Node(upload, "upload", outputs=tuple(t for t in producer if producer[t] == upload))]
    for i, node in enumerate(graph.node):
        if i not in folded_set:
            nodes.append(Node(node_names[i], node.op_type,
                              inputs=tuple(t for t in reads[i] if t in slab_names),
                              outputs=tuple(t for t in node.output if t in slab_names)))
    nodes.append(Node(readback, "readback", inputs=tuple(t for t in outputs if t in slab_names)))
    used = {u for b in buffers for u in b.uses} | {e for pair in edges for e in pair}
    nodes = [n for n in nodes if n.name in used or n.name not in (upload, readback)]

    index = {n.name: i for i, n in enumerate(nodes)}
    successors = [[] for _ in nodes]
    for src, dst in edges:
        successors[index[src]].append(index[dst])
    topo = topological_order([n.name for n in nodes], [sorted(s) for s in successors])
    position = {nodes[i].name: p for p, i in enumerate(topo)}
    buffers.sort(key=lambda b: min(position[u] for u in b.uses))  # stable: ties keep ONNX order

    result = Graph(
        alignment=ONNX_ALIGNMENT,
        nodes=tuple(nodes),
        edges=tuple(sorted(edges, key=lambda e: (position[e[0]], position[e[1]]))),
        buffers=tuple(buffers),
        order=tuple(b.name for b in buffers),
        schedule=tuple(nodes[i].name for i in topo),
        name=path.stem,
    )
    unknown_dims, unknown_types = set(sizer.unknown_dims), set(sizer.unknown_types)
    notes = OnnxNotes(
        unknown_dims=tuple(b.name for b in buffers if b.name in unknown_dims),
        unknown_types=tuple(b.name for b in buffers if b.name in unknown_types),
        folded_nodes=tuple(graph.node[i].name or f"{graph.node[i].op_type}_{i}" for i in folded),
        weights=len(weights),
        weight_bytes=weight_bytes,
        weights_included=include_weights,
        body_tensors=body_tensors,
    )
    return result, notes


def read_model(path):
    """The ONNX model at `path`, with inferred shapes (what `load_onnx` reads); failures are
    one-line `PlanError`s."""
    return _read_model(_require_onnx(), Path(path))


def node_names(graph, keep_constants: bool = False) -> tuple[list[str | None], list[int]]:
    """Per node of ONNX `graph`, its name in the graph `load_onnx` makes (None when folded into
    a constant), and the indices of the folded nodes in model order."""
    initializers = {t.name for t in graph.initializer}
    folded = [] if keep_constants else _constant_tensors(graph, initializers)[1]
    return _unique_names(graph, set(folded)), folded
