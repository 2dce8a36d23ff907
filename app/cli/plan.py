"""`slabscope plan FILE`: a readable placement table and summary, or JSON."""

from __future__ import annotations

import argparse
import json

from slabscope import planner
from slabscope.planner.conflicts.in_place import in_place
from slabscope.planner.formats.minimalloc_csv import write_minimalloc_csv
from slabscope.planner.formats.safety.input_limits import one_line
from slabscope.planner.formats.torch_snapshot import load_snapshot
from slabscope.planner.placement.lazy_trace import reuses_by_name
from slabscope.planner.support.atomic_write import check_outputs
from slabscope.planner.support.cancel import NEVER, CancelToken
from slabscope.planner.support.text import counted

from slabscope.app.cli.long_work import LongWork, add_timeout_option
from slabscope.app.cli.options import add_planning_options, conflicts_for, search_options
from slabscope.app.cli.schedule_option import add_schedule_option, apply_schedule, format_schedule

# Past this many placements, `--json` prints without indentation.
JSON_INDENT_LIMIT = 10_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope plan`."""
    parser.add_argument("file", help="graph file (.json, .onnx, torch.export .pt2, MiniMalloc "
                                     ".csv or PyTorch memory snapshot .pickle)")
    parser.add_argument("--order", help="request order: buffer names separated by commas, "
                                        "placed first; the rest follow in the file's order")
    parser.add_argument("--capacity", type=int, help="slab capacity in bytes (a hard limit)")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_planning_options(parser)
    add_schedule_option(parser)
    parser.add_argument("--include-weights", action="store_true",
                        help="ONNX and .pt2 only: keep initializers and constants "
                             "(parameters, buffers, constants) in the slab")
    parser.add_argument("--device", type=int, metavar="N",
                        help="PyTorch snapshots only: the device whose trace to plan "
                             "(default: the first with one)")
    parser.add_argument("--csv", metavar="OUT",
                        help="also write the plan as a MiniMalloc CSV with an offset column")
    parser.add_argument("--inplace", action="store_true",
                        help="opt-in: a pointwise op writes its output over its first "
                             "intermediate argument when that argument dies there and has the "
                             "same size and layout (recorded training steps)")
    add_timeout_option(parser)


def split_order(text: str | None) -> list[str] | None:
    """`a,b,c` as a list of names (None stays None)."""
    return None if text is None else [n.strip() for n in text.split(",") if n.strip()]


def run(args) -> int:
    """Plan the file and print it; errors propagate as PlanError for the dispatcher."""
    check_outputs([args.file], [("CSV", args.csv)])  # before any work: never over the input
    with LongWork(args.file, args.timeout) as work:
        graph = load_graph(args, work.token)
        merged: dict[str, str] = {}
        if args.inplace:  # the rewrite is the rule: everything below plans the result as it is
            shared = in_place(graph)
            graph, merged = shared.graph, shared.merged
        work.token.report("choosing the schedule")
        graph, conflicts, chosen = apply_schedule(args, graph, conflicts_for(args, graph),
                                                  work.token)
        work.token.report("planning")
        result = planner.plan(graph, algorithm=args.algorithm, order=split_order(args.order),
                              capacity=args.capacity, conflicts=conflicts,
                              cancel=work.token, **search_options(args, graph, conflicts))
        work.token.report("lower bound")
        bound = planner.lower_bound(graph, conflicts, cancel=work.token)
    if args.json:
        compact = len(result.placements) > JSON_INDENT_LIMIT
        data = result.to_dict(placements=not compact)
        data["lower_bound_bytes"] = bound.bytes
        data["gap"] = gap(result, bound)
        if args.inplace:
            data["in_place"] = merged
        if chosen is not None:
            data.update(chosen.to_dict())
        if graph.allocator is not None:
            data["allocator"] = {"peak_reserved_bytes": graph.allocator.peak_reserved_bytes,
                                 "peak_allocated_bytes": graph.allocator.peak_allocated_bytes,
                                 "device": graph.allocator.device}
        # Indenting a million placements costs seconds and a gigabyte; large plans print compact.
        print(compact_json(data, result.placements_json()) if compact
              else json.dumps(data, indent=2))
    else:
        print(format_plan(graph, result, bound))
        if args.inplace:
            print(f"in place: {len(merged)} outputs written over an argument that dies there")
        if chosen is not None:
            print("\n".join(format_schedule(chosen)))
        if graph.allocator is not None:
            print(format_allocator(graph.allocator, result))
    if args.csv:
        write_minimalloc_csv(graph, result, args.csv)
    return 0


def compact_json(data: dict, placements: str) -> str:
    """`json.dumps(data)`, with the JSON text `placements` as the value of its "placements"."""
    return "{" + ", ".join(f"{json.dumps(key)}: "
                           f"{placements if key == 'placements' else json.dumps(value)}"
                           for key, value in data.items()) + "}"


def load_graph(args, cancel: CancelToken = NEVER) -> planner.Graph:
    """The file named on the command line; `--device` picks a snapshot's device."""
    if args.device is None:
        return planner.load(args.file, include_weights=args.include_weights, cancel=cancel)
    if not args.file.lower().endswith(".pickle"):
        raise planner.PlanError("--device applies only to PyTorch memory snapshots (.pickle)")
    return load_snapshot(args.file, device=args.device)


def format_allocator(trace, result) -> str:
    """What PyTorch's caching allocator reserved and held live, against the static plan."""
    saved = trace.peak_reserved_bytes - result.slab_bytes
    share = saved / trace.peak_reserved_bytes if trace.peak_reserved_bytes else 0.0
    return "\n".join([
        "", f"PyTorch caching allocator, device {trace.device}",
        f"reserved peak  {trace.peak_reserved_bytes:>15,}  (largest total of segments)",
        f"peak live      {trace.peak_allocated_bytes:>15,}  (the serial lower bound)",
        f"static plan    {result.slab_bytes:>15,}  (the slab above)",
        f"plan saves     {saved:>15,}  ({share:.1%} of reserved)"])


def gap(result, bound) -> float:
    """How far the slab lies above the lower bound: slab / bound - 1 (0 when both are empty)."""
    return result.slab_bytes / bound.bytes - 1 if bound.bytes else 0.0


def format_plan(graph, result, bound=None) -> str:
    """The plan as a table (request, bytes, offset, reuses) and a summary; names that do not
    print (a newline in them) appear escaped, so every row stays one line.

    Plans without a trace (very large graphs) show "?" for reuses.
    """
    rows = [("#", "request", "bytes", "offset", "reuses")]
    reuses_of = reuses_by_name(result) if result.steps else {}
    for request, placement in enumerate(result.placements):
        reuses = reuses_of.get(placement.name)
        reuses = "?" if reuses is None else ", ".join(map(one_line, reuses)) or "-"
        rows.append((str(request), one_line(placement.name), f"{placement.bytes:,}",
                     f"{placement.offset:,}", reuses))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    lines = [f"{one_line(graph.name)}: {counted(len(graph.buffers), 'buffer')}, "
             f"{counted(len(graph.nodes), 'node')}, "
             f"alignment {graph.alignment}, conflicts {result.conflict_model}, "
             f"algorithm {result.algorithm}", ""]
    for r in rows:
        lines.append(f"{r[0]:>{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  "
                     f"{r[3]:>{widths[3]}}  {r[4]}")
    saved = result.saved_bytes
    share = saved / result.no_reuse_bytes if result.no_reuse_bytes else 0.0
    lines += ["", f"slab bytes     {result.slab_bytes:>15,}",
              f"without reuse  {result.no_reuse_bytes:>15,}",
              f"saved          {saved:>15,}  ({share:.1%})"]
    if bound is not None:
        lines += [f"lower bound    {bound.bytes:>15,}  ({bound.conflicts} model)",
                  f"gap            {gap(result, bound):>15.2%}  (slab / lower bound - 1)"]
    if result.seed is not None:
        lines += [f"search         seed {result.seed}, {result.iterations:,} steps; {result.proof}"]
    return "\n".join(lines)
