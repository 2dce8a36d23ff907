"""A `torch.export` program (`.pt2`) executed one ATen node at a time over views of the slab.

Every tensor value of the program is a strided view of the bytes the plan gave its buffer: a
new tensor's own buffer, or, for a view or an in-place result, its base's (the importer's
`TensorPlace`). A node whose results are all new tensors runs through ATen's `out=` overload
where one exists, writing straight into those views; any other node computes its result and
copies it in, and the copy is timed with the node. Views and in-place ops return tensors over
the slab, which is checked on their first launch. Weights are the archive's, kept outside the
slab, or uploaded into it when the graph was read with `include_weights`. User inputs are
random, seeded by name, in the dtype and shape the program declares.
"""

from __future__ import annotations

import functools
import operator
import time
import zlib
from pathlib import Path

import numpy as np

from slabscope.planner import Graph, PlanError
from slabscope.planner.formats.torch_export_import import load_pt2

from .binding import Staging, Step, check_operands
from .torch_backend import host_dtype, require_torch, torch_dtype
from .comparison import model_check

# Upper bound (exclusive) for an integer input no op bounds: small non-negative values.
DEFAULT_INTEGER_HIGH = 8

# Ops whose integer argument indexes a dimension of another argument: (index argument, the
# indexed argument, which of its dimensions; None: the `dim` argument names it).
_INDEXING = {
    "embedding": ("indices", "weight", 0),
    "embedding_bag": ("indices", "weight", 0),
    "index_select": ("index", "self", None),
    "gather": ("index", "self", None),
    "scatter": ("index", "self", None),
    "scatter_add": ("index", "self", None),
    "nll_loss": ("target", "self", -1),
    "nll_loss_forward": ("target", "self", -1),
    "cross_entropy_loss": ("target", "self", -1),
}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


@functools.cache
def out_overload(op):
    """(the `out=` overload of ATen op `op`, its out argument names) when its functional
    arguments match `op`'s and it writes every result; None for in-place ops and ops without."""
    schema = op._schema
    if not schema.returns or any(str(r.type) != "Tensor" for r in schema.returns):
        return None
    if any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
        return None
    want = [(a.name, str(a.type)) for a in schema.arguments]
    packet = op.overloadpacket
    for name in packet.overloads():
        candidate = getattr(packet, name)
        arguments = candidate._schema.arguments
        outs = [a.name for a in arguments if a.is_out]
        if len(outs) == len(schema.returns) and \
                [(a.name, str(a.type)) for a in arguments if not a.is_out] == want:
            return candidate, tuple(outs)
    return None


class _NodeLaunch:
    """One ATen node over fixed views: `out=` into its new results' views, or compute and copy
    them in; alias results (views, in-place) are checked against the plan on the first call."""

    def __init__(self, name: str, op, args, kwargs, results: list, out=None):
        self.name, self.op, self.args, self.kwargs = name, op, args, kwargs
        self.results = results  # per result: (its view, True when the plan gives it its own bytes)
        self.out = out  # (out overload, {out argument: view}) or None
        self.pointers = [view.data_ptr() if view is not None else 0 for view, _ in results]
        self.checked = False

    def __call__(self) -> None:
        if self.out is not None:
            overload, outs = self.out
            overload(*self.args, **self.kwargs, **outs)
            if not self.checked:
                self._check_outs()
            return
        result = self.op(*self.args, **self.kwargs)
        produced = result if isinstance(result, (tuple, list)) else (result,)
        for (view, own), value in zip(self.results, produced):
            if own and view is not None and view.numel():
                view.copy_(value)
        if not self.checked:
            self._check_aliases(produced)

    def _check_outs(self) -> None:
        """`out=` resizes an output of the wrong shape into new memory: the plan would not hold."""
        for (view, _), pointer in zip(self.results, self.pointers):
            if view is not None and view.data_ptr() != pointer:
                raise PlanError(f"node {self.name!r} ({self.op}): its out= overload moved a "
                                f"result out of the slab (the declared shape is not torch's)")
        self.checked = True

    def _check_aliases(self, produced) -> None:
        """A view or in-place result must be the slab bytes the plan gives its base."""
        for (view, own), value in zip(self.results, produced):
            if own or view is None or not view.numel():
                continue
            if value.data_ptr() != view.data_ptr() or value.shape != view.shape or \
                    value.stride() != view.stride():
                raise PlanError(f"node {self.name!r} ({self.op}): torch gave a result its own "
                                f"memory where the plan has it share its base's bytes")
        self.checked = True


def _upload(backend, values: dict, host: dict, restore: dict) -> None:
    for name, array in host.items():
        backend.upload(values[name], array)
    for weight, initial in restore.items():  # weights outside the slab that the program writes
        weight.copy_(initial)


def _readback(backend, views: dict, host: dict, names) -> None:
    for name in names:
        backend.readback(views[name], host[name])


class TorchProgram:
    """A `.pt2` file's program, loaded with `torch.export.load`, run node by node."""

    kind = "torch.export program, one ATen op per node"
    backends = ("torch-cuda", "torch")

    def __init__(self, path, include_weights: bool = False):
        torch = require_torch()
        self.torch = torch
        self.path = Path(path)
        self.include_weights = include_weights
        self.graph, self.notes = load_pt2(self.path, include_weights)
        self.places = self.notes.places
        self.ep = _load_program(torch, self.path)
        for name in [n for n in self.ep.constants if n in self.ep.state_dict]:
            # an archive may repeat parameters among its constants as plain tensors, which
            # `module()` would then refuse to assign as parameters
            del self.ep.constants[name]
        if not (isinstance(self.ep.example_inputs, tuple) and len(self.ep.example_inputs) == 2):
            self.ep.example_inputs = None  # not (args, kwargs): `module()` would fail on them
        from torch.export.graph_signature import (ConstantArgument, InputKind, OutputKind,
                                                  TensorArgument)

        signature = self.ep.graph_signature
        self.weights, self.user_inputs, self.targets = {}, [], {}
        self.arguments: list = []  # per user input: its tensor's name, or (constant value,)
        for spec in signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                if isinstance(spec.arg, ConstantArgument):  # e.g. a None or an int argument
                    self.arguments.append((spec.arg.value,))
                    continue
                if not isinstance(spec.arg, TensorArgument):
                    raise PlanError(f"{self.path}: input {spec.arg} is not a tensor; only "
                                    f"tensor inputs can be generated")
                self.user_inputs.append(spec.arg.name)
                self.arguments.append(spec.arg.name)
            elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                store = self.ep.state_dict if spec.target in self.ep.state_dict \
                    else self.ep.constants
                self.weights[spec.arg.name] = store[spec.target].detach()
                self.targets[spec.arg.name] = spec.target
        # Weights the program writes (a running mean's add_, or the module's own update of a
        # buffer a functional program returns): every execute, and the eager reference, starts
        # from their values as loaded, kept here; the runs write a copy.
        mutated = {spec.target for spec in signature.output_specs
                   if spec.kind == OutputKind.BUFFER_MUTATION}
        self.initial = {name: tensor.clone() for name, tensor in self.weights.items()
                        if self.targets[name] in mutated or name in self._written_roots()}
        self.weights.update((name, tensor.clone()) for name, tensor in self.initial.items())
        self.user_outputs = [spec.arg.name if isinstance(spec.arg, TensorArgument) else None
                             for spec in signature.output_specs
                             if spec.kind == OutputKind.USER_OUTPUT]
        self.fx = {n.name: n for n in self.ep.graph.nodes}
        self._device_weights: dict = {}
        self._flops: dict[str, int] = {}

    def _written_roots(self) -> set[str]:
        """Names of the tensors whose storage some node writes in place (ATen's schema)."""
        from torch._ops import OpOverload

        written = set()
        for fx in self.ep.graph.nodes:
            if fx.op != "call_function" or not isinstance(fx.target, OpOverload):
                continue
            named = _named_arguments(fx)
            for argument in fx.target._schema.arguments:
                value = named.get(argument.name)
                if argument.alias_info is not None and argument.alias_info.is_write and \
                        getattr(value, "name", None) in self.places:
                    written.add(self.places[value.name].root)
        return written

    # --- checks --------------------------------------------------------------------------

    def check(self, graph: Graph) -> None:
        """Every node must be one of the program's ATen calls, and the buffers the importer's."""
        ours = {b.name for b in self.graph.buffers}
        if {b.name for b in graph.buffers} != ours:
            raise PlanError(f"the graph's buffers are not those of {self.path.name} read with "
                            f"include_weights={self.include_weights}")
        from torch._ops import OpOverload

        for node in graph.nodes:
            if node.op in ("upload", "readback"):
                continue
            fx = self.fx.get(node.name)
            if fx is None or fx.op != "call_function":
                raise PlanError(f"node {node.name!r} ({node.op}) is not a call in "
                                f"{self.path.name}'s program")
            if not isinstance(fx.target, OpOverload):
                raise PlanError(f"node {node.name!r} ({node.op}) cannot run: {fx.target} is "
                                f"not an ATen op (only ATen ops run node by node)")

    # --- staging -------------------------------------------------------------------------

    def stage(self, graph: Graph) -> Staging:
        """Random user inputs seeded by name (integers below what they index), the weights when
        they are in the slab, and host space for the read-back buffers."""
        inputs = {}
        for name in self.user_inputs:
            place = self.places[name]
            if place.buffer is not None:
                inputs[name] = _random(name, place.sizes, place.dtype, self._integer_high(name))
        if self.include_weights:
            for name, tensor in self.weights.items():
                if self.places[name].buffer is not None:
                    inputs[name] = _host_copy(self.torch, self.initial.get(name, tensor))
        outputs = {}
        for node in graph.nodes:
            if node.op == "readback":
                for name in node.inputs:
                    buf = graph.buffer(name)
                    outputs[name] = np.empty(buf.shape, dtype=host_dtype(buf.dtype))
        return Staging(inputs, outputs)

    def _integer_high(self, name: str) -> int:
        """The exclusive upper bound for integer input `name`: the smallest size of what it
        indexes (through views of it), else `DEFAULT_INTEGER_HIGH`."""
        root = self.places[name].root
        bounds = []
        for fx in self.ep.graph.nodes:
            if fx.op != "call_function" or not hasattr(fx.target, "_schema"):
                continue
            rule = _INDEXING.get(fx.target.overloadpacket.__name__)
            if rule is None:
                continue
            index_arg, indexed_arg, dim = rule
            named = _named_arguments(fx)
            index, indexed = named.get(index_arg), named.get(indexed_arg)
            if getattr(index, "name", None) not in self.places or \
                    self.places[index.name].root != root or indexed is None:
                continue
            sizes = self.places[indexed.name].sizes
            axis = named.get("dim", 0) if dim is None else dim
            if sizes and isinstance(axis, int):
                bounds.append(sizes[axis] if len(sizes) > 1 or dim != -1 else sizes[0])
        return max(1, min(bounds)) if bounds else DEFAULT_INTEGER_HIGH

    # --- binding -------------------------------------------------------------------------

    def _weight(self, backend, name: str):
        """Weight `name` outside the slab, on the backend's device (moved there once)."""
        key = (name, str(backend.target))
        if key not in self._device_weights:
            self._device_weights[key] = self.weights[name].to(backend.target)
        return self._device_weights[key]

    def _weight_initial(self, backend, name: str):
        """Weight `name` as loaded, on the backend's device (for a weight the program writes)."""
        key = (name, str(backend.target), "initial")
        if key not in self._device_weights:
            self._device_weights[key] = self.initial[name].to(backend.target, copy=True)
        return self._device_weights[key]

    def values(self, backend, binding) -> dict:
        """Every tensor value of the program as a tensor over the bytes of its buffer in
        `binding`, or of a weight outside the slab; tensors without elements get their own
        empty tensor."""
        torch = self.torch
        values = {}
        for name, place in self.places.items():
            dtype = torch_dtype(torch, place.dtype)
            if place.root is None:
                values[name] = torch.empty_strided(place.sizes, place.strides, dtype=dtype,
                                                   device=backend.target)
                continue
            root = self.places[place.root]
            if place.buffer is None:
                base = self._weight(backend, place.root)
                if base.dtype != dtype:
                    base = base.view(dtype)
                start = base.storage_offset() + place.storage_offset - root.storage_offset
                values[name] = _over(torch, base, place, start)
                continue
            memory, offset = binding.bases[place.buffer]
            itemsize = torch.empty((), dtype=dtype).element_size()
            root_size = torch.empty((), dtype=torch_dtype(torch, root.dtype)).element_size()
            start = offset + place.storage_offset * itemsize - root.storage_offset * root_size
            if start % itemsize:
                raise PlanError(f"tensor {name!r} starts at byte {start}, not a multiple of "
                                f"its {place.dtype} elements")
            values[name] = _over(torch, memory.view(dtype), place, start // itemsize)
        return values

    def _argument(self, backend, values: dict, constants: dict):
        """A function mapping one fx argument to what the op gets: views for tensors, the
        values of size nodes, the backend's device for a device."""
        torch = self.torch

        def convert(arg):
            if isinstance(arg, torch.fx.Node):
                if arg.name in values:
                    return values[arg.name]
                if arg.name in constants:
                    return constants[arg.name]
                raise PlanError(f"argument {arg.name!r} has no value when the node runs")
            if isinstance(arg, torch.device):
                return backend.target
            return arg
        return convert

    def build_steps(self, backend, graph: Graph, binding, order, staging: Staging) -> list[Step]:
        """The nodes in `order` bound to `binding`; raises `PlanError` if a node's input shares
        bytes with a different output buffer."""
        torch = self.torch
        values = self.values(backend, binding)
        # a buffer is read back and checked as its tensor lays it out: a new tensor may have
        # a slice's strides (aten.copy), with gaps the kernels never write
        binding.views.update((place.buffer, values[name]) for name, place in self.places.items()
                             if place.root == name and place.buffer is not None)
        constants = self._size_values(backend, values)
        convert = self._argument(backend, values, constants)
        steps = []
        for i in order:
            node = graph.nodes[i]
            check_operands(binding, node)
            moved = sum(graph.buffer(n).bytes for n in node.inputs + node.outputs)
            if node.op == "upload":
                restore = {} if self.include_weights else \
                    {self._weight(backend, name): self._weight_initial(backend, name)
                     for name in self.initial}
                steps.append(Step(node, functools.partial(_upload, backend, values,
                                                          staging.inputs, restore), 0, moved))
                continue
            if node.op == "readback":
                steps.append(Step(node, functools.partial(_readback, backend, binding.views,
                                                          staging.outputs, node.inputs),
                                  0, moved))
                continue
            fx = self.fx[node.name]
            args = torch.fx.node.map_aggregate(fx.args, convert)
            kwargs = torch.fx.node.map_aggregate(fx.kwargs, convert)
            if node.name in constants:  # a size: computed once, nothing to launch
                steps.append(Step(node, _nothing, 0, moved))
                continue
            results = [(values.get(r), r is not None and self.places[r].root == r)
                       if r is not None else (None, False) for r in self._result_names(fx)]
            out = None
            found = out_overload(fx.target)
            if found is not None and results and all(own for _, own in results) and \
                    len(results) == len(found[1]):
                out = (found[0], dict(zip(found[1], (view for view, _ in results))))
            launch = _NodeLaunch(node.name, fx.target, args, kwargs, results, out)
            steps.append(Step(node, launch, self._flops_of(fx, values, constants), moved))
        return steps

    def in_place_arguments(self) -> dict[str, tuple[str, ...]]:
        """For the in-place rule: each pointwise node (ATen's `pointwise` tag) with one dense
        result of its own, and the buffers of its arguments that are laid out exactly as that
        result (contiguous, offset 0, same shape and dtype), so a view such as a transpose is
        never written over."""
        torch = self.torch
        found = {}
        for name, fx in self.fx.items():
            target = fx.target
            if fx.op != "call_function" or not isinstance(target, torch._ops.OpOverload) or \
                    torch.Tag.pointwise not in target.tags:
                continue
            out = self.places.get(name)
            if out is None or out.root != name or out.buffer is None or not _dense(out):
                continue
            found[name] = tuple(dict.fromkeys(
                place.buffer for place in (self.places.get(a.name) for a in fx.all_input_nodes)
                if place is not None and place.buffer is not None and _dense(place)
                and (place.sizes, place.dtype) == (out.sizes, out.dtype)))
        return found

    def _result_names(self, fx) -> list[str | None]:
        """The tensor value names of `fx`'s results, in order (None for an unnamed one)."""
        if fx.name in self.places:
            return [fx.name]
        named = {}
        for user in fx.users:
            if user.target is operator.getitem and isinstance(user.args[1], int):
                named[user.args[1]] = user.name
        count = len(fx.target._schema.returns)
        if count == 1 and named:  # one Tensor[] result, e.g. split: one entry per element
            count = max(named) + 1
        return [named.get(k) for k in range(count)]

    def _size_values(self, backend, values: dict) -> dict:
        """The values of nodes that compute sizes (symbolic dimensions), in program order; they
        depend on shapes only, so they are computed once here."""
        constants = {}
        convert = self._argument(backend, values, constants)
        torch = self.torch
        for fx in self.ep.graph.nodes:
            if fx.op != "call_function" or fx.name in values or \
                    not isinstance(fx.meta.get("val"), (torch.SymInt, int, float, bool)):
                continue
            args = torch.fx.node.map_aggregate(fx.args, convert)
            kwargs = torch.fx.node.map_aggregate(fx.kwargs, convert)
            try:
                constants[fx.name] = fx.target(*args, **kwargs)
            except Exception as exc:  # e.g. a value that depends on data, not shapes
                raise PlanError(f"node {fx.name!r} ({fx.target}) cannot run: "
                                f"{_first_line(exc)}") from None
        return constants

    def _flops_of(self, fx, values: dict, constants: dict) -> int:
        """Floating-point operations of `fx` by torch's FLOP counter on meta tensors (0 for ops
        it does not count, or that have no meta kernel)."""
        if fx.name not in self._flops:
            torch = self.torch
            from torch.utils.flop_counter import FlopCounterMode

            def meta(arg):
                if isinstance(arg, torch.fx.Node):
                    if arg.name in values:
                        v = values[arg.name]
                        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype,
                                                   device="meta")
                    return constants.get(arg.name)
                return torch.device("meta") if isinstance(arg, torch.device) else arg
            try:
                with FlopCounterMode(display=False) as counter:
                    fx.target(*torch.fx.node.map_aggregate(fx.args, meta),
                              **torch.fx.node.map_aggregate(fx.kwargs, meta))
                self._flops[fx.name] = int(counter.get_total_flops())
            except Exception:  # no meta kernel, or an argument meta tensors cannot stand for
                self._flops[fx.name] = 0
        return self._flops[fx.name]

    # --- the model's own reference ---------------------------------------------------------

    def reference(self, backend, graph: Graph, binding, staging: Staging):
        """The slab's user outputs against `ExportedProgram.module()` run eagerly by torch on the
        same inputs and weights."""
        started = time.perf_counter()
        torch = self.torch
        values = self.values(backend, binding)
        inputs = []
        for name in self.arguments:
            if isinstance(name, tuple):  # a constant argument, as exported
                inputs.append(name[0])
                continue
            place = self.places[name]
            dtype = torch_dtype(torch, place.dtype)
            host = staging.inputs.get(name)
            # a copy: the program may write its inputs in place, and the per-buffer run
            # still needs them
            inputs.append(torch.empty(place.sizes, dtype=dtype, device=backend.target)
                          if host is None else
                          torch.tensor(host, device=backend.target).to(dtype))
        try:
            spec = self.ep.call_spec.in_spec
            args, kwargs = (inputs, {}) if spec is None else \
                torch.utils._pytree.tree_unflatten(inputs, spec)
            module = self.ep.module().to(backend.target)
            with torch.no_grad():
                for name, initial in self.initial.items():  # the module updates them in place
                    _attribute(module, self.targets[name]).copy_(initial)
                eager = module(*args, **kwargs)
        except Exception as exc:  # torch's own failure to run the whole program
            raise PlanError(f"{self.path.name}: torch eager, the reference, failed: "
                            f"{_first_line(exc)}") from None
        flat = torch.utils._pytree.tree_leaves(eager)
        produced, expected, dtypes = {}, {}, {}
        for name, value in zip(self.user_outputs, flat):
            if name is None or not isinstance(value, torch.Tensor):
                continue
            produced[name] = backend.to_host(values[name])
            expected[name] = backend.to_host(value)
            dtypes[name] = self.places[name].dtype
        return model_check("torch eager (ExportedProgram.module())", produced, expected, dtypes,
                           started)


def _load_program(torch, path: Path):
    """`torch.export.load(path)`; a failure is one line. Torch logs a traceback when it falls
    back to the layout archives had before 2.8: that fallback is expected, so it stays quiet."""
    import logging

    logger = logging.getLogger("torch.export")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return torch.export.load(str(path))
    except Exception as exc:  # torch's own failure to read its archive
        raise PlanError(f"{path}: torch.export.load failed: {_first_line(exc)}") from None
    finally:
        logger.setLevel(level)


def _dense(place) -> bool:
    """Whether a tensor value fills its storage from its start, row-major with no gaps."""
    stride, expected = 1, []
    for size in reversed(place.sizes):
        expected.append(stride)
        stride *= size
    return place.storage_offset == 0 and \
        all(s == e for s, e, n in zip(place.strides, reversed(expected), place.sizes) if n != 1)


def _over(torch, base, place, start: int):
    """A tensor of `place`'s sizes and strides over `base`'s storage from element `start`; not
    a view of `base` in autograd's sense, so in-place ops that refuse views (`detach_` of a
    lifted constant) run on it."""
    return torch.empty(0, dtype=base.dtype, device=base.device).set_(
        base.untyped_storage(), start, place.sizes, place.strides)


def _nothing() -> None:
    return None


def _attribute(module, target: str):
    """The parameter or buffer at dotted path `target` of `module`."""
    return functools.reduce(getattr, target.split("."), module)


def _named_arguments(fx) -> dict:
    """`fx`'s arguments by their schema names."""
    named = dict(fx.kwargs)
    for argument, value in zip(fx.target._schema.arguments, fx.args):
        named[argument.name] = value
    return named


def _random(name: str, shape, dtype: str, integer_high: int) -> np.ndarray:
    """Values for input `name`, seeded by its name: standard normal floats, integers in
    [0, integer_high), booleans half true."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    staged = host_dtype(dtype)
    shape = tuple(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if staged.kind in "iu":
        return rng.integers(0, integer_high, shape).astype(staged)
    if staged.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(staged)
    values = rng.standard_normal(shape, dtype=np.float32)
    return values if staged == values.dtype else values.astype(staged)


def _host_copy(torch, tensor) -> np.ndarray:
    """A host NumPy copy of weight `tensor` (float32 for dtypes NumPy lacks)."""
    try:
        return tensor.detach().cpu().numpy().copy()
    except TypeError:
        return tensor.detach().to(torch.float32).cpu().numpy()

