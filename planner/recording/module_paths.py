"""Which module an op runs in: forward pre/post hooks keep a stack of module paths, and each
autograd node made inside a module is labelled with its path, so backward ops are named too."""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves

# The key of the module path in an autograd node's metadata.
LABEL = "slabscope.module"


class ModulePaths:
    """The module path of the op running now, in forward (the hook stack) and in backward (the
    label of the autograd node being run). Use as a context manager: hooks live inside it."""

    def __init__(self, module: torch.nn.Module | None, parameters: dict[int, str]):
        self._module = module
        self._parameter_names = parameters  # id(parameter) -> its name, for AccumulateGrad
        self._stack: list[tuple[str, int]] = []
        self._handles: list = []

    def __enter__(self) -> ModulePaths:
        if self._module is not None:
            for path, sub in self._module.named_modules():
                label = path or "(root)"
                self._handles.append(sub.register_forward_pre_hook(
                    lambda _m, _args, label=label: self._enter(label)))
                self._handles.append(sub.register_forward_hook(
                    lambda _m, _args, out, label=label: self._leave(out), always_call=True))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        self._stack.clear()

    def _enter(self, label: str) -> None:
        self._stack.append((label, torch._C._autograd._get_sequence_nr()))

    def _leave(self, outputs) -> None:
        if not self._stack:
            return
        label, start = self._stack.pop()
        # Autograd nodes made since this module began and not yet labelled (by an inner module,
        # whose hook ran first) belong to it; the walk stops at nodes older than the module.
        seen: set = set()
        work = [t.grad_fn for t in tree_leaves(outputs)
                if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        while work:
            node = work.pop()
            if node is None or node in seen or node._sequence_nr() < start:
                continue
            seen.add(node)
            if node.name() == "torch::autograd::AccumulateGrad":
                continue
            node.metadata.setdefault(LABEL, label)
            work.extend(next_node for next_node, _ in node.next_functions)

    def current(self, backward: bool) -> str | None:
        """The module path of the op running now (None outside every module)."""
        if not backward:
            return self._stack[-1][0] if self._stack else None
        node = torch._C._current_autograd_node()
        if node is None:
            return None
        if node.name() == "torch::autograd::AccumulateGrad":
            return self._parameter_names.get(id(node.variable))
        return node.metadata.get(LABEL)
