"""What executes a graph's nodes: the built-in ops of executable graph files, a `torch.export`
program (`.pt2`), or an ONNX model. One interface, so the runner, verification and the memory
pass are written once.

A program checks a graph before anything runs, stages host data for its upload and readback
nodes, binds its nodes to a layout's views as launchable steps, and (for real models) checks
the slab's outputs against the model's own reference.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from slabscope.planner import Graph

from .binding import Binding, Staging, Step, build_steps, check_executable, stage


class Program(Protocol):
    """Executes one graph's nodes. `kind` says how, in one line; `backends` lists the backends
    it runs on, in the order `--backend auto` prefers them."""

    kind: str
    backends: tuple[str, ...]

    def check(self, graph: Graph) -> None:
        """Raise `PlanError` naming the first node or buffer that keeps `graph` from running."""

    def stage(self, graph: Graph) -> Staging:
        """Host data for the upload nodes and host space for the readback nodes."""

    def build_steps(self, backend, graph: Graph, binding: Binding, order,
                    staging: Staging) -> list[Step]:
        """The nodes in `order` bound to `binding`'s views."""

    def reference(self, backend, graph: Graph, binding: Binding,
                  staging: Staging):
        """The slab's outputs against the model's own reference (a `ModelCheck`), or None."""


class BuiltinProgram:
    """The built-in ops (upload, matmul, softmax, ...) of executable graph files, on NumPy or
    CuPy arrays."""

    kind = "built-in ops"
    backends = ("cupy", "numpy")

    def check(self, graph: Graph) -> None:
        check_executable(graph)

    def stage(self, graph: Graph) -> Staging:
        return stage(graph)

    def build_steps(self, backend, graph, binding, order, staging):
        return build_steps(backend, graph, binding, order, staging)

    def reference(self, backend, graph, binding, staging):
        return None  # the per-buffer run is the only reference a built-in graph has


BUILTIN = BuiltinProgram()

# Model files the runner executes with their own framework, by suffix.
MODEL_SUFFIXES = (".pt2", ".onnx")


def model_path(source, model=None) -> Path | None:
    """The model file to execute: `model` when given, else `source` when it is a `.pt2` or
    `.onnx` path; None for graph files and in-memory graphs."""
    for candidate in (model, source):
        if isinstance(candidate, (str, Path)) and Path(candidate).suffix.lower() in MODEL_SUFFIXES:
            return Path(candidate)
    return None


def program_for(source, model=None, include_weights: bool = False) -> Program:
    """The program that executes `source` (see `model_path`); `include_weights` must be what
    the graph was loaded with (weights in the slab or not). A model file unchanged since its
    last run is not loaded again (loading a `.pt2` takes seconds)."""
    path = model_path(source, model)
    if path is None:
        return BUILTIN
    try:
        stat = path.resolve().stat()
    except OSError as exc:
        from slabscope.planner import PlanError

        raise PlanError(f"{path}: {exc.strerror}") from None
    return _loaded(path.resolve(), stat.st_mtime_ns, stat.st_size, include_weights)


def model_graph(path, include_weights: bool = False) -> Graph:
    """The graph a run of file `path` places: a model's as its program reads it (an ONNX
    model's dimensions that inference left unknown as one run of it measures them; what is
    still guessed is warned of), any other file's as `planner.load` reads it."""
    if model_path(path) is None:
        from slabscope import planner

        return planner.load(path, include_weights=include_weights)
    program = program_for(path, None, include_weights)
    guesses = program.notes.guesses()
    if guesses:
        import warnings

        warnings.warn(f"{Path(path).name}: {guesses}", stacklevel=2)
    return replace(program.graph)  # a copy: the program is kept for the next run


@functools.lru_cache(maxsize=4)
def _loaded(path: Path, mtime_ns: int, size: int, include_weights: bool) -> Program:
    """The program of model file `path` as it was at (`mtime_ns`, `size`)."""
    if path.suffix.lower() == ".pt2":
        from .torch_program import TorchProgram

        return TorchProgram(path, include_weights)
    from .onnx_program import OnnxProgram

    return OnnxProgram(path, include_weights)


def run_unavailable(graph: Graph, path: Path | None) -> str | None:
    """Why `graph` (read from `path`) cannot run, in one line, or None; cheap enough for the GUI
    thread (it imports no framework: a missing op shows when the run starts)."""
    import importlib.util

    suffix = path.suffix.lower() if path is not None else ""
    if suffix == ".pt2":
        return None if importlib.util.find_spec("torch") else \
            "running .pt2 models needs torch: pip install 'slabscope[torch]'"
    if suffix == ".onnx":
        return None if importlib.util.find_spec("onnx") else \
            "running ONNX models needs onnx: pip install 'slabscope[onnx]'"
    from slabscope.planner import PlanError

    try:
        check_executable(graph)
    except PlanError as exc:
        return str(exc)
    return None
