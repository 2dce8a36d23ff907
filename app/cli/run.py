"""`slabscope run FILE`: execute a plan in one slab, print phases, kernels and verification."""

from __future__ import annotations

import argparse
import json
import sys

from slabscope import planner
from slabscope.planner.formats.safety.input_limits import one_line

from slabscope.app.cli.options import add_planning_options, conflicts_for, search_options
from slabscope.app.cli.plan import split_order
from slabscope.app.cli.schedule_option import add_schedule_option, apply_schedule, format_schedule

# Exit code when the run completes but its outputs differ from the per-buffer reference.
EXIT_MISMATCH = 1
EXIT_RUN_FAILED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope run`."""
    from slabscope.gpu import BACKEND_NAMES, LAYOUTS

    parser.add_argument("file", help="executable graph file (.json with ops and shapes), a "
                                     "torch.export archive (.pt2) or an ONNX model (.onnx)")
    parser.add_argument("--backend", choices=BACKEND_NAMES, default="auto",
                        help="cupy and torch-cuda need a CUDA device; auto picks the best one "
                             "the file can run on and says which")
    parser.add_argument("--include-weights", action="store_true",
                        help=".pt2 and .onnx: put the weights in the slab (uploaded) instead "
                             "of outside it")
    parser.add_argument("--repeats", type=int, default=10, help="timed executes (default 10)")
    add_planning_options(parser)
    add_schedule_option(parser)
    parser.add_argument("--order", help="request order: buffer names separated by commas")
    parser.add_argument("--execute-order", help="run the nodes in this legal order (names "
                                                "separated by commas; unlisted nodes fill in)")
    parser.add_argument("--layout", choices=LAYOUTS, default="slab",
                        help="per-buffer: every buffer its own allocation (the baseline)")
    parser.add_argument("--inplace", action="store_true",
                        help="opt-in: plan and run with the in-place rule (a pointwise op writes "
                             "its output over an argument that dies there; .pt2: never a view)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args) -> int:
    """Run the graph and print the report; 0 verified, 1 outputs differ, 2 cannot run."""
    from slabscope import gpu
    from slabscope.gpu.program import model_graph

    # as the run reads it: an ONNX model's unknown dimensions measured, not taken as 1
    graph = model_graph(args.file, include_weights=args.include_weights)
    if args.schedule == "best" and args.execute_order:
        raise planner.PlanError("--schedule best chooses the execution order; it cannot be "
                                "combined with --execute-order")
    # The chosen order becomes the graph's schedule: the plan and the launches both follow it.
    graph, conflicts, chosen = apply_schedule(args, graph, conflicts_for(args, graph))
    order = split_order(args.order)
    # The runner plans (and times) every placer itself but takes no budget, so a search is
    # planned here with the user's budget and handed in.
    plan = None
    if args.inplace and args.algorithm == "search":
        raise planner.PlanError("--inplace runs with the runner's own placers; plan a search with "
                                "slabscope plan --inplace")
    if args.algorithm == "search" and args.layout == "slab":
        plan = planner.plan(graph, algorithm="search", order=order, conflicts=conflicts,
                            **search_options(args, graph, conflicts))
    try:
        report = gpu.run(graph, backend=args.backend, repeats=args.repeats,
                         algorithm=args.algorithm, conflicts=conflicts, request_order=order,
                         execute_order_names=split_order(args.execute_order), layout=args.layout,
                         plan=plan, model=args.file, include_weights=args.include_weights,
                         inplace=args.inplace)
    except (gpu.SlabAllocationError, MemoryError, RuntimeError) as exc:
        # CuPy's driver and allocation failures arrive as RuntimeError / MemoryError subclasses;
        # a PlanError (bad input) goes on to the dispatcher
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"slabscope: run failed: {first_line}", file=sys.stderr)
        return EXIT_RUN_FAILED
    if args.json:
        data = report.to_dict()
        if chosen is not None:
            data.update(chosen.to_dict())
        print(json.dumps(data, indent=2))
    else:
        print(format_report(report))
        if chosen is not None:
            print("\n".join(format_schedule(chosen)))
    verified = report.verification is None or report.verification.ok
    return 0 if verified else EXIT_MISMATCH


def _table(rows, right: set[int]) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if c in right else cell.ljust(w)
                      for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def format_report(report) -> str:
    """The report as text: header, phase table, kernel table, memory, replay, verification."""
    from slabscope.gpu.report import rate_text, seconds_text

    lines = [f"{report.graph} on {report.backend} ({report.device}); nodes run by "
             f"{report.program}"]
    if report.backend_note:
        lines.append(f"  {report.backend_note}")
    lines.append(f"layout {report.layout}; plan {report.algorithm}, {report.conflicts} conflicts; "
                 f"slab {report.slab_bytes:,} bytes (without reuse {report.no_reuse_bytes:,})")
    lines.append("execute order: " + ", ".join(report.execute_order))
    lines.append("")
    rows = [("phase", "time", "share", "what")]
    for p in report.phases:
        rows.append((p.name, seconds_text(p.seconds), f"{p.share:.1%}", p.detail))
    rows.append(("phases", seconds_text(report.phases_seconds), "", ""))
    rows.append(("wall clock", seconds_text(report.wall_seconds),
                 f"{report.phases_seconds / report.wall_seconds:.1%}", "covered by the phases"))
    lines += _table(rows, {1, 2})
    lines.append(f"one execute {seconds_text(report.execute_seconds)}; one-time phases "
                 f"{seconds_text(report.one_time_seconds)} = "
                 f"{seconds_text(report.amortised_seconds)} per execute over {report.repeats}")
    lines.append("")
    rows = [("kernel", "op", "mean", "FLOP", "FLOP/s", "bytes/s", "of peak")]
    for k in report.kernels:
        shares = [f"{s:.1%} {what}" for s, what in ((k.flops_share_of_peak, "FLOP"),
                                                     (k.bytes_share_of_peak, "bw")) if s is not None]
        rows.append((k.node, k.op, seconds_text(k.seconds), f"{k.flops:,}",
                     rate_text(k.flops_per_s, "FLOP") if k.flops else "-",
                     rate_text(k.bytes_per_s, "B"), ", ".join(shares) or "-"))
    lines += _table(rows, {2, 3, 4, 5})
    if report.peak_flops or report.peak_bytes_per_s:
        peak = ", ".join(t for t in (
            report.peak_flops and rate_text(report.peak_flops, "FLOP"),
            report.peak_bytes_per_s and rate_text(report.peak_bytes_per_s, "B")) if t)
        lines.append(f"peak {peak} ({report.peak_precision}; {report.peak_source})")
    else:
        lines.append(f"peak unknown: {report.peak_source}")
    lines.append(f"kernel times: {report.kernel_clock}")
    lines.append("")
    used = f"{report.peak_used_bytes:,}" if report.peak_used_bytes is not None else "not measured"
    lines.append(f"memory: {report.allocated_bytes:,} bytes allocated for buffers; peak used "
                 f"{used} ({report.peak_used_source})")
    replay = report.replay
    if replay.available:
        lines.append(f"graph replay: {seconds_text(replay.replay_seconds)} per execute against "
                     f"{seconds_text(replay.eager_seconds)} eager; {replay.reason}")
    else:
        lines.append(f"graph replay: {replay.reason}")
    v = report.verification
    if v is not None:
        lines.append(("verified: " if v.ok else "NOT VERIFIED: ") + v.summary())
    return "\n".join(map(one_line, lines))  # a name with a newline must not break a row
