"""Checking a slab run against a reference run in which every buffer has its own allocation."""

from __future__ import annotations

import time

import numpy as np

from slabscope import planner
from slabscope.planner import Graph, Plan

from .binding import Staging, bind
from .execute_order import execute_order
from .program import BUILTIN
from .report import Clobbered, ModelCheck, RunVerification

# Relative tolerance by element size of floating dtypes: the same kernels on differently aligned
# data (or another backend's kernels) may round differently; 8-bit floats keep 3 mantissa bits.
_FLOAT_TOLERANCE = {1: 0.125, 2: 1e-2}
_DEFAULT_FLOAT_TOLERANCE = 1e-4
_HALF_WIDTH = ("float16", "bfloat16", "complex32")


def tolerance_for(dtype) -> float:
    """Relative tolerance for comparing results of dtype `dtype` (a NumPy dtype or a dtype
    name such as "bfloat16"): integers and booleans compare exactly."""
    name = str(dtype)
    if name == "bool" or name.startswith(("int", "uint")):
        return 0.0
    if name.startswith("float8"):
        return _FLOAT_TOLERANCE[1]
    if name in _HALF_WIDTH:
        return _FLOAT_TOLERANCE[2]
    return _FLOAT_TOLERANCE.get(np.dtype(name).itemsize, _DEFAULT_FLOAT_TOLERANCE)


def max_abs_diff(actual: np.ndarray, expected: np.ndarray) -> float:
    """The largest absolute difference; infinite where one side is NaN or infinite and the
    other is not the same value (NaN - x is NaN, which no comparison with a tolerance catches)."""
    if actual.size == 0:
        return 0.0
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(e)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    if not np.all(finite | same):
        return float("inf")
    with np.errstate(invalid="ignore"):  # inf - inf where both sides agree; masked out below
        return float(np.max(np.abs(np.where(finite, a - e, 0.0))))


def _limit(expected: np.ndarray, dtype=None) -> float:
    """The largest difference allowed against `expected`, whose dtype in the graph is `dtype`
    (default: its own; bfloat16 is staged as float32 but keeps bfloat16's tolerance)."""
    values = expected.astype(np.float64) if expected.dtype.kind in "biu" else expected
    finite = values[np.isfinite(values)]  # an infinite scale would excuse any difference
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return tolerance_for(expected.dtype if dtype is None else dtype) * (1.0 + scale)


def compare_outputs(produced: dict, expected: dict, dtypes: dict
                    ) -> tuple[float, list[str], tuple[tuple[str, float], ...]]:
    """(largest difference, names beyond their limit, (dtype, tolerance) of the dtypes seen)
    of `produced` against `expected` host arrays, by name; `dtypes` gives each one's dtype."""
    worst, differing, seen = 0.0, [], {}
    for name, want in expected.items():
        dtype = dtypes.get(name) or str(want.dtype)
        seen.setdefault(dtype, tolerance_for(dtype))
        have = produced[name]
        if have.shape != want.shape:
            worst = float("inf")
            differing.append(name)
            continue
        diff = output_diff(have, want)
        worst = max(worst, diff)
        if diff > _limit(want, dtype):
            differing.append(name)
    return worst, differing, tuple(sorted(seen.items()))


def model_check(reference: str, produced: dict, expected: dict, dtypes: dict,
                started: float) -> ModelCheck:
    """A `ModelCheck` of `produced` against `expected` (outputs by name), timed from `started`."""
    worst, differing, tolerances = compare_outputs(produced, expected, dtypes)
    return ModelCheck(reference, not differing, worst, tolerances, tuple(differing),
                      len(expected), time.perf_counter() - started)


def output_diff(produced: np.ndarray, expected: np.ndarray) -> float:
    """`max_abs_diff` of a read-back output, infinite when either side holds any NaN or
    infinity: such a result cannot be checked, even where the reference shows the same."""
    if not (np.all(np.isfinite(produced)) and np.all(np.isfinite(expected))):
        return float("inf")
    return max_abs_diff(produced, expected)


def reference_run(backend, graph: Graph, staging: Staging, cancel=None, program=BUILTIN):
    """Run `graph` with one allocation per buffer in its default order.

    Returns the read-back outputs and, per (node, input buffer), what that node read.
    """
    binding = bind(backend, graph, None)
    steps = program.build_steps(backend, graph, binding, execute_order(graph), staging)
    reads = {}
    for step in steps:
        if cancel is not None:
            cancel()
        for name in dict.fromkeys(step.node.inputs):
            reads[(step.node.name, name)] = backend.to_host(binding.views[name])
        step.launch()
    backend.synchronize()
    return {n: a.copy() for n, a in staging.outputs.items()}, reads


def verify_run(backend, graph: Graph, plan: Plan | None, binding, steps, staging: Staging,
               cancel=None, program=BUILTIN, model: ModelCheck | None = None) -> RunVerification:
    """Compare the slab run's read-back outputs (already in `staging`) with a reference run.

    Then run `steps` once more, checking every input against what the reference read there and
    restoring it when it differs, so the buffers named clobbered are the ones the plan let
    another buffer overwrite, not their downstream consequences. `model` (the check against
    the model's own reference, made before) joins the verdict.
    """
    started = time.perf_counter()
    produced = {n: a.copy() for n, a in staging.outputs.items()}
    expected, reads = reference_run(backend, graph, staging.fresh_outputs(), cancel, program)
    dtypes = {b.name: b.dtype for b in graph.buffers}
    worst, differing, tolerances = compare_outputs(produced, expected, dtypes)
    limit = max((_limit(want, dtypes.get(name)) for name, want in expected.items()),
                default=0.0)
    clobbered = []
    for step in steps:
        if cancel is not None:
            cancel()
        for name in dict.fromkeys(step.node.inputs):
            want = reads[(step.node.name, name)]
            have = backend.to_host(binding.views[name])
            diff = max_abs_diff(have, want)
            if diff > _limit(want, dtypes.get(name)):
                clobbered.append(Clobbered(name, step.node.name, diff))
                backend.upload(binding.views[name], want)
        step.launch()
    backend.synchronize()
    unsafe = ()
    if plan is not None and plan.conflict_model != "dag":
        unsafe = planner.verify(graph, plan, conflicts=planner.DagConflicts(graph)).clobbered
    return RunVerification(
        ok=not differing and not clobbered and (model is None or model.ok),
        max_abs_diff=worst, tolerance=limit, differing=tuple(differing),
        clobbered=tuple(clobbered), unsafe_pairs=tuple(unsafe),
        seconds=time.perf_counter() - started + (model.seconds if model else 0.0),
        tolerances=tolerances, model=model)
