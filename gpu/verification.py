"""Checking a slab run against a reference run in which every buffer has its own allocation."""

from __future__ import annotations

import time

import numpy as np

from slabscope import planner
from slabscope.planner import Graph, Plan

from .binding import Staging, bind, build_steps
from .execute_order import execute_order
from .report import Clobbered, RunVerification


def tolerance_for(dtype) -> float:
    """Relative tolerance for comparing results of the same kernels on differently aligned data."""
    return 1e-2 if np.dtype(dtype).itemsize <= 2 else 1e-4


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


def _limit(expected: np.ndarray) -> float:
    finite = expected[np.isfinite(expected)]  # an infinite scale would excuse any difference
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return tolerance_for(expected.dtype) * (1.0 + scale)


def output_diff(produced: np.ndarray, expected: np.ndarray) -> float:
    """`max_abs_diff` of a read-back output, infinite when either side holds any NaN or
    infinity: such a result cannot be checked, even where the reference shows the same."""
    if not (np.all(np.isfinite(produced)) and np.all(np.isfinite(expected))):
        return float("inf")
    return max_abs_diff(produced, expected)


def reference_run(backend, graph: Graph, staging: Staging, cancel=None):
    """Run `graph` with one allocation per buffer in its default order.

    Returns the read-back outputs and, per (node, input buffer), what that node read.
    """
    binding = bind(backend, graph, None)
    steps = build_steps(backend, graph, binding, execute_order(graph), staging)
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
               cancel=None) -> RunVerification:
    """Compare the slab run's read-back outputs (already in `staging`) with a reference run.

    Then run `steps` once more, checking every input against what the reference read there and
    restoring it when it differs, so the buffers named clobbered are the ones the plan let
    another buffer overwrite, not their downstream consequences.
    """
    started = time.perf_counter()
    produced = {n: a.copy() for n, a in staging.outputs.items()}
    expected, reads = reference_run(backend, graph, staging.fresh_outputs(), cancel)
    worst, differing, limit = 0.0, [], 0.0
    for name, want in expected.items():
        diff = output_diff(produced[name], want)
        worst = max(worst, diff)
        limit = max(limit, _limit(want))
        if diff > _limit(want):
            differing.append(name)
    clobbered = []
    for step in steps:
        if cancel is not None:
            cancel()
        for name in dict.fromkeys(step.node.inputs):
            want = reads[(step.node.name, name)]
            have = backend.to_host(binding.views[name])
            diff = max_abs_diff(have, want)
            if diff > _limit(want):
                clobbered.append(Clobbered(name, step.node.name, diff))
                backend.upload(binding.views[name], want)
        step.launch()
    backend.synchronize()
    unsafe = ()
    if plan is not None and plan.conflict_model != "dag":
        unsafe = planner.verify(graph, plan, conflicts=planner.DagConflicts(graph)).clobbered
    return RunVerification(
        ok=not differing and not clobbered, max_abs_diff=worst, tolerance=limit,
        differing=tuple(differing), clobbered=tuple(clobbered), unsafe_pairs=tuple(unsafe),
        seconds=time.perf_counter() - started)
