"""A live PyTorch model as a graph: `trace(module, *example_inputs)` runs `torch.export` on the
CPU and reads the program back the way `planner.load` reads a `.pt2` file.

Needs torch (`pip install 'slabscope[torch]'`), imported on first use. From a shell,
`python -m slabscope.planner.torch_trace package.module:Model --input-shape 2,128:int64 -o model.pt2` writes
the archive the window opens.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

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
    sys.path.insert(0, ".")  # as `python -m` would, so a model file beside the shell is found
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise PlanError(f"{reference!r}: {exc}") from None
    finally:
        sys.path.remove(".")
    return factory()


def main(argv: list[str] | None = None) -> int:
    """`python -m slabscope.planner.torch_trace module:Class --input-shape 2,8 [-o model.pt2]`: export the
    model on the CPU and save the archive; 0 on success, 2 on bad input (one line on stderr)."""
    parser = argparse.ArgumentParser(
        prog="python -m slabscope.planner.torch_trace",
        description="Export a PyTorch model with torch.export on the CPU and save the .pt2 "
                    "archive that `slabscope` opens.")
    parser.add_argument("model", help="module:Class (or module:factory), called with no arguments")
    parser.add_argument("--input-shape", action="append", required=True, metavar="SIZES[:DTYPE]",
                        help="one example input per use, e.g. 2,128 or 2,128:int64 "
                             "(floats are random, integers zeros)")
    parser.add_argument("-o", "--output", help="the .pt2 to write (default: Class.pt2)")
    parser.add_argument("--train", action="store_true",
                        help="export in training mode (default: eval mode)")
    parser.add_argument("--decompose", action="store_true",
                        help="write the core ATen decomposition (views and copies made explicit)")
    args = parser.parse_args(argv)
    try:
        torch = _require_torch()
        model = _model(args.model)
        model.train(args.train)
        inputs = [example_input(spec, torch) for spec in args.input_shape]
        try:
            program = export(model, *inputs, decompose=args.decompose)
        except Exception as exc:  # the model's own failure to export, in torch's words
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise PlanError(f"torch.export failed: {type(exc).__name__}: {first}") from None
        output = Path(args.output or f"{type(model).__name__}.pt2")
        torch.export.save(program, output)
    except PlanError as exc:
        print(f"torch_trace: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {output} ({len(program.graph.nodes)} graph nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
