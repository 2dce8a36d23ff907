"""Checking a slab run against a reference run in which every buffer has its own allocation."""

from __future__ import annotations

import time

from slabscope import planner
from slabscope.planner import Graph, Plan

from .binding import Staging, bind
from .comparison import compare_outputs, limit_for, max_abs_diff, output_diff
from .execute_order import execute_order
from .program import BUILTIN
from .report import Clobbered, ModelCheck, RunVerification

# max_abs_diff and output_diff are still imported from here
__all__ = ["max_abs_diff", "output_diff", "reference_run", "verify_run"]


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
               cancel=None, program=BUILTIN, model: ModelCheck | None = None,
               planned: Graph | None = None) -> RunVerification:
    """Compare the slab run's read-back outputs (already in `staging`) with a reference run.

    Then run `steps` once more, checking every input against what the reference read there and
    restoring it when it differs, so the buffers named clobbered are the ones the plan let
    another buffer overwrite, not their downstream consequences. `model` (the check against
    the model's own reference, made before) joins the verdict. `planned` is the graph `plan`
    places where it is not `graph` (an in-place rewrite).
    """
    started = time.perf_counter()
    produced = {n: a.copy() for n, a in staging.outputs.items()}
    expected, reads = reference_run(backend, graph, staging.fresh_outputs(), cancel, program)
    dtypes = {b.name: b.dtype for b in graph.buffers}
    worst, differing, tolerances = compare_outputs(produced, expected, dtypes)
    limit = max((limit_for(want, dtypes.get(name)) for name, want in expected.items()),
                default=0.0)
    clobbered = []
    for step in steps:
        if cancel is not None:
            cancel()
        for name in dict.fromkeys(step.node.inputs):
            want = reads[(step.node.name, name)]
            have = backend.to_host(binding.views[name])
            diff = max_abs_diff(have, want)
            if diff > limit_for(want, dtypes.get(name)):
                clobbered.append(Clobbered(name, step.node.name, diff))
                backend.upload(binding.views[name], want)
        step.launch()
    backend.synchronize()
    unsafe = ()
    if plan is not None and plan.conflict_model != "dag":
        placed = planned if planned is not None else graph
        unsafe = planner.verify(placed, plan, conflicts=planner.DagConflicts(placed)).clobbered
    return RunVerification(
        ok=not differing and not clobbered and (model is None or model.ok),
        max_abs_diff=worst, tolerance=limit, differing=tuple(differing),
        clobbered=tuple(clobbered), unsafe_pairs=tuple(unsafe),
        seconds=time.perf_counter() - started + (model.seconds if model else 0.0),
        tolerances=tolerances, model=model)
