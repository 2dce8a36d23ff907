"""Run a graph under a plan, in one slab, and measure every phase (docs/semantics.md §6).

graph_compile (load, validate, closure), search (planning), prepare (backend, staging, slab,
views, clocks, warm-up) and execute (N repeats) are timed one by one; the wall clock runs from
the first to the last, so the report can show that the phases account for it. Verification,
the memory pass and graph replay come after the wall clock stops and carry their own times.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

from slabscope import planner
from slabscope.planner import Graph, Plan, PlanError
from slabscope.planner.conflicts.in_place import InPlace, in_place

from .backend_choice import select_backend
from .backends import SlabAllocationError, memory_pool_bytes
from .binding import bind, bind_in_place
from .execute_order import execute_order
from .program import Program, program_for
from .replay import measure_replay
from .report import PHASES, KernelTime, PhaseTime, Replay, RunReport
from .verification import verify_run

LAYOUTS = ("slab", "per-buffer")


class RunCancelled(Exception):
    """The caller asked the run to stop; nothing is reported."""


def _compile(source, order_names, conflicts: str, model, include_weights: bool | None
             ) -> tuple[Graph, tuple[int, ...], Program]:
    """(graph, launch order, program): the graph read and checked, its model loaded."""
    if isinstance(source, (str, Path)):
        program = program_for(source, model, bool(include_weights))
        # a model's program read the file already (an ONNX model's unknown dimensions as a run
        # measured them); a copy, as the program is kept for the next run
        read = getattr(program, "graph", None)
        graph = replace(read) if read is not None else \
            planner.load(source, include_weights=bool(include_weights))
    else:
        graph = replace(source)
        if include_weights is None:
            include_weights = any(b.kind == "weight" for b in graph.buffers)
        program = program_for(source, model, bool(include_weights))
    # The closure (or intervals) the planner needs; replace() dropped any cached copy.
    planner.conflict_model(graph, conflicts).prepare()
    program.check(graph)
    return graph, execute_order(graph, order_names), program


def _execute(backend, steps, clock, repeats: int, samples: list[list[float]], check) -> list[float]:
    """`repeats` executes under the allocation guard, appending each kernel's seconds to its list
    in `samples`; the wall seconds of each execute (launch to synchronised). `check(fraction
    done)` runs before each (it may raise `RunCancelled`)."""
    walls = []
    with backend.no_allocations():
        for r in range(repeats):
            check(r / repeats)
            started = time.perf_counter()
            for i, step in enumerate(steps):
                clock.start(i)
                step.launch()
                clock.stop(i)
            backend.synchronize()
            walls.append(time.perf_counter() - started)
            for i, seconds in enumerate(clock.seconds()):
                samples[i].append(seconds)
    return walls


def _warm_up(backend, steps) -> None:
    """One execute that touches the memory, compiles kernels and creates library handles (a
    node that cannot run is a `PlanError` naming it and its op); where the backend can refuse
    allocations, a second one under that guard names any node that allocates outside the slab
    before the timed executes do."""
    for step in steps:
        try:
            step.launch()
        except (PlanError, RunCancelled):
            raise
        except Exception as exc:  # the framework's own error, whatever its type
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise PlanError(f"node {step.node.name!r} ({step.node.op}) cannot run: "
                            f"{type(exc).__name__}: {first}") from None
    backend.synchronize()
    if not backend.refuses_allocations:
        return
    with backend.no_allocations():
        for step in steps:
            try:
                step.launch()
            except SlabAllocationError as exc:
                raise PlanError(f"node {step.node.name!r} ({step.node.op}): {exc}") from None
    backend.synchronize()


def _bind(backend, graph: Graph, shared: InPlace | None, plan: Plan | None):
    """`graph`'s views under `plan`, through the in-place rewrite `shared` where there is one."""
    return bind(backend, graph, plan) if shared is None else \
        bind_in_place(backend, graph, shared, plan)


def _layouts(program):
    """The program's own reading of which nodes are pointwise and which arguments are laid out
    as their output (a .pt2's), else None: the graph's attributes decide."""
    arguments = getattr(program, "in_place_arguments", None)
    return arguments() if arguments is not None else None


def _peak_used(backend, graph, shared, plan, order, program) -> int:
    """The host high-water mark of a separate prepare and one execute, under tracemalloc (which
    would distort the timed phases if it watched them)."""
    tracemalloc.start()
    try:
        staging = program.stage(graph)
        binding = _bind(backend, graph, shared, plan)
        for step in program.build_steps(backend, graph, binding, order, staging):
            step.launch()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run(source, *, backend: str = "auto", repeats: int = 10, algorithm: str = "first-fit",
        conflicts: str = "dag", request_order=None, capacity: int | None = None,
        execute_order_names=None, plan: Plan | None = None, layout: str = "slab",
        verify: bool = True, measure_memory: bool = True, replay: bool = True,
        progress=None, cancelled=None, model=None,
        include_weights: bool | None = None, inplace: bool = False) -> RunReport:
    """Execute `source` (a graph file path or a `Graph`) and report what every phase took.

    A `.pt2` or `.onnx` source (or a `Graph` read from the file `model`) runs with its own
    framework, one node at a time over views of the slab, and is also checked against the
    model's own reference; `include_weights` says whether the weights are in the slab (default:
    for a file, no; for a `Graph`, whether it has weight buffers, as the importers make them
    only then).

    The plan comes from `planner.plan(graph, algorithm, request_order, capacity, conflicts)` unless
    `plan` is given (then search only checks it against the graph). `layout="per-buffer"` gives
    every buffer its own allocation instead of the slab (the baseline). `execute_order_names`
    runs the nodes in another legal order. `inplace` plans the graph as the opt-in in-place rule
    rewrites it (`planner.conflicts.in_place`; a `plan` must then place the rewrite) and runs
    each merged output in its host's bytes. `progress(fraction, text)` is called between steps;
    `cancelled()` returning true stops the run with `RunCancelled`. Bad input is a `PlanError`.
    """
    if repeats < 1:
        raise PlanError(f"repeats must be at least 1, got {repeats}")
    if layout not in LAYOUTS:
        raise PlanError(f"unknown layout {layout!r}; choose from {', '.join(LAYOUTS)}")

    def check(fraction: float | None = None, text: str = ""):
        if cancelled is not None and cancelled():
            raise RunCancelled("run cancelled")
        if progress is not None and fraction is not None:
            progress(fraction, text)

    seconds: dict[str, float] = {}
    detail: dict[str, str] = {}
    check(0.0, "graph_compile")
    wall_started = time.perf_counter()

    started = time.perf_counter()
    graph, order, program = _compile(source, execute_order_names,
                                     plan.conflict_model if plan is not None else conflicts,
                                     model, include_weights)
    shared = in_place(graph, _layouts(program)) if inplace else None
    planned = shared.graph if shared is not None else graph  # the graph the plan places
    if shared is not None:  # the rewrite's edges keep every reader before the overwrite
        order = execute_order(planned, execute_order_names)
    seconds["graph_compile"] = time.perf_counter() - started
    detail["graph_compile"] = (f"{len(graph.nodes)} nodes, {len(graph.buffers)} buffers; "
                               f"{program.kind}")
    check(0.1, "search")

    started = time.perf_counter()
    if layout == "per-buffer":
        plan, detail["search"] = None, "none: every buffer gets its own allocation"
    elif plan is None:
        plan = planner.plan(planned, algorithm=algorithm, order=request_order, capacity=capacity,
                            conflicts=conflicts)
        detail["search"] = f"{plan.algorithm}, {plan.conflict_model} conflicts"
    else:
        missing = [b.name for b in planned.buffers if b.name not in plan.by_name]
        if missing:
            raise PlanError(f"the supplied plan does not place {', '.join(missing)}")
        detail["search"] = f"plan supplied ({plan.algorithm}, {plan.conflict_model} conflicts)"
    seconds["search"] = time.perf_counter() - started
    check(0.2, "prepare")

    started = time.perf_counter()
    device = select_backend(backend, program.backends, program.kind)
    staging = program.stage(graph)
    binding = _bind(device, graph, shared, plan)
    steps = program.build_steps(device, graph, binding, order, staging)
    if shared is not None:
        detail["search"] += f", in place: {len(shared.merged)} outputs over a dying argument"
    clock = device.clock(len(steps))
    _warm_up(device, steps)
    seconds["prepare"] = time.perf_counter() - started
    detail["prepare"] = (f"{binding.layout}: {binding.allocated_bytes:,} bytes in "
                         f"{len(binding.allocations)} allocation(s), {len(steps)} kernels bound, "
                         f"warm-up")
    check(0.3, "execute")

    started = time.perf_counter()
    samples: list[list[float]] = [[] for _ in steps]
    walls = _execute(device, steps, clock, repeats, samples,
                     lambda done: check(0.3 + 0.5 * done, "execute"))
    seconds["execute"] = time.perf_counter() - started
    detail["execute"] = f"{repeats} x {len(steps)} kernels, timed by {device.clock_name}"
    wall = time.perf_counter() - wall_started
    check(0.8, "verify")

    peak = device.peak()
    kernels = tuple(_kernel_time(step, times, peak) for step, times in zip(steps, samples))
    allocated = binding.allocated_bytes
    peak_used = memory_pool_bytes(device)
    verification = None
    if verify:
        # while the slab still holds this run's outputs, before the checked pass reruns it
        reference = program.reference(device, graph, binding, staging)
        verification = verify_run(device, graph, plan, binding, steps, staging, cancel=check,
                                  program=program, model=reference, planned=planned)
    check(0.9, "replay")
    replayed = measure_replay(device, steps, repeats) if replay else \
        Replay(False, "not measured (replay switched off)")
    if measure_memory and device.name == "numpy":
        del binding, steps, staging  # the memory pass must not see this run's arrays
        peak_used = _peak_used(device, graph, shared, plan, order, program)
    check(1.0, "done")

    total = sum(seconds.values())
    return RunReport(
        graph=graph.name, backend=device.name, device=device.device,
        backend_note=device.fallback_reason, layout=layout,
        conflicts=plan.conflict_model if plan else "-", algorithm=plan.algorithm if plan else "-",
        execute_order=tuple(graph.nodes[i].name for i in order), repeats=repeats,
        phases=tuple(PhaseTime(n, seconds[n], seconds[n] / total if total else 0.0, detail[n])
                     for n in PHASES),
        wall_seconds=wall, kernels=kernels, kernel_clock=device.clock_name,
        peak_flops=peak.flops, peak_bytes_per_s=peak.bytes_per_s,
        peak_precision=peak.precision, peak_source=peak.source,
        slab_bytes=plan.slab_bytes if plan else 0,
        no_reuse_bytes=plan.no_reuse_bytes if plan else sum(planned.reserved),
        allocated_bytes=allocated, peak_used_bytes=peak_used,
        peak_used_source=device.memory_note(), verification=verification, replay=replayed,
        execute_samples=tuple(walls), program=program.kind)


def _kernel_time(step, samples: list[float], peak) -> KernelTime:
    """One step's mean time over its `samples` (seconds per execute) and achieved rates, with
    shares of the peak where it is known."""
    mean = sum(samples) / len(samples)
    rate = step.flops / mean if mean > 0 else 0.0
    traffic = step.bytes / mean if mean > 0 else 0.0
    return KernelTime(
        step.node.name, step.node.op, mean, step.flops, step.bytes, rate, traffic,
        rate / peak.flops if peak.flops and step.flops else None,
        traffic / peak.bytes_per_s if peak.bytes_per_s else None, tuple(samples))
