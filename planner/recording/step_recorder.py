"""One training step recorded at the ATen dispatch level, as a graph.

Each ATen op the step runs is a node, in the order eager PyTorch ran it (the graph's schedule).
Each tensor storage is a buffer, live from the op that made it to the op running when its last
reference died (`storage_ledger`); a storage that existed before the step (weights, optimizer
state, the batch) is live from the first op, and one still referenced after it to the last.
Edges are the step's data dependencies (read after write, write after read, write after
write, from the schemas' write annotations), so other orders of the same step can be planned.
The graph names the serial conflict model as its own: planned in the recorded order, its live
peak is the one PyTorch measured.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

import torch
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ..formats.graph_file import graph_from_dict
from ..model.graph import Graph
from ..support.errors import PlanError
from .module_paths import ModulePaths
from .storage_ledger import StorageLedger, StorageRecord

# Kinds known before the step runs, or from hooks while it runs; the rest follow from lifetimes.
WEIGHT, GRADIENT, OPTIMIZER_STATE = "weight", "gradient", "optimizer_state"
INPUT, ACTIVATION, TEMPORARY = "input", "activation", "temporary"
# Kinds whose storages exist before the step and after it.
STANDING_KINDS = (WEIGHT, OPTIMIZER_STATE)


@dataclass
class OpRecord:
    """One ATen call: its op, where it ran, and the storages it touched or made."""

    op: str
    target: str
    phase: str
    module: str | None
    autograd: str | None
    parameter: str | None
    pointwise: bool
    same_layout: list[int]  # storages of arguments laid out as the one output is (pointwise ops)
    touched: list[tuple[int, bool]]  # (storage record index, written)
    made: list[int]


def _storage(tensor: torch.Tensor) -> torch.UntypedStorage | None:
    """The tensor's storage (None for tensors that have none, such as sparse ones)."""
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None


def _written(func, args, kwargs) -> set[int]:
    """ids of the tensors an op writes in place (`Tensor(a!)` arguments of its schema)."""
    out: set[int] = set()
    for i, argument in enumerate(func._schema.arguments):
        info = argument.alias_info
        if info is None or not info.is_write:
            continue
        value = args[i] if i < len(args) and not argument.kwarg_only else \
            kwargs.get(argument.name)
        out.update(id(t) for t in tree_leaves(value) if isinstance(t, torch.Tensor))
    return out


class StepRecorder(TorchDispatchMode):
    """Records the ATen ops run inside it and the storages they touch; `graph()` afterwards."""

    def __init__(self, module: torch.nn.Module | None = None, optimizer=None):
        super().__init__()
        self.module, self.optimizer = module, optimizer
        self.ledger = StorageLedger()
        self.ops: list[OpRecord] = []
        self.kinds: dict[int, str] = {}
        self.names: dict[int, str] = {}
        self._parameters = self._named_parameters()
        self._parameter_names = {name for name, _ in self._parameters}
        self._paths = ModulePaths(module, {id(p): name for name, p in self._parameters})
        self._in_optimizer = 0
        self._handles: list = []
        self._param_of_storage: dict[int, str] = {}
        self._last_parameter: str | None = None

    def _named_parameters(self) -> list[tuple[str, torch.Tensor]]:
        if self.module is not None:
            return list(self.module.named_parameters())
        if self.optimizer is not None:
            params = [p for group in self.optimizer.param_groups for p in group["params"]]
            return [(f"param {i}", p) for i, p in enumerate(params)]
        return []

    # --- around the step ------------------------------------------------------------------

    def __enter__(self):
        standing = list(self._parameters)
        if self.module is not None:
            standing += list(self.module.named_buffers())
        for name, tensor in standing:
            self._known(tensor, WEIGHT, name)
        self._optimizer_state()
        for name, p in self._parameters:
            if p.grad is not None:
                self._known(p.grad, GRADIENT, f"{name} · grad")
            if p.requires_grad:
                self._handles.append(p.register_post_accumulate_grad_hook(
                    lambda p, name=name: self._known(p.grad, GRADIENT, f"{name} · grad")))
        self._handles.append(register_optimizer_step_pre_hook(self._optimizer_began))
        self._handles.append(register_optimizer_step_post_hook(self._optimizer_ended))
        self._paths.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        result = super().__exit__(*exc)
        self._paths.__exit__(*exc)
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._optimizer_state()  # state the step made (a first step's)
        self.ledger.close()
        return result

    def _known(self, tensor: torch.Tensor | None, kind: str, name: str) -> None:
        """Mark `tensor`'s storage as `kind` called `name` (seen now if not before)."""
        storage = None if tensor is None else _storage(tensor)
        if storage is None:
            return
        record = self.ledger.known(storage) or self.ledger.record(storage, None)
        self.kinds.setdefault(record.index, kind)
        self.names.setdefault(record.index, name)
        # Optimizer ops are named after the parameter whose storages they touch; module buffers
        # (running statistics) belong to no parameter.
        if kind != WEIGHT or name in self._parameter_names:
            self._param_of_storage.setdefault(record.index, name.split(" · ")[0])

    def _optimizer_state(self) -> None:
        if self.optimizer is None:
            return
        names = {id(p): name for name, p in self._parameters}
        for p, state in self.optimizer.state.items():
            for key, value in state.items():
                name = f"{names.get(id(p), 'param')} · {key}"
                if isinstance(value, torch.Tensor):
                    self._known(value, OPTIMIZER_STATE, name)
                elif isinstance(value, (list, tuple)):  # LBFGS keeps its history as lists
                    for i, item in enumerate(value):
                        if isinstance(item, torch.Tensor):
                            self._known(item, OPTIMIZER_STATE, f"{name}[{i}]")

    def _optimizer_began(self, *_args) -> None:
        self._in_optimizer += 1

    def _optimizer_ended(self, *_args) -> None:
        self._in_optimizer -= 1

    # --- each op ---------------------------------------------------------------------------

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace in ("profiler", "prim"):  # markers and fake mode's device queries
            return func(*args, **kwargs)
        step = len(self.ops)
        self.ledger.step = step
        backward = torch._C._current_graph_task_id() != -1
        written = _written(func, args, kwargs)
        inputs = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        # Optimizers update without autograd; a closure they call (LBFGS's) runs forward with
        # it, on tensors that require grad, and is named and kinded as forward and backward.
        graphed = torch.is_grad_enabled() and any(t.requires_grad for t in inputs)
        phase = "backward" if backward else \
            "optimizer" if self._in_optimizer and not graphed else "forward"
        touched: dict[int, bool] = {}
        for tensor in inputs:
            storage = _storage(tensor)
            if storage is not None:
                record = self.ledger.record(storage, None)
                touched[record.index] = touched.get(record.index, False) or id(tensor) in written
        result = func(*args, **kwargs)
        made = []
        for tensor in tree_leaves(result):
            storage = _storage(tensor) if isinstance(tensor, torch.Tensor) else None
            if storage is None:
                continue
            record = self.ledger.known(storage)
            if record is None:
                record = self.ledger.record(storage, step)
                made.append(record.index)
            elif record.index not in touched:
                touched[record.index] = False  # a view of a storage the op did not take
            else:
                self.ledger.record(storage, None)  # an in-place resize grows it
        for index, write in touched.items():
            self.ledger.records[index].accesses.append((step, write))
        for index in made:
            self.ledger.records[index].accesses.append((step, True))
        parameter = None
        if phase == "optimizer":  # a loop over parameters: an op on temporaries is the last one's
            parameter = next((self._param_of_storage[i] for i in touched
                              if i in self._param_of_storage), self._last_parameter)
            self._last_parameter = parameter
        node = torch._C._current_autograd_node() if backward else None
        pointwise = torch.Tag.pointwise in func.tags
        self.ops.append(OpRecord(func.overloadpacket.__name__, str(func), phase,
                                 self._paths.current(backward),
                                 node.name() if node is not None else None, parameter,
                                 pointwise, self._same_layout(pointwise, inputs, result, made),
                                 list(touched.items()), made))
        return result

    def _same_layout(self, pointwise: bool, inputs: list, result, made: list[int]) -> list[int]:
        """For a pointwise op with one new output: the storages of the arguments that fill their
        whole storage exactly as the output fills its own (same sizes, strides and dtype), the
        ones its output could be written over element by element."""
        outputs = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)]
        if not pointwise or len(made) != 1 or len(outputs) != 1:
            return []
        out = outputs[0]
        same = []
        for tensor in inputs:
            storage = _storage(tensor)
            if storage is not None and tensor.shape == out.shape and \
                    tensor.stride() == out.stride() and tensor.dtype == out.dtype and \
                    tensor.storage_offset() == 0 and out.storage_offset() == 0 and \
                    storage.nbytes() == out.untyped_storage().nbytes():
                same.append(self.ledger.known(storage).index)
        return same

    # --- the graph ---------------------------------------------------------------------------

    def graph(self, name: str = "step", alignment: int = 1) -> Graph:
        """The recorded step as a validated graph (see the module's description)."""
        steps = len(self.ops)
        if not steps:
            raise PlanError("the step ran no ATen op: nothing to record")
        node_names = self._node_names()
        spans = [self._span(record, steps) for record in self.ledger.records]
        buffer_names = self._buffer_names(node_names, spans)
        nodes = []
        for i, op in enumerate(self.ops):
            attrs = {"module": op.module or "", "phase": op.phase, "target": op.target}
            if op.autograd:
                attrs["autograd"] = op.autograd
            if op.parameter:
                attrs["parameter"] = op.parameter
            if op.pointwise:  # ATen's pointwise tag: the opt-in in-place rule reads these two
                attrs["pointwise"] = "yes"
                attrs["same_layout"] = [buffer_names[b] for b in op.same_layout]
            made = set(op.made)
            nodes.append({"name": node_names[i], "op": op.op,
                          "inputs": [buffer_names[b] for b, _ in op.touched if b not in made],
                          "outputs": [buffer_names[b] for b in op.made],
                          "attrs": {k: v for k, v in attrs.items() if v or k == "same_layout"}})
        buffers = []
        for record, (first, last) in sorted(zip(self.ledger.records, spans),
                                            key=lambda pair: (pair[1][0], pair[0].index)):
            uses = sorted({first, last, *(step for step, _ in record.accesses)})
            buffers.append({"name": buffer_names[record.index], "bytes": record.bytes,
                            "uses": [node_names[u] for u in uses],
                            "kind": self._kind(record, first)})
        edges = [[node_names[a], node_names[b]] for a, b in self._edges(steps)]
        # Serial: eager PyTorch ran these ops one at a time in this order, and the buffers' uses
        # are the lifetimes recorded over it (the edges alone leave most ops unordered).
        return graph_from_dict({"alignment": alignment, "nodes": nodes, "edges": edges,
                                "buffers": buffers, "schedule": node_names,
                                "conflicts": "serial"}, name=name)

    def _span(self, record: StorageRecord, steps: int) -> tuple[int, int]:
        """The first and last step `record`'s storage was live (both included)."""
        standing = record.born is None and (record.alive or
                                            self.kinds.get(record.index) in STANDING_KINDS)
        if standing:
            first = 0
        elif record.born is not None:
            first = record.born
        else:  # made outside the dispatcher just before its first use (torch.tensor(...))
            first = record.accesses[0][0] if record.accesses else 0
        last = steps - 1 if record.alive else max(record.died, first,
                                                  *(s for s, _ in record.accesses))
        return first, last

    def _kind(self, record: StorageRecord, first: int) -> str:
        """Known kinds first; then an input (there before the step), an activation (made in
        forward and read in backward: saved for it, in any of the step's forward passes) or a
        temporary."""
        kind = self.kinds.get(record.index)
        if kind is not None:
            return kind
        if record.born is None and first == 0:
            return INPUT
        born_in_forward = self.ops[first].phase == "forward"
        read_in_backward = any(self.ops[step].phase == "backward" for step, _ in record.accesses)
        return ACTIVATION if born_in_forward and read_in_backward else TEMPORARY

    def _node_names(self) -> list[str]:
        """`module · op` per op (with `(backward)` in backward, the parameter in the optimizer),
        numbered from the second of a name on."""
        labels = []
        for op in self.ops:
            where = op.parameter if op.phase == "optimizer" and op.parameter else op.module
            label = f"{where} · {op.op}" if where else op.op
            if op.phase == "backward":
                label += " (backward)"
            elif op.phase == "optimizer":
                label = f"optimizer · {label}"
            labels.append(label)
        seen: Counter = Counter()
        names = []
        for label in labels:
            seen[label] += 1
            names.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
        return names

    def _buffer_names(self, node_names: list[str], spans) -> dict[int, str]:
        """Known names (parameters, their gradients and state); others after the op that made
        them, and the step's inputs numbered."""
        names: dict[int, str] = {}
        taken: Counter = Counter()
        inputs = 0
        for record, (first, _) in zip(self.ledger.records, spans):
            name = self.names.get(record.index)
            if name is None and record.born is not None:
                made = self.ops[record.born].made
                name = node_names[record.born] + (f" [{made.index(record.index)}]"
                                                  if len(made) > 1 else "")
            elif name is None:
                name = f"input {inputs}" if first == 0 else f"{node_names[first]} · tensor"
                inputs += first == 0
            taken[name] += 1
            names[record.index] = name if taken[name] == 1 else f"{name} #{taken[name]}"
        return names

    def _edges(self, steps: int) -> set[tuple[int, int]]:
        """The step's data dependencies, and the first op before (the last after) every other."""
        edges: set[tuple[int, int]] = set()
        for record in self.ledger.records:
            writer, readers = None, []
            for step, write in record.accesses:
                if write:
                    edges.update((r, step) for r in readers if r != step)
                    if writer is not None and writer != step:
                        edges.add((writer, step))
                    writer, readers = step, []
                else:
                    if writer is not None and writer != step:
                        edges.add((writer, step))
                    readers.append(step)
        has_in = {b for _, b in edges}
        has_out = {a for a, _ in edges}
        edges.update((0, v) for v in range(1, steps) if v not in has_in)
        edges.update((v, steps - 1) for v in range(steps - 1) if v not in has_out)
        return edges


def trace_step(step: Callable[[], object], *, module: torch.nn.Module | None = None,
               optimizer=None, alignment: int = 1, name: str | None = None) -> Graph:
    """Run `step()` once under a `StepRecorder` and return the step as a graph: ops as nodes in
    eager order, storages as buffers with eager lifetimes and kinds (weights and optimizer
    state found from `module` and `optimizer`). `alignment` 1 keeps CPU bytes as they are."""
    recorder = StepRecorder(module, optimizer)
    with recorder:
        step()
    label = name or (f"{type(module).__name__} step" if module is not None else "step")
    return recorder.graph(label, alignment)
