"""The training step the shell records: forward, `loss = output.float().sum()`, backward, the
optimizer's step and `zero_grad(set_to_none=True)`; one warm-up step first, so the recorded
one is a steady-state step (the optimizer state already exists)."""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch.utils._pytree import tree_leaves

from ..model.graph import Graph
from ..support.errors import PlanError
from .step_recorder import trace_step

OPTIMIZERS = ("adam", "sgd")


def make_optimizer(name: str, parameters) -> torch.optim.Optimizer:
    """`adam`: `torch.optim.Adam(params)`; `sgd`: `torch.optim.SGD(params, lr=0.01,
    momentum=0.9)`; over the parameters that require gradients."""
    params = [p for p in parameters if p.requires_grad]
    if name == "adam":
        return torch.optim.Adam(params)
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    raise PlanError(f"unknown optimizer {name!r}; choose from {', '.join(OPTIMIZERS)}")


def _first_tensor(output) -> torch.Tensor:
    """The model's output tensor (the first one of a tuple, dict or model-output object)."""
    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if hasattr(output, "values") and callable(output.values) else output
    for leaf in tree_leaves(list(values) if not isinstance(values, (list, tuple)) else values):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point():
            return leaf
    raise PlanError(f"the model returned no floating-point tensor (got {type(output).__name__})")


def training_step(model: torch.nn.Module, inputs: Sequence[torch.Tensor],
                  optimizer: torch.optim.Optimizer) -> Callable[[], None]:
    """The zero-argument step: forward on `inputs`, sum as the loss, backward, update, zero."""

    def step() -> None:
        loss = _first_tensor(model(*inputs)).float().sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def record_training_step(model: torch.nn.Module, inputs: Sequence[torch.Tensor],
                         optimizer_name: str, alignment: int = 1) -> Graph:
    """One steady-state training step of `model` (in training mode) recorded after one warm-up
    step, with `optimizer_name` ("adam" or "sgd")."""
    model.train()
    optimizer = make_optimizer(optimizer_name, model.parameters())
    step = training_step(model, inputs, optimizer)
    step()  # warm-up: the optimizer makes its state here, as in every later step
    return trace_step(step, module=model, optimizer=optimizer, alignment=alignment,
                      name=f"{type(model).__name__} {optimizer_name} step")
