"""`slabscope explain FILE`: what is live at the live peak, and what would make it smaller.

Prints the live peak and where it is reached, the largest groups of buffers live there (by op,
kind, module or frame), the slab, lower bound and reserved figures, and the levers sorted by their
measured saving; `--json` prints every buffer live at the peak and every grouping. `--inplace`
explains the graph as the opt-in in-place rule rewrites it (`slabscope plan --inplace`).
"""

from __future__ import annotations

import argparse
import json

from slabscope import planner
from slabscope.planner.analysis.explain import DEFAULT_LEVER_BUDGET, Explanation
from slabscope.planner.analysis.peak import GROUPINGS, supported_groupings
from slabscope.planner.conflicts.in_place import in_place
from slabscope.planner.formats.safety.input_limits import one_line
from slabscope.planner.support.text import counted

from slabscope.app.cli.allocator import mib
from slabscope.app.cli.long_work import LongWork, add_timeout_option
from slabscope.app.cli.options import seconds
from slabscope.app.cli.plan import load_graph

DEFAULT_TOP = 10
# A row's name, group key or frame is shortened at its end past this many characters.
NAME_WIDTH = 48


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope explain`."""
    parser.add_argument("file", help="graph file (.json, .onnx, torch.export .pt2, MiniMalloc "
                                     ".csv or PyTorch memory snapshot .pickle)")
    parser.add_argument("--json", action="store_true",
                        help="print every buffer live at the peak, every grouping and the levers "
                             "as JSON")
    parser.add_argument("--by", choices=GROUPINGS,
                        help="group the buffers live at the peak by this (default: op for "
                             "programs, frame for snapshots)")
    parser.add_argument("--top", type=_count, default=DEFAULT_TOP, metavar="N",
                        help=f"rows of buffers and of groups in the report (default {DEFAULT_TOP}; "
                             f"--json lists them all)")
    parser.add_argument("--conflicts", choices=list(planner.CONFLICT_MODELS),
                        help="conflict model of the slab and the bound (default: the graph's own)")
    parser.add_argument("--budget", type=seconds, default=DEFAULT_LEVER_BUDGET,
                        help=f"seconds each searching lever (order, packing) may spend "
                             f"(default {DEFAULT_LEVER_BUDGET:g})")
    parser.add_argument("--seed", type=int, default=0, help="the levers' random seed (default 0)")
    parser.add_argument("--include-weights", action="store_true",
                        help="ONNX and .pt2 only: keep initializers and constants in the slab")
    parser.add_argument("--device", type=int, metavar="N",
                        help="PyTorch snapshots only: the device whose trace to explain")
    parser.add_argument("--inplace", action="store_true",
                        help="explain the graph as the opt-in in-place rule rewrites it (a "
                             "pointwise op writes its output over an argument that dies there)")
    add_timeout_option(parser)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run(args) -> int:
    """Explain the file and print the report or JSON."""
    with LongWork(args.file, args.timeout) as work:
        graph = load_graph(args, work.token)
        merged: dict[str, str] = {}
        if args.inplace:  # the rewrite is the rule: everything below explains the result
            shared = in_place(graph)
            graph, merged = shared.graph, shared.merged
        known = supported_groupings(graph)
        if args.by is not None and args.by not in known:
            raise planner.PlanError(f"{args.file} has no {args.by} for its buffers; it groups by "
                                    f"{', '.join(known)}")
        work.token.report("explaining the live peak")
        found = planner.explain(graph, conflicts=args.conflicts, budget=args.budget,
                                seed=args.seed, cancel=work.token)
    if args.json:
        data = {"file": args.file, **found.to_dict()}
        if args.inplace:
            data["in_place"] = merged
        print(json.dumps(data, indent=1))
    else:
        print(format_explanation(args.file, found, args.by or default_grouping(found), args.top))
        if args.inplace:
            print(f"\nin place: {len(merged):,} outputs written over an argument that dies there")
    return 0


def default_grouping(found: Explanation) -> str:
    """The grouping that says most about this input: op for programs, frame for snapshots,
    module where known, else kind."""
    return next(g for g in ("op", "frame", "module", "kind") if g in found.groups)


def shorten(text: str, width: int = NAME_WIDTH) -> str:
    """`text` on one line, cut at its end (never in the middle) to `width` characters."""
    text = one_line(text)
    return text if len(text) <= width else text[:width - 1] + "…"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def format_explanation(name: str, found: Explanation, grouping: str, top: int) -> str:
    """The report a person reads in ten seconds: the live peak and where, who is live there,
    the slab, bound and reserved figures, and the levers by saving."""
    peak = found.peak
    graph = found.graph
    at = f" ({shorten(peak.node)})" if peak.node else ""
    lines = [f"{one_line(name)}: live peak {mib(peak.bytes)} ({peak.bytes:,} B) at step "
             f"{peak.step:,}{at}, {counted(len(peak.buffers), 'buffer')} live "
             f"there", ""]
    lines.append(f"largest buffers live at the live peak (of {len(peak.buffers):,}):")
    for row in found.rows()[:top]:
        where = " · ".join(shorten(str(row[k]), 36) for k in ("op", "module", "frame")
                           if row.get(k))
        lines.append(f"  {mib(row['bytes']):>10}  {_share(row['bytes'], peak.bytes):>6}  "
                     f"{shorten(row['name'])}{f'  ({where})' if where else ''}  "
                     f"steps {row['first_step']:,}-{row['last_step']:,}")
    groups = found.groups[grouping]
    lines += ["", f"by {grouping} ({counted(len(groups), 'group')}):"]
    for g in groups[:top]:
        lines.append(f"  {mib(g.bytes):>10}  {_share(g.bytes, peak.bytes):>6}  "
                     f"{shorten(g.key)}  ({counted(g.count, 'buffer')})")
    if len(groups) > top:
        rest = groups[top:]
        lines.append(f"  {mib(sum(g.bytes for g in rest)):>10}  "
                     f"{_share(sum(g.bytes for g in rest), peak.bytes):>6}  "
                     f"{counted(len(rest), 'more group')}")
    lines += ["", f"{'slab':<14}{mib(found.slab_bytes):>10}  ({found.algorithm}, "
                  f"{found.conflicts} conflicts)",
              f"{'lower bound':<14}{mib(found.lower_bound_bytes):>10}  ({found.conflicts} "
              f"conflicts, gap {found.gap:.1%})",
              f"{'reserved':<14}{mib(found.reserved_bytes):>10}  (PyTorch caching allocator, "
              f"modelled on this order)"]
    if found.recorded_reserved_bytes is not None:
        recorded = found.recorded_reserved_bytes
        change = (found.slab_bytes - recorded) / recorded if recorded else 0.0
        lines.append(f"{'  recorded':<14}{mib(recorded):>10}  (PyTorch reserved when recorded; a "
                     f"static plan needs {mib(found.slab_bytes)}, "
                     f"{'−' if change < 0 else '+'}{abs(change):.1%})")
    lines.append(f"{'without reuse':<14}{mib(sum(graph.reserved)):>10}")
    if found.levers:
        lines += ["", "levers (each run, largest saving first):"]
        for lever in found.levers:
            lines.append(f"  {lever.lever:<10} saves {mib(max(lever.saving_bytes, 0)):>10} "
                         f"-> {mib(lever.bytes_after)}: {lever.how}"
                         if lever.saving_bytes >= 0 else
                         f"  {lever.lever:<10} costs {mib(-lever.saving_bytes):>10} "
                         f"-> {mib(lever.bytes_after)}: {lever.how}")
            if lever.change:
                lines.append(f"  {'':<10} change: {lever.change}")
    return "\n".join(lines)
