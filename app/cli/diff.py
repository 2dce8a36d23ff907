"""`slabscope diff A B`: what changed between two runs, at the live peak, in the slab and in the
reserved bytes, with the live peak's difference attributed to frames, modules, ops and kinds."""

from __future__ import annotations

import argparse
import json

from slabscope import planner
from slabscope.planner.analysis.diff import Diff, Row

from slabscope.app.cli.long_work import LongWork, add_timeout_option

# The grouping the text report names its largest changes by: the most specific one present.
REPORT_GROUPINGS = ("frame", "module", "op", "kind")
CHANGES_SHOWN = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope diff`."""
    parser.add_argument("a", metavar="A", help="the first run: any file slabscope opens (a "
                                               "snapshot .pickle, .pt2, .onnx, .json, .csv)")
    parser.add_argument("b", metavar="B", help="the second run, compared against A")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--conflicts", choices=list(planner.CONFLICT_MODELS),
                        help="conflict model of both slabs and lower bounds (default: each "
                             "file's own: serial for traces, snapshots and recorded training "
                             "steps, dag otherwise)")
    parser.add_argument("--include-weights", action="store_true",
                        help="ONNX and .pt2 only: keep initializers and constants in the slab")
    add_timeout_option(parser)


def run(args) -> int:
    """Load both files, compare them and print the report or JSON."""
    with LongWork(f"{args.a} and {args.b}", args.timeout) as work:
        a = planner.load(args.a, include_weights=args.include_weights, cancel=work.token)
        b = planner.load(args.b, include_weights=args.include_weights, cancel=work.token)
        work.token.report("comparing")
        result = planner.diff(a, b, args.conflicts, a_file=args.a, b_file=args.b,
                              cancel=work.token)
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_diff(result))
    return 0


def human(size: int) -> str:
    """Bytes in the largest binary unit that keeps them at least 1, one decimal."""
    magnitude = abs(size)
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if magnitude >= 1 << shift:
            return f"{size / (1 << shift):,.1f} {unit}"
    return f"{size:,} B"


def signed(size: int) -> str:
    """A difference in bytes with its sign: "+1.2 GiB", "-300.0 MiB", "+0 B"."""
    return ("+" if size >= 0 else "") + human(size)


def change(before: int, after: int) -> str:
    """`after - before` with its sign, and as a share of `before` when that is not zero."""
    if after == before:
        return f"the same ({human(after)})"
    share = f" ({(after - before) / before:+.0%})" if before else ""
    return f"{signed(after - before)}{share}"


def largest_changes(result: Diff) -> tuple[str | None, tuple[Row, ...]]:
    """The most specific grouping both sides carry, and all its rows that changed, largest first."""
    name = next((g for g in REPORT_GROUPINGS if g in result.attribution), None)
    rows = result.attribution.get(name, ()) if name else ()
    return name, tuple(r for r in rows if r.difference_bytes)


def format_diff(result: Diff) -> str:
    """The comparison as a few readable lines."""
    a, b = result.a, result.b
    lines = []
    for label, s in (("A", a), ("B", b)):
        source = "recorded" if s.reserved_recorded else "modelled"
        lines.append(f"{label}: {s.file}: live peak {human(s.peak.bytes)} at step {s.peak.step:,}; "
                     f"slab {human(s.slab_bytes)} ({s.conflicts} conflicts); "
                     f"lower bound {human(s.lower_bound_bytes)}; "
                     f"reserved {human(s.reserved_bytes)} ({source})")
    lines.append("")
    head = f"B needs {change(a.peak.bytes, b.peak.bytes)} at its live peak."
    name, rows = largest_changes(result)
    if rows:
        head += (f" The largest changes by {name}: "
                 + ", ".join(f"{r.key} {signed(r.difference_bytes)}" for r in rows[:CHANGES_SHOWN])
                 + (", …" if len(rows) > CHANGES_SHOWN else "."))
    lines.append(head)
    lines.append(f"B needs {change(a.slab_bytes, b.slab_bytes)} in its slab (first fit).")
    lines.append(f"B needs {change(a.reserved_bytes, b.reserved_bytes)} reserved by PyTorch's "
                 f"caching allocator.")
    return "\n".join(lines)
