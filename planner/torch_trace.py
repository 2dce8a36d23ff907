"""A live PyTorch model as a graph.

- `trace(module, *example_inputs)` runs `torch.export` on the CPU and reads the program back the
  way `planner.load` reads a `.pt2` file (the forward pass).
- `trace_step(step, module=..., optimizer=...)` runs one training step and records it at the
  ATen dispatch level (`planner.recording`): every op a node in eager order, every storage a
  buffer with its eager lifetime and kind.

Needs torch (`pip install 'slabscope[torch]'`), imported on first use. From a shell,
`python -m slabscope.planner.torch_trace package.module:Model --input-shape 2,128:int64 -o model.pt2` writes
the archive the window opens; with `--step adam` (or `sgd`) it records one steady-state training
step after a warm-up step and writes a JSON graph file instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Callable

from .model.graph import Graph
from .support.errors import PlanError


def _require_torch():
    try:
        import torch
    except ImportError:
        raise PlanError("tracing a PyTorch model needs torch: pip install 'slabscope[torch]'") \
            from None
    return torch


def export(module, *example_inputs, decompose: bool = False):
    """`torch.export.export(module, example_inputs)` with the inputs on the CPU (the core ATen
    decomposition of it with `decompose`)."""
    torch = _require_torch()
    inputs = tuple(x.cpu() if isinstance(x, torch.Tensor) else x for x in example_inputs)
    program = torch.export.export(module.cpu(), inputs)
    return program.run_decompositions() if decompose else program


def trace(module, *example_inputs, include_weights: bool = False,
          decompose: bool = False) -> Graph:
    """The graph of `module` run on `example_inputs`: exported with `torch.export` on the CPU,
    saved to a temporary `.pt2` and read back by `planner.load`'s rules (weights out of the slab
    unless `include_weights`)."""
    from .formats.torch_export_import import load_pt2

    torch = _require_torch()
    program = export(module, *example_inputs, decompose=decompose)
    name = type(module).__name__
    with tempfile.TemporaryDirectory(prefix="slabscope-trace-") as folder:
        path = Path(folder) / f"{name}.pt2"
        torch.export.save(program, path)
        graph, _ = load_pt2(path, include_weights=include_weights)
    return graph


def trace_step(step: Callable[[], object], *, module=None, optimizer=None,
               alignment: int = 1) -> Graph:
    """Run `step()` (one training step, no arguments) once on the CPU and return it as a graph:
    each ATen op a node in the order eager PyTorch ran it (the schedule), each tensor storage a
    buffer live from its creation to when its last reference died (views and in-place results
    share their base's), with kinds weight, gradient, optimizer_state, input, activation and
    temporary, named by module path and op. `module` and `optimizer` name the weights and the
    optimizer state (live across the whole step). `alignment` 1 counts bytes as the CPU (and
    PyTorch's MemTracker) does; 512 rounds as CUDA's caching allocator does."""
    _require_torch()
    from .recording.step_recorder import trace_step as record

    return record(step, module=module, optimizer=optimizer, alignment=alignment)


def example_input(spec: str, torch):
    """A tensor from `2,128` (float32 noise) or `2,128:int64` (zeros of that dtype)."""
    shape_text, _, dtype_name = spec.partition(":")
    try:
        shape = tuple(int(d) for d in shape_text.split(",") if d.strip())
    except ValueError:
        raise PlanError(f"--input-shape {spec!r}: sizes must be integers such as 2,128") from None
    dtype = getattr(torch, dtype_name or "float32", None)
    if not isinstance(dtype, torch.dtype):
        raise PlanError(f"--input-shape {spec!r}: unknown dtype {dtype_name!r}")
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    return torch.zeros(shape, dtype=dtype)


def _model(reference: str):
    """The model `module:Name` names: `Name` called with no arguments (a class or a factory)."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise PlanError(f"{reference!r}: name the model as module:Class")
    here = os.getcwd()
    sys.path.insert(0, here)  # as `python -m` would, so a model file beside the shell is found
    importlib.invalidate_caches()  # a finder cached before the file was written would miss it
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise PlanError(f"{reference!r}: {exc}") from None
    finally:
        sys.path.remove(here)
    return factory()


def main(argv: list[str] | None = None) -> int:
    """`python -m slabscope.planner.torch_trace module:Class --input-shape 2,8 [-o model.pt2]`:
    export the model on the CPU and save the archive; with `--step adam|sgd`, record one
    steady-state training step and write it as a JSON graph. 0 on success, 2 on bad input (one
    line on stderr)."""
    parser = argparse.ArgumentParser(
        prog="python -m slabscope.planner.torch_trace",
        description="Export a PyTorch model with torch.export on the CPU and save the .pt2 "
                    "archive that `slabscope` opens; or, with --step, record one training step "
                    "as a JSON graph.")
    parser.add_argument("model", help="module:Class (or module:factory), called with no arguments")
    parser.add_argument("--input-shape", action="append", required=True, metavar="SIZES[:DTYPE]",
                        help="one example input per use, e.g. 2,128 or 2,128:int64 "
                             "(floats are random, integers zeros)")
    parser.add_argument("-o", "--output",
                        help="the file to write (default: Class.pt2, or Class_step.json)")
    parser.add_argument("--train", action="store_true",
                        help="export in training mode (default: eval mode)")
    parser.add_argument("--decompose", action="store_true",
                        help="write the core ATen decomposition (views and copies made explicit)")
    parser.add_argument("--step", choices=("adam", "sgd"),
                        help="record one training step after a warm-up step (forward, "
                             "output.float().sum(), backward, optimizer step, zero_grad) with "
                             "torch.optim.Adam(params) or SGD(params, lr=0.01, momentum=0.9)")
    parser.add_argument("--fake", action="store_true",
                        help="with --step: build the model and inputs as fake tensors (shapes "
                             "only), so a model larger than this machine's memory records")
    parser.add_argument("--lifetimes", choices=("eager", "last-use"), default="eager",
                        help="with --step: eager (each storage live until its last reference "
                             "died, as PyTorch ran it; default) or last-use (freed at its last "
                             "access, so `slabscope plan --schedule best` may move each "
                             "optimizer update to just after its gradient)")
    parser.add_argument("--alignment", type=int, default=1,
                        help="with --step: the graph's alignment in bytes (1: bytes as the CPU "
                             "counts them; 512: as CUDA's caching allocator rounds)")
    args = parser.parse_args(argv)
    try:
        torch = _require_torch()
        if args.step:
            return _record_step(args, torch)
        model = _model(args.model)
        model.train(args.train)
        inputs = [example_input(spec, torch) for spec in args.input_shape]
        try:
            program = export(model, *inputs, decompose=args.decompose)
        except Exception as exc:  # the model's own failure to export, in torch's words
            raise PlanError(f"torch.export failed: {_first_line(exc)}") from None
        output = Path(args.output or f"{type(model).__name__}.pt2")
        torch.export.save(program, output)
    except PlanError as exc:
        print(f"torch_trace: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {output} ({len(program.graph.nodes)} graph nodes)")
    return 0


def _first_line(exc: Exception) -> str:
    """`Type: first line of the message`, for an error raised inside the user's model."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _record_step(args, torch) -> int:
    """`--step`: build the model (as fake tensors with `--fake`), record a steady-state step
    and write it as a JSON graph file."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .analysis.peak import live_peak
    from .formats.graph_writer import write_graph
    from .recording.training_step import record_training_step

    if args.alignment < 1:
        raise PlanError(f"--alignment must be a positive number of bytes, got {args.alignment}")
    with FakeTensorMode() if args.fake else nullcontext():
        model = _model(args.model)
        inputs = [example_input(spec, torch) for spec in args.input_shape]
    try:
        graph = record_training_step(model, inputs, args.step, args.alignment)
    except PlanError:
        raise
    except Exception as exc:  # the model's own failure to run, in torch's words
        raise PlanError(f"the training step failed: {_first_line(exc)}") from None
    if args.lifetimes == "last-use":
        from .recording.dataflow import dataflow_lifetimes

        graph = dataflow_lifetimes(graph)
    output = Path(args.output or f"{type(model).__name__}_step.json")
    write_graph(graph, output, f"one steady-state {args.step} training step of "
                               f"{args.model} on inputs {' '.join(args.input_shape)}, recorded "
                               f"on the CPU{' with fake tensors' if args.fake else ''}, "
                               f"{args.lifetimes} lifetimes")
    peak = live_peak(graph)
    print(f"wrote {output} ({len(graph.nodes)} ops, {len(graph.buffers)} buffers, live peak "
          f"{peak.bytes:,} bytes at {peak.node!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
