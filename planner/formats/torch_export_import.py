"""`torch.export` programs (`.pt2`) as graphs: one node per graph node, a buffer per new tensor.

The archive is read as zip + JSON (`pt2_archive`); nothing in it is unpickled or run. The graph's
node order is the schedule. Each tensor a node creates is a buffer of its dtype's size times the
product of its sizes (none when it has no elements); a result that aliases an argument (a view,
an in-place op, one result of a multi-result node), by ATen's schema (`aten_aliases`), is that
argument's buffer, which then lives through the alias's users. User inputs are buffers an
`upload` node writes; parameters, buffers and constants are weights, out of the slab unless
`include_weights`; graph outputs are read by a `readback` node. Symbolic sizes take their hint.
A node whose op carries ATen's `pointwise` tag (`aten_pointwise`) gets the attributes the opt-in
in-place rule reads: `pointwise`, and `same_layout`, the buffers of its arguments laid out
exactly as its one new result (dense from offset 0, same sizes and dtype; never a transposed or
sliced view), none when that result is not a dense tensor of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from ..model.graph import Buffer, Graph, Node
from ..support.errors import PlanError
from .aten_aliases import RESHAPES, SAME_OR_COPY, ResultAlias, aten_overload, result_aliases
from .aten_pointwise import POINTWISE
from .safety.input_limits import shape_elements
from .safety.pt2_archive import read_export_archive

# torch/_export/serde/schema.py's ScalarType -> (dtype name, bytes per element).
SCALAR_TYPES = {
    1: ("uint8", 1), 2: ("int8", 1), 3: ("int16", 2), 4: ("int32", 4), 5: ("int64", 8),
    6: ("float16", 2), 7: ("float32", 4), 8: ("float64", 8), 9: ("complex32", 4),
    10: ("complex64", 8), 11: ("complex128", 16), 12: ("bool", 1), 13: ("bfloat16", 2),
    28: ("uint16", 2), 29: ("float8_e4m3fn", 1), 30: ("float8_e5m2", 1),
    31: ("float8_e4m3fnuz", 1), 32: ("float8_e5m2fnuz", 1), 33: ("float8_e8m0fnu", 1),
    34: ("uint32", 4), 35: ("uint64", 8),
}
WEIGHT_SPECS = ("parameter", "buffer", "tensor_constant")
# Real exported programs have thousands to tens of thousands of nodes; reading one takes about
# 6 KB a node and planning it about 0.3 ms, so past this many a file is refused up front.
NODES_LIMIT = 100_000
_SHOWN_ARGUMENT = 60  # characters of a non-tensor argument the node panel shows


@dataclass(frozen=True)
class ExportNotes:
    """What the import decided on its own, for the user to see.

    `symbolic`: buffers with a symbolic size, taken at its hint (1 when it has none);
    `weights`, `weight_bytes`: the parameters, buffers and constants the graph reads, and whether
    they are in the slab; `layout`, `schema_version`, `torch_version`: of the archive;
    `places`: where each tensor value of the program lives (what a runner needs to make it a
    view of the slab).
    """

    symbolic: tuple[str, ...]
    weights: int
    weight_bytes: int
    weights_included: bool
    layout: str
    schema_version: str
    torch_version: str
    places: Mapping[str, "TensorPlace"] = field(default_factory=lambda: MappingProxyType({}))

    def guesses(self) -> str:
        """One line naming the buffers whose size rests on a symbolic hint, or ""."""
        if not self.symbolic:
            return ""
        shown = ", ".join(self.symbolic[:8])
        more = f" and {len(self.symbolic) - 8} more" if len(self.symbolic) > 8 else ""
        return (f"symbolic dimensions taken at their hint in {len(self.symbolic)} tensors: "
                f"{shown}{more}")


@dataclass(frozen=True)
class TensorPlace:
    """Where one tensor value lives: `root` is the tensor whose storage it uses (itself for a new
    tensor, its base for a view or an in-place result; None when it has no elements), `buffer`
    the graph buffer holding that storage (None for a weight left out of the slab), and
    `sizes`, `strides`, `storage_offset` (in elements of `dtype`) the value's layout in it."""

    root: str | None
    buffer: str | None
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    storage_offset: int
    dtype: str


@dataclass
class _Tensor:
    """A tensor value of the graph: the buffer (root tensor) holding it, and its producer."""

    root: str | None  # the root tensor's name; None: no storage in the slab (no elements)
    producer: str | None  # the node that made or last named it (None: an excluded weight)


def _union(value, where: str) -> tuple[str, object]:
    """The one (kind, value) pair of a serialized union such as `{"as_tensor": {...}}`."""
    if not isinstance(value, dict) or len(value) != 1:
        raise PlanError(f"{where}: expected one tagged value such as {{'as_tensor': ...}}")
    return next(iter(value.items()))


def _tensor_names(argument, where: str) -> list[str]:
    """The tensor names an argument or output refers to, in order."""
    kind, value = _union(argument, where)
    if kind == "as_tensor":
        return [_name(value, where)]
    if kind == "as_tensors":
        return [_name(v, where) for v in _list(value, where)]
    if kind == "as_optional_tensor":
        return _optional(value, where)
    if kind == "as_optional_tensors":
        return [n for v in _list(value, where) for n in _optional(v, where)]
    if kind == "as_nested_tensors":
        return [_name(v, where) for inner in _list(value, where) for v in _list(inner, where)]
    if kind == "as_string_to_argument" and isinstance(value, dict):
        return [n for v in value.values() for n in _tensor_names(v, where)]
    return []


def _optional(value, where: str) -> list[str]:
    kind, inner = _union(value, where)
    return [_name(inner, where)] if kind == "as_tensor" else []


def _name(value, where: str) -> str:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise PlanError(f"{where}: a tensor argument without a 'name'")
    return value["name"]


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise PlanError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _dict(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise PlanError(f"{where}: expected an object, got {type(value).__name__}")
    return value


class _Metas:
    """Sizes, dtypes and strides of the graph's tensor values, read on demand."""

    def __init__(self, tensor_values: dict):
        self.values = tensor_values
        self.symbolic: set[str] = set()
        self.sizes: dict[str, tuple[int, tuple[int, ...], str]] = {}

    def meta(self, tensor: str) -> dict:
        meta = self.values.get(tensor)
        if not isinstance(meta, dict):
            raise PlanError(f"tensor {tensor!r} has no entry in graph.tensor_values")
        return meta

    def ints(self, tensor: str, key: str) -> tuple[int, ...]:
        """The tensor's `sizes` or `strides`, symbolic entries at their hint (1 without one)."""
        entries = _list(self.meta(tensor).get(key, []), f"tensor {tensor!r}: {key}")
        try:  # the common case, every entry a plain {"as_int": n}
            values = tuple(e["as_int"] for e in entries)
            if all(type(v) is int for v in values) and all(len(e) == 1 for e in entries):
                return values
        except (KeyError, TypeError):
            pass
        return tuple(self._int(e, tensor, key) for e in entries)

    def _int(self, entry, tensor: str, key: str) -> int:
        kind, value = _union(entry, f"tensor {tensor!r}: {key}")
        if kind == "as_int" and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind == "as_expr" and isinstance(value, dict):
            self.symbolic.add(tensor)
            hint = value.get("hint")
            if isinstance(hint, dict) and isinstance(hint.get("as_int"), int):
                return hint["as_int"]
            return 1
        raise PlanError(f"tensor {tensor!r}: {key} entry {kind!r} is not an integer size")

    def offset(self, tensor: str) -> int:
        """The tensor's storage offset in elements (0 when the archive does not say)."""
        entry = self.meta(tensor).get("storage_offset")
        return 0 if entry is None else self._int(entry, tensor, "storage_offset")

    def dtype(self, tensor: str) -> tuple[str, int]:
        code = self.meta(tensor).get("dtype")
        if type(code) is not int or code not in SCALAR_TYPES:
            raise PlanError(f"tensor {tensor!r} has dtype {code!r}, which has no known size")
        return SCALAR_TYPES[code]

    def size(self, tensor: str) -> tuple[int, tuple[int, ...], str]:
        """(bytes, sizes, dtype name) of a tensor."""
        if tensor not in self.sizes:
            shape = self.ints(tensor, "sizes")
            name, itemsize = self.dtype(tensor)
            self.sizes[tensor] = (shape_elements(shape, f"tensor {tensor!r}") * itemsize, shape,
                                  name)
        return self.sizes[tensor]

    def dense(self, tensor: str) -> bool:
        """Whether the tensor fills its storage from its start, row-major with no gaps (the
        stride of a dimension of size 1 is free)."""
        sizes, strides = self.ints(tensor, "sizes"), self.ints(tensor, "strides")
        expected = _contiguous_strides(sizes)
        return self.offset(tensor) == 0 and len(strides) == len(sizes) and \
            all(s == e for s, e, n in zip(strides, expected, sizes) if n != 1)

    def storage_bytes(self, tensor: str) -> int:
        """Bytes of the storage a new tensor needs: its elements, or more where its strides
        spread them (`aten.copy` keeps a slice's strides: 64×3 floats at strides 64, 1 span
        16,140 bytes, not 768)."""
        size, shape, _ = self.size(tensor)
        if size == 0:
            return 0
        strides = self.ints(tensor, "strides")
        if len(strides) != len(shape):
            return size
        last = self.offset(tensor) + sum((n - 1) * abs(s) for n, s in zip(shape, strides))
        return max(size, (last + 1) * self.dtype(tensor)[1])

    def same_storage_layout(self, a: str, b: str) -> bool:
        """Whether tensors a and b agree in dtype, device, layout, sizes and strides."""
        ma, mb = self.meta(a), self.meta(b)
        return (all(ma.get(k) == mb.get(k) for k in ("dtype", "device", "layout"))
                and self.ints(a, "sizes") == self.ints(b, "sizes")
                and self.ints(a, "strides") == self.ints(b, "strides"))


def view_strides(sizes, strides, new_sizes) -> tuple[int, ...] | None:
    """The strides a view of a (`sizes`, `strides`) tensor as `new_sizes` would have, or None
    when no view can have that shape (ATen's `computeStride`: `reshape` then copies)."""
    numel = 1
    for d in sizes:
        numel *= d
    if numel == 0 or not sizes:
        return tuple(_contiguous_strides(new_sizes))
    new_strides = [0] * len(new_sizes)
    view_d = len(new_sizes) - 1
    chunk_base_stride = strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(sizes) - 1, -1, -1):
        tensor_numel *= sizes[tensor_d]
        if tensor_d == 0 or (sizes[tensor_d - 1] != 1
                             and strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def _contiguous_strides(sizes) -> list[int]:
    strides, step = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step
        step *= max(sizes[d], 1)
    return strides


def _short_op(target: str) -> str:
    """`aten.softmax` for `torch.ops.aten.softmax.int`; other targets lose `torch.ops.` only."""
    overload = aten_overload(target)
    if overload is not None:
        return "aten." + overload.split(".")[0]
    return target.removeprefix("torch.ops.")


def _module_scope(metadata: dict) -> tuple[str, str]:
    """(module path, class name) of the innermost module in `nn_module_stack`, or ("", "")."""
    stack = metadata.get("nn_module_stack")
    if not isinstance(stack, str) or not stack:
        return "", ""
    innermost = stack.rsplit(";", 1)[-1]
    parts = innermost.split(",") if "(" not in innermost and "[" not in innermost \
        else _split_top_level(innermost)
    if len(parts) != 3:
        return "", ""
    return parts[1], parts[2].rsplit(".", 1)[-1]


def _split_top_level(text: str) -> list[str]:
    """`text` split at commas outside brackets (how torch writes `key,path,type`)."""
    out, start, depth = [], 0, 0
    for i, c in enumerate(text):
        if c in "[(":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def _frames(stack_trace: str) -> list[str]:
    """`file.py:12 forward` per frame of a stack trace, outermost first."""
    return [f"{_file_name(f)}:{line} {fn}" for f, line, fn in _FRAME.findall(stack_trace)]


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]


def _argument_text(argument) -> str:
    """A non-tensor argument as the node panel shows it, cut to `_SHOWN_ARGUMENT` characters."""
    kind, value = next(iter(argument.items())) if isinstance(argument, dict) and argument \
        else ("?", argument)
    text = "None" if kind == "as_none" else str(value)
    return text if len(text) <= _SHOWN_ARGUMENT else text[:_SHOWN_ARGUMENT] + "…"


class _Builder:
    """Walks the exported graph's nodes in order, keeping each tensor's buffer and producer."""

    def __init__(self, program: dict, where: str, include_weights: bool):
        self.where = where
        self.include_weights = include_weights
        module = _dict(program.get("graph_module"), "graph_module")
        graph = _dict(module.get("graph"), "graph_module.graph")
        self.graph = graph
        self.signature = _dict(module.get("signature"), "graph_module.signature")
        self.metas = _Metas(_dict(graph.get("tensor_values", {}), "graph.tensor_values"))
        self.tensors: dict[str, _Tensor] = {}
        self.buffers: dict[str, dict] = {}  # root tensor -> name, bytes, shape, dtype, kind, uses
        self.names = UniqueNames()
        self.edges: set[tuple[str, str]] = set()
        self.last_writer: dict[str, str] = {}  # root -> the node that wrote it last
        self.readers: dict[str, list[str]] = {}  # root -> nodes that used it since that write
        self.weights: list[str] = []
        self.weight_bytes = 0

    # --- buffers -------------------------------------------------------------------------

    def _unique(self, base: str) -> str:
        return self.names.fresh(base, " #")

    def new_buffer(self, tensor: str, name: str, kind: str, producer: str | None) -> None:
        """Record `tensor` as a buffer of its own (none when it has no elements)."""
        _, shape, dtype = self.metas.size(tensor)
        size = self.metas.storage_bytes(tensor)
        root = tensor if size > 0 else None
        self.tensors[tensor] = _Tensor(root, producer)
        if root is not None:
            self.buffers[root] = {"name": self._unique(name), "bytes": size, "shape": shape,
                                  "dtype": dtype, "kind": kind, "uses": []}

    def use(self, root: str | None, node: str, writes: bool = False) -> None:
        """`node` touches the buffer `root`; reads and writes of it stay in graph order."""
        if root is None:
            return
        if root in self.buffers and node not in self.buffers[root]["uses"][-1:]:
            self.buffers[root]["uses"].append(node)
        writer = self.last_writer.get(root)
        if writes:
            self.edges.update((r, node) for r in self.readers.get(root, ()) if r != node)
            if writer is not None and writer != node:
                self.edges.add((writer, node))
            self.last_writer[root] = node
            self.readers[root] = []
        else:
            if writer is not None and writer != node:
                self.edges.add((writer, node))
            self.readers.setdefault(root, []).append(node)

    # --- inputs --------------------------------------------------------------------------

    def inputs(self, upload: str) -> None:
        specs = _list(self.signature.get("input_specs", []), "signature.input_specs")
        for i, spec in enumerate(specs):
            kind, value = _union(spec, f"signature.input_specs[{i}]")
            value = _dict(value, f"signature.input_specs[{i}]")
            arg = value.get("arg")
            if kind == "user_input":
                arg_kind, inner = _union(arg, f"signature.input_specs[{i}].arg")
                if arg_kind != "as_tensor":
                    continue  # a SymInt or constant input: no storage
                tensor = _name(inner, f"signature.input_specs[{i}].arg")
                self.new_buffer(tensor, tensor, "input", upload)
                self.use(self.tensors[tensor].root, upload, writes=True)
            elif kind in WEIGHT_SPECS:
                tensor = _name(arg, f"signature.input_specs[{i}].arg")
                label = value.get(f"{kind}_name" if kind != "tensor_constant"
                                  else "tensor_constant_name") or tensor
                size = self.metas.size(tensor)[0]
                self.weights.append(tensor)
                self.weight_bytes += size
                if self.include_weights:
                    self.new_buffer(tensor, str(label), "weight", upload)
                    self.use(self.tensors[tensor].root, upload, writes=True)
                else:
                    self.tensors[tensor] = _Tensor(tensor if size else None, None)
            # custom objects, tokens and constant inputs hold no tensor storage

    # --- nodes ---------------------------------------------------------------------------

    def node(self, index: int, entry: dict, name: str) -> Node:
        """Our node for the exported graph's node `entry`: its new tensors become buffers, its
        aliasing results name their argument's buffer, and every buffer it touches gets it as
        a use."""
        where = f"graph.nodes[{index}] ({name})"
        target = entry.get("target")
        if not isinstance(target, str):
            raise PlanError(f"{where}: no 'target'")
        metadata = entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {}
        scope = _module_scope(metadata)[0]
        op = _short_op(target)
        arguments, shown_args, copy_asked = self._arguments(entry, where)
        for tensors in arguments.values():
            for t in tensors:
                if t not in self.tensors:
                    raise PlanError(f"{where} reads tensor {t!r}, which no earlier node or "
                                    f"input provides")
        read_roots = list(dict.fromkeys(self.tensors[t].root for ts in arguments.values()
                                        for t in ts))
        for t in (t for ts in arguments.values() for t in ts):
            producer = self.tensors[t].producer
            if producer is not None and producer != name:
                self.edges.add((producer, name))

        aliases = result_aliases(target) or ()
        outputs = _list(entry.get("outputs", []), f"{where}: outputs")
        created, written, alias_notes, shapes = [], [], [], []
        for r, output in enumerate(outputs):
            tensors = _tensor_names(output, f"{where}: outputs[{r}]")
            alias = aliases[r] if r < len(aliases) else ResultAlias(None)
            sources = arguments.get(alias.argument, []) if alias.argument else []
            for k, t in enumerate(tensors):
                if t in self.tensors:
                    raise PlanError(f"{where} writes tensor {t!r}, which already exists")
                source = sources[k] if len(sources) == len(tensors) else \
                    sources[0] if len(sources) == 1 else None
                size, shape, dtype = self.metas.size(t)
                shapes.append(f"{t}: {'×'.join(map(str, shape)) or 'scalar'} {dtype}")
                if source is not None and not copy_asked and \
                        self._aliases(target, t, source, alias):
                    root = self.tensors[source].root
                    self.tensors[t] = _Tensor(root, name)
                    if alias.writes:
                        written.append(root)
                    alias_notes.append(f"{t} = {source}" if not alias.writes
                                       else f"{t} = {source} (written in place)")
                    continue
                label = f"{scope}: {op}" if scope else op
                if len(tensors) > 1 or len(outputs) > 1:
                    label += f"[{len(shapes) - 1}]"
                self.new_buffer(t, label, "intermediate", name)
                created.append(self.tensors[t].root)
        for root in read_roots:
            if root not in written:
                self.use(root, name)
        for root in written + created:
            self.use(root, name, writes=True)

        attrs = _node_attrs(target, metadata, shapes, alias_notes, shown_args)
        if aten_overload(target) in POINTWISE:  # the opt-in in-place rule reads these two
            attrs["pointwise"] = "yes"
            attrs["same_layout"] = self._same_layout(name, arguments)
        slab = [r for r in read_roots if r in self.buffers]
        outs = [r for r in dict.fromkeys(written + created) if r in self.buffers]
        return Node(name, op, inputs=tuple(self.buffers[r]["name"] for r in slab
                                           if r not in outs),
                    outputs=tuple(self.buffers[r]["name"] for r in outs),
                    attrs=MappingProxyType(attrs))

    def _same_layout(self, result: str, arguments: dict[str, list[str]]) -> list[str]:
        """The buffers of the tensor arguments laid out exactly as `result`, the node's one new
        tensor (dense, offset 0, same sizes and dtype): those its result may be written over
        element by element. Empty when `result` is not a dense tensor of its own (a view, an
        in-place write, one of several results, or no elements)."""
        made = self.tensors.get(result)
        if made is None or made.root != result or result not in self.buffers or \
                not self.metas.dense(result):
            return []
        shape = (self.metas.ints(result, "sizes"), self.metas.dtype(result))
        found = []
        for t in (t for ts in arguments.values() for t in ts):
            root = self.tensors[t].root
            if root in self.buffers and self.metas.dense(t) and \
                    (self.metas.ints(t, "sizes"), self.metas.dtype(t)) == shape:
                found.append(self.buffers[root]["name"])
        return list(dict.fromkeys(found))

    @staticmethod
    def _arguments(entry: dict, where: str) -> tuple[dict[str, list[str]], list[str], bool]:
        """The node's tensor arguments by name, its other arguments as text, and whether it
        asks for a copy (`to(..., copy=True)` copies even when nothing changes)."""
        arguments: dict[str, list[str]] = {}
        shown, copy_asked = [], False
        for j, named in enumerate(_list(entry.get("inputs", []), f"{where}: inputs")):
            named = _dict(named, f"{where}: inputs[{j}]")
            arg_name = str(named.get("name", j))
            tensors = _tensor_names(named.get("arg"), f"{where}: input {arg_name!r}")
            arguments[arg_name] = tensors
            copy_asked |= arg_name == "copy" and named.get("arg") == {"as_bool": True}
            if not tensors:
                shown.append(f"{arg_name}={_argument_text(named.get('arg'))}")
        return arguments, shown, copy_asked

    def _aliases(self, target: str, result: str, source: str, alias: ResultAlias) -> bool:
        """Whether `result` shares `source`'s storage (ops that may copy decide by the metas)."""
        overload = aten_overload(target)
        if overload in RESHAPES:
            sizes, strides = self.metas.ints(source, "sizes"), self.metas.ints(source, "strides")
            if len(strides) != len(sizes):
                raise PlanError(f"tensor {source!r} has {len(strides)} strides for "
                                f"{len(sizes)} sizes")
            return view_strides(sizes, strides, self.metas.ints(result, "sizes")) is not None
        if overload in SAME_OR_COPY or alias.maybe:
            return self.metas.same_storage_layout(source, result)
        return True


def _node_attrs(target: str, metadata: dict, shapes: list[str], alias_notes: list[str],
                shown_args: list[str]) -> dict[str, object]:
    """What the node panel lists for a node: target, module, results, aliases, arguments and
    the stack it was traced from (innermost frame first)."""
    attrs = {"target": target}
    scope, module_class = _module_scope(metadata)
    if scope or module_class:
        attrs["module"] = f"{scope or '(root)'} ({module_class})" if module_class else scope
    if shapes:
        attrs["results"] = "; ".join(shapes)
    if alias_notes:
        attrs["aliases"] = "; ".join(alias_notes)
    if shown_args:
        attrs["arguments"] = ", ".join(shown_args)
    stack = metadata.get("stack_trace")
    if isinstance(stack, str) and stack:
        frames = _frames(stack)
        attrs["stack"] = " ← ".join(reversed(frames)) if frames else stack.strip()[:200]
    return attrs


def _node_names(nodes: list, taken: UniqueNames) -> list[str]:
    """Per node: its serialized name, else its first result's, else `op_i`; unique (a name given
    again gets `_2`, `_3`, ...)."""
    names = []
    for i, entry in enumerate(nodes):
        entry = _dict(entry, f"graph.nodes[{i}]")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            try:
                first = _tensor_names(entry.get("outputs", [None])[0], f"graph.nodes[{i}]")
            except (PlanError, IndexError):
                first = []
            name = first[0] if first else f"{_short_op(str(entry.get('target')))}_{i}"
        names.append(taken.fresh(name, "_"))
    return names


class UniqueNames:
    """Names made unique by a numbered suffix (`base`, `base<sep>2`, ...) in time linear in the
    names: a counter per base resumes where the last one stopped, so 20,000 nodes named alike
    do not test 1, 2, ... 20,000 suffixes each."""

    def __init__(self):
        self.taken: set[str] = set()
        self.next: dict[tuple[str, str], int] = {}

    def fresh(self, base: str, sep: str) -> str:
        """`base` if free, else `base<sep>k` for the least free k >= 2 past those given."""
        name = base
        if name in self.taken:
            k = self.next.get((base, sep), 2)
            while f"{base}{sep}{k}" in self.taken:
                k += 1
            self.next[(base, sep)] = k + 1
            name = f"{base}{sep}{k}"
        self.taken.add(name)
        return name


def load_pt2(path, include_weights: bool = False) -> tuple[Graph, ExportNotes]:
    """Read a `torch.export` archive as a `Graph` (dag model, alignment 256) and notes.

    See the module docstring for the rules; the request order is the order buffers are made in.
    """
    path = Path(path)
    archive = read_export_archive(path)
    where = f"{path}: {archive.member}"
    try:
        return _build(archive, path, include_weights)
    except PlanError as exc:
        raise PlanError(f"{where}: {exc}") from None
    except RecursionError:  # arguments nested past the stack (as_string_to_argument)
        raise PlanError(f"{where}: arguments nest too deep") from None


def _build(archive, path: Path, include_weights: bool) -> tuple[Graph, ExportNotes]:
    builder = _Builder(archive.program, str(path), include_weights)
    entries = _list(builder.graph.get("nodes", []), "graph.nodes")
    if len(entries) > NODES_LIMIT:
        raise PlanError(f"{len(entries):,} nodes is over the limit of {NODES_LIMIT:,} for an "
                        f"exported program (reading one takes about 6 KB a node)")
    taken = UniqueNames()
    names = _node_names(entries, taken)
    upload, readback = taken.fresh("upload", "_"), taken.fresh("readback", "_")
    builder.inputs(upload)
    nodes = [builder.node(i, entry, name) for i, (entry, name) in enumerate(zip(entries, names))]

    read_back = []
    for i, output in enumerate(_list(builder.graph.get("outputs", []), "graph.outputs")):
        for t in _tensor_names(output, f"graph.outputs[{i}]"):
            if t not in builder.tensors:
                raise PlanError(f"graph output {t!r} is not produced by any node or input")
            tensor = builder.tensors[t]
            if tensor.producer is not None:
                builder.edges.add((tensor.producer, readback))
            if tensor.root in builder.buffers:
                buffer = builder.buffers[tensor.root]
                if buffer["kind"] == "intermediate":
                    buffer["kind"] = "output"
                builder.use(tensor.root, readback)
                read_back.append(buffer["name"])

    made_by_upload = [b["name"] for b in builder.buffers.values() if b["uses"][0] == upload]
    schedule = ([upload] if made_by_upload else []) + names + ([readback] if read_back else [])
    if made_by_upload:
        nodes.insert(0, Node(upload, "upload", outputs=tuple(made_by_upload)))
    if read_back:
        nodes.append(Node(readback, "readback", inputs=tuple(dict.fromkeys(read_back))))
    present = set(schedule)
    position = {n: i for i, n in enumerate(schedule)}
    edges = sorted((e for e in builder.edges if e[0] in present and e[1] in present),
                   key=lambda e: (position[e[0]], position[e[1]]))
    buffers = tuple(Buffer(b["name"], b["bytes"], tuple(b["uses"]), b["kind"], b["shape"],
                           b["dtype"]) for b in builder.buffers.values())
    graph = Graph(nodes=tuple(nodes), edges=tuple(edges), buffers=buffers,
                  order=tuple(b.name for b in buffers), schedule=tuple(schedule), name=path.stem)
    symbolic = builder.metas.symbolic
    notes = ExportNotes(
        symbolic=tuple(b["name"] for root, b in builder.buffers.items() if root in symbolic),
        weights=len(builder.weights), weight_bytes=builder.weight_bytes,
        weights_included=include_weights, layout=archive.layout,
        schema_version=archive.schema_version,
        torch_version=str(archive.program.get("torch_version", "unknown")),
        places=MappingProxyType(_places(builder)))
    return graph, notes


def _places(builder: _Builder) -> dict[str, TensorPlace]:
    """Every tensor value's `TensorPlace`, from what the walk recorded."""
    metas, places = builder.metas, {}
    for tensor, value in builder.tensors.items():
        buffer = builder.buffers.get(value.root) if value.root is not None else None
        places[tensor] = TensorPlace(value.root, buffer["name"] if buffer else None,
                                     metas.ints(tensor, "sizes"), metas.ints(tensor, "strides"),
                                     metas.offset(tensor), metas.dtype(tensor)[0])
    return places
