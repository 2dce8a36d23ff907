"""An ONNX model executed one node at a time over slab views: in onnxruntime when it is
installed, else in onnx's reference evaluator.

Each node is a one-node model at the model's opsets, fed the NumPy views of its inputs in the
slab, or the constants the importer folded away (initializers and what is computed only from
them, evaluated once here). In onnxruntime, I/O bindings point the session at the views, so it
reads and writes the slab itself; the reference evaluator returns new arrays, which are copied
into the outputs' views, the copy timed with the node. A result that no node reads is dropped.
Graph inputs are random, seeded by name, in their declared dtype and shape: integer inputs stay
below the size of what they index, and inputs that feed a normalisation's variance are
positive. The model's own reference is the whole model on the same inputs: in one onnxruntime
session (graph optimizations off) or one reference evaluator, as the nodes ran.
"""

from __future__ import annotations

import functools
import math
import time
import zlib
from pathlib import Path

import numpy as np

from slabscope.planner import Graph, PlanError
from slabscope.planner.formats.onnx_import import (load_onnx, node_names, read_model,
                                                    subgraph_reads)

from .binding import Staging, Step, check_operands
from .comparison import model_check

# Upper bound (exclusive) for an integer input no op bounds: small non-negative values.
DEFAULT_INTEGER_HIGH = 8

# (op type, input position) of inputs that must be positive: a normalisation's variance.
_POSITIVE = {("BatchNormalization", 4)}
# (op type, input position) of weights whose fan-in scales them, to keep activations in range.
_FAN_IN = {("Conv", 1), ("ConvTranspose", 1), ("MatMul", 1), ("Gemm", 1)}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _copy_into(name: str, op: str, views: dict, outputs, results, checked: list) -> None:
    """Copy each result into its output's view; the first time, check the shapes agree."""
    for output, value in zip(outputs, results):
        view = views.get(output)
        if view is None:
            continue
        if not checked and np.shape(value) != view.shape:
            raise PlanError(f"node {name!r} ({op}): output {output!r} has shape "
                            f"{list(np.shape(value))}, the graph gives it {list(view.shape)} "
                            f"(an unknown dimension taken as 1?)")
        np.copyto(view, value, casting="unsafe")
    checked.append(True)


class OnnxProgram:
    """An `.onnx` file's nodes, run by `onnx.reference` over NumPy views of the slab."""

    kind = "ONNX model, one node at a time"
    backends = ("onnxruntime", "numpy")  # numpy: onnx.reference over NumPy views

    def __init__(self, path, include_weights: bool = False):
        self.path = Path(path)
        self.include_weights = include_weights
        self.model = read_model(self.path)
        self.graph, notes = load_onnx(self.path, include_weights)
        self.opsets = {o.domain: o.version for o in self.model.opset_import}
        names, folded = node_names(self.model.graph)
        self.nodes = {name: node for name, node in zip(names, self.model.graph.node) if name}
        self._evaluators: dict = {}
        self._sessions: dict = {}
        self.types = {info.name: info.type.tensor_type.elem_type
                      for info in (*self.model.graph.input, *self.model.graph.value_info,
                                   *self.model.graph.output)
                      if info.type.HasField("tensor_type")}
        self.constants = self._constants(folded)
        guessed = {b.name for b in self.graph.buffers if b.kind != "input" and len(b.uses) > 1
                   and b.name in {*notes.unknown_dims, *notes.unknown_types}}
        if guessed:  # a guess no node reads (Dropout's mask) is dropped, not worth a run
            # what inference left unknown (a Reshape to a computed shape) is measured by one
            # run of the whole model on the staged inputs, and the graph read again with it
            self.graph, notes = load_onnx(self.path, include_weights,
                                          measured=self._measured(self.stage(self.graph)))
        self.notes = notes  # what is still guessed: unknown dimensions of graph inputs

    def _evaluator(self, node, name: str):
        """The reference evaluator of one node (made once); an op it lacks is a `PlanError`
        naming the node and the op."""
        if name not in self._evaluators:
            from onnx.reference import ReferenceEvaluator

            from onnx import helper

            # a graph of the one node, so the evaluator takes the op at the model's opset
            graph = helper.make_graph(
                [node], name, [helper.make_empty_tensor_value_info(t) for t in _reads(node)],
                [helper.make_empty_tensor_value_info(t) for t in node.output if t])
            try:
                self._evaluators[name] = ReferenceEvaluator(graph, opsets=self.opsets)
            except Exception as exc:  # no implementation of the op, or an invalid node
                raise PlanError(f"node {name!r} ({node.op_type}) cannot run: onnx.reference: "
                                f"{_first_line(exc)}") from None
        return self._evaluators[name]

    def _constants(self, folded: list[int]) -> dict:
        """Initializers and the folded nodes' outputs, computed once, in model order."""
        from onnx import numpy_helper

        constants = {t.name: numpy_helper.to_array(t) for t in self.model.graph.initializer}
        for i in folded:
            node = self.model.graph.node[i]
            name = node.name or f"{node.op_type}_{i}"
            evaluator = self._evaluator(node, name)
            try:
                results = evaluator.run(None, {t: constants[t] for t in _reads(node)})
            except Exception as exc:  # the evaluator's own failure on this node
                raise PlanError(f"node {name!r} ({node.op_type}) cannot run: "
                                f"{_first_line(exc)}") from None
            constants.update((t, np.asarray(v)) for t, v in zip(node.output, results) if t)
        return constants

    def _measured(self, staging: Staging) -> dict:
        """(shape, dtype name) of every tensor a node writes, from one run of the whole model
        on `staging`'s inputs (onnxruntime without graph optimizations when installed, else
        onnx.reference)."""
        from onnx import helper

        model = type(self.model)()
        model.CopyFrom(self.model)
        named = {info.name: info for info in model.graph.value_info}
        names = [o.name for o in model.graph.output]
        for node in model.graph.node:
            for t in node.output:
                if t and t not in names:
                    model.graph.output.append(named.get(t) or
                                              helper.make_empty_tensor_value_info(t))
                    names.append(t)
        feeds = {n: v for n, v in staging.inputs.items() if n not in self.constants}
        try:
            import onnxruntime as ort
        except ImportError:
            ort = None
        try:
            if ort is not None:
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                options.log_severity_level = 4  # fatal only: a failure becomes our one line
                results = ort.InferenceSession(model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"]
                                               ).run(names, feeds)
            else:
                from onnx.reference import ReferenceEvaluator

                results = ReferenceEvaluator(model).run(names, feeds)
        except Exception as exc:  # the engine's own failure on the whole model
            raise PlanError(f"{self.path.name}: shapes inference left unknown could not be "
                            f"measured by a run: {_first_line(exc)}") from None
        return {n: (np.shape(v), np.asarray(v).dtype.name) for n, v in zip(names, results)}

    # --- checks --------------------------------------------------------------------------

    def check(self, graph: Graph) -> None:
        """Every node must be one of the model's (whether its op runs shows when the chosen
        engine prepares it: a one-line `PlanError` naming node and op), and every buffer
        sized as when the model runs."""
        if {b.name for b in graph.buffers} != {b.name for b in self.graph.buffers}:
            raise PlanError(f"the graph's buffers are not those of {self.path.name} read with "
                            f"include_weights={self.include_weights}")
        for buf in graph.buffers:
            own = self.graph.buffer(buf.name)
            if (buf.shape, buf.bytes) != (own.shape, own.bytes):
                raise PlanError(f"buffer {buf.name!r} is {list(buf.shape or ())} here but "
                                f"{list(own.shape)} when {self.path.name} runs (an unknown "
                                f"dimension taken as 1); run the file itself")
        for node in graph.nodes:
            if node.op in ("upload", "readback"):
                continue
            if node.name not in self.nodes:
                raise PlanError(f"node {node.name!r} ({node.op}) is not in {self.path.name}")

    # --- staging -------------------------------------------------------------------------

    def stage(self, graph: Graph) -> Staging:
        """Random graph inputs (see the module docstring), the weights when they are in the
        slab, and host space for the read-back buffers."""
        inputs = {}
        for node in graph.nodes:
            if node.op != "upload":
                continue
            for name in node.outputs:
                buf = graph.buffer(name)
                if name in self.constants:
                    inputs[name] = self.constants[name]
                else:
                    inputs[name] = self._random(name, buf.shape, buf.dtype)
        outputs = {name: np.empty(graph.buffer(name).shape, dtype=graph.buffer(name).dtype)
                   for node in graph.nodes if node.op == "readback" for name in node.inputs}
        return Staging(inputs, outputs)

    def _random(self, name: str, shape, dtype: str) -> np.ndarray:
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        kind = np.dtype(dtype).kind
        if kind == "b":
            return rng.random(shape) < 0.5
        if kind in "iu":
            return rng.integers(0, self._integer_high(name), shape).astype(dtype)
        roles = {(n.op_type, k) for n in self.model.graph.node for k, t in enumerate(n.input)
                 if t == name}
        if roles & _POSITIVE:
            return rng.uniform(0.5, 1.5, shape).astype(dtype)
        values = rng.standard_normal(shape).astype(dtype)
        if roles & _FAN_IN and len(shape) >= 2:
            fan_in = math.prod(shape[1:]) if len(shape) > 2 else shape[0]
            values *= np.asarray(1.0 / math.sqrt(max(fan_in, 1)), dtype=dtype)
        return values

    def _integer_high(self, name: str) -> int:
        """The size of the axis a Gather indexes with `name`, else `DEFAULT_INTEGER_HIGH`."""
        bounds = []
        for node in self.model.graph.node:
            if node.op_type in ("Gather", "GatherElements") and len(node.input) > 1 and \
                    node.input[1] == name:
                axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                data = node.input[0]
                shape = self.constants[data].shape if data in self.constants else \
                    self.graph.buffer(data).shape if data in self.graph.buffer_index else None
                if shape:
                    bounds.append(shape[axis])
        return max(1, min(bounds)) if bounds else DEFAULT_INTEGER_HIGH

    # --- binding -------------------------------------------------------------------------

    def build_steps(self, backend, graph: Graph, binding, order, staging: Staging) -> list[Step]:
        """The nodes in `order` bound to `binding`'s views; raises `PlanError` if a node's input
        shares bytes with a different output buffer."""
        from .binding import _readback, _upload

        views = binding.views
        steps = []
        for i in order:
            node = graph.nodes[i]
            check_operands(binding, node)
            moved = sum(graph.buffer(n).bytes for n in node.inputs + node.outputs)
            if node.op == "upload":
                launch = functools.partial(_upload, backend, views, staging.inputs, node.outputs)
            elif node.op == "readback":
                launch = functools.partial(_readback, backend, views, staging.outputs,
                                           node.inputs)
            else:
                proto = self.nodes[node.name]
                feeds = {t: views[t] if t in views else self.constants[t]
                         for t in _reads(proto)}
                # a result no node reads (Dropout's mask) is dropped: its size may be a guess
                kept = tuple(t if t in views and len(graph.buffer(t).uses) > 1 else ""
                             for t in proto.output)
                if backend.name == "onnxruntime":
                    launch = self._bound(backend, proto, node.name, feeds, views, kept)
                else:
                    launch = functools.partial(_run_node, self._evaluator(proto, node.name),
                                               feeds, node.name, node.op, views, kept, [])
            flops = _flops(self.nodes[node.name], feeds, graph) \
                if node.op not in ("upload", "readback") else 0
            steps.append(Step(node, launch, flops, moved))
        return steps

    def _session(self, backend, proto, name: str, feeds: dict):
        """The onnxruntime session of one node (made once), typed by the arrays it is fed."""
        if name not in self._sessions:
            from onnx import helper

            ort = backend.onnxruntime
            inputs = [helper.make_tensor_value_info(
                t, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for t, a in feeds.items()]
            outputs = [helper.make_tensor_value_info(t, self.types[t], None)
                       if self.types.get(t) else helper.make_empty_tensor_value_info(t)
                       for t in proto.output if t]
            model = helper.make_model(helper.make_graph([proto], name, inputs, outputs),
                                      opset_imports=self.model.opset_import,
                                      ir_version=self.model.ir_version)
            options = ort.SessionOptions()
            options.log_severity_level = 4  # fatal only: a failure becomes our one line
            # one thread per session: hundreds of sessions must not each start a thread pool
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            try:
                self._sessions[name] = ort.InferenceSession(
                    model.SerializeToString(), options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # onnxruntime's own refusal of the node
                raise PlanError(f"node {name!r} ({proto.op_type}) cannot run: onnxruntime: "
                                f"{_first_line(exc)}") from None
        return self._sessions[name]

    def _bound(self, backend, proto, name: str, feeds: dict, views: dict, kept):
        """A launch of one node in onnxruntime that reads its inputs from `feeds` and writes
        its kept results into their views, all bound by address."""
        session = self._session(backend, proto, name, feeds)
        binding = session.io_binding()
        for t, array in feeds.items():
            array = np.asarray(array, order="C")  # ascontiguousarray makes a scalar 1-D
            feeds[t] = array  # the binding holds its address: keep the array alive
            binding.bind_input(t, "cpu", 0, array.dtype, array.shape, array.ctypes.data)
        for t in (t for t in proto.output if t):
            if t in kept:
                view = views[t]
                binding.bind_output(t, "cpu", 0, view.dtype, view.shape, view.ctypes.data)
            else:
                binding.bind_output(t, "cpu")
        return functools.partial(session.run_with_iobinding, binding)

    # --- the model's own reference ---------------------------------------------------------

    def reference(self, backend, graph: Graph, binding, staging: Staging):
        """The slab's graph outputs against the whole model on the same inputs: in one
        onnxruntime session without graph optimizations (its fusions would change the kernels)
        when the nodes ran in onnxruntime, else in one reference evaluator."""
        started = time.perf_counter()
        feeds = {name: value for name, value in staging.inputs.items()
                 if name not in self.constants}
        if backend.name == "onnxruntime":
            label = "the whole model in onnxruntime (graph optimizations off)"
            run = self._whole_model_session(backend).run
        else:
            from onnx.reference import ReferenceEvaluator

            label, run = "the whole model in onnx.reference", ReferenceEvaluator(self.model).run
        try:
            expected = run(None, feeds)
        except Exception as exc:  # the engine's own failure on the whole model
            raise PlanError(f"{self.path.name}: {label} failed: {_first_line(exc)}") from None
        names = [o.name for o in self.model.graph.output]
        produced, wanted, dtypes = {}, {}, {}
        for name, value in zip(names, expected):
            if name in binding.views:
                produced[name] = backend.to_host(binding.views[name])
                wanted[name] = np.asarray(value)
                dtypes[name] = graph.buffer(name).dtype
        return model_check(label, produced, wanted, dtypes, started)

    def _whole_model_session(self, backend):
        """One onnxruntime session of the whole model, with the kernels a node-by-node run has."""
        ort = backend.onnxruntime
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        return ort.InferenceSession(self.model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])


def _flops(proto, feeds: dict, graph: Graph) -> int:
    """Multiply-adds x 2 of the ops that dominate CNNs and MLPs (Conv, MatMul, Gemm), from the
    shapes of their operands; 0 for the rest, which the reports show as not counted."""
    outputs = [t for t in proto.output if t]
    if not outputs or outputs[0] not in graph.buffer_index or len(proto.input) < 2:
        return 0
    out = math.prod(graph.buffer(outputs[0]).shape)
    weight = np.shape(feeds.get(proto.input[1]))
    if proto.op_type == "Conv" and len(weight) > 2:
        return 2 * out * math.prod(weight[1:])  # each output: C_in/group x kernel products
    if proto.op_type == "MatMul" and weight:
        return 2 * out * (weight[0] if len(weight) == 1 else weight[-2])
    if proto.op_type == "Gemm" and len(weight) == 2:
        trans_b = next((a.i for a in proto.attribute if a.name == "transB"), 0)
        return 2 * out * (weight[1] if trans_b else weight[0])
    return 0


def _reads(node) -> tuple[str, ...]:
    """What `node` reads: its inputs, then what its subgraphs read of the enclosing graph."""
    return tuple(dict.fromkeys([t for t in node.input if t] + list(subgraph_reads(node))))


def _run_node(evaluator, feeds: dict, name: str, op: str, views: dict, outputs, checked: list
              ) -> None:
    results = evaluator.run(None, feeds)
    _copy_into(name, op, views, outputs, results, checked)

