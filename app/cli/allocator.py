"""`slabscope allocator FILE`: what PyTorch's caching allocator would reserve, beside the slab.

A PyTorch memory snapshot is replayed from the state that predates its recording and its
predicted segments are matched against the recorded ones; any other graph file (JSON, ONNX,
MiniMalloc CSV) is replayed as its schedule, each buffer allocated at its first use and freed
after its last. Either way the static plan's slab is printed beside it.
"""

from __future__ import annotations

import argparse
import json

from slabscope import planner
from slabscope.app.cli.long_work import LongWork, add_timeout_option
from slabscope.planner.allocator.allocator_replay import AllocatorReplay, replay_graph, replay_snapshot
from slabscope.planner.allocator.caching_allocator import AllocatorSettings
from slabscope.planner.formats.torch_snapshot import read_snapshot, snapshot_graph
from slabscope.planner.formats.safety.input_limits import INTEGER_DIGITS_LIMIT, quoted
from slabscope.planner.model.graph import SIZE_LIMIT

# Sizes of created segments printed in the text summary (JSON lists them all).
SIZES_SHOWN = 24


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope allocator`."""
    parser.add_argument("file", help="PyTorch memory snapshot (.pickle) or graph file (.json, "
                                     ".onnx, MiniMalloc .csv)")
    parser.add_argument("--expandable-segments", action="store_true",
                        help="what if expandable_segments:True were set")
    parser.add_argument("--max-split-size-mb", type=_megabytes, metavar="N",
                        help="what if max_split_size_mb:N were set (blocks of N MiB or more are "
                             "never split)")
    parser.add_argument("--device", type=int, metavar="N",
                        help="snapshots only: the device whose trace to replay (default: the "
                             "first with one)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_timeout_option(parser)


def _megabytes(text: str) -> int:
    # Compared as text first: int() of thousands of digits is slow and its error names a knob.
    digits = text.strip().lstrip("+")
    if len(digits) > INTEGER_DIGITS_LIMIT or not digits.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number of MiB up to "
                                         f"{SIZE_LIMIT >> 20:,}: {quoted(text, 30)}")
    value = int(digits)
    if value <= 0 or value << 20 > SIZE_LIMIT:
        raise argparse.ArgumentTypeError(f"must be a positive number of MiB up to "
                                         f"{SIZE_LIMIT >> 20:,} (sizes are 64-bit), got {value:,}")
    return value << 20


def run(args) -> int:
    """Replay the file through the allocator model, plan it, and print both."""
    expandable = True if args.expandable_segments else None
    is_snapshot = args.file.lower().endswith(".pickle")
    if args.device is not None and not is_snapshot:
        raise planner.PlanError("--device applies only to PyTorch memory snapshots (.pickle)")
    with LongWork(args.file, args.timeout) as work:
        if is_snapshot:
            # Read and pre-scanned once for both: the replay leaves the data as it is, and the
            # graph, made after it, uses it up.
            data = read_snapshot(args.file)
            replay = replay_snapshot(args.file, args.device, expandable_segments=expandable,
                                     max_split_size=args.max_split_size_mb, cancel=work.token,
                                     data=data)
            work.token.report("loading")
            graph = snapshot_graph(data, args.file, device=args.device)
        else:
            graph = planner.load(args.file, cancel=work.token)
            settings = AllocatorSettings().with_changes(expandable, args.max_split_size_mb)
            replay = replay_graph(graph, settings, work.token)
        work.token.report("planning")
        slab = planner.plan(graph, conflicts=planner.default_conflicts(graph),
                            cancel=work.token).slab_bytes
    if args.json:
        data = {"file": args.file, "kind": "snapshot" if is_snapshot else "graph",
                **replay.summary(), "slab_bytes": slab}
        print(json.dumps(data, indent=2))
    else:
        print(format_replay(args.file, replay, slab, is_snapshot))
    return 0


def mib(size: int) -> str:
    """Bytes in the largest binary unit that keeps them at least 1 (KiB, MiB, GiB), one decimal."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):,.1f} {unit}"
    return f"{size:,} B"


def format_replay(name: str, replay: AllocatorReplay, slab: int, is_snapshot: bool) -> str:
    """The replay as a few readable lines."""
    s = replay.settings
    split = "none" if s.max_split_size is None else mib(s.max_split_size)
    kind = "snapshot replay" if is_snapshot else "schedule replay"
    lines = [f"{name}: caching allocator model ({kind}; expandable_segments "
             f"{s.expandable_segments}, max_split_size {split})", ""]
    reserved = replay.peak_reserved_bytes
    lines.append(f"peak reserved        {reserved:>17,}  ({mib(reserved)})")
    if replay.recorded_peak_reserved_bytes is not None:
        recorded = replay.recorded_peak_reserved_bytes
        off = replay.peak_reserved_bytes / recorded - 1 if recorded else 0.0
        lines.append(f"  recorded           {recorded:>17,}  ({off:+.2%})")
    lines.append(f"peak live            {replay.peak_live_bytes:>17,}  (requested bytes; "
                 f"{replay.peak_allocated_bytes:,} in rounded blocks)")
    if replay.initial_reserved_bytes:
        lines.append(f"before recording     {replay.initial_reserved_bytes:>17,}  (segments that "
                     f"predate the trace)")
    sizes = replay.segments_created
    shown = ", ".join(mib(size) for size in sizes[:SIZES_SHOWN])
    more = f", ... ({len(sizes) - SIZES_SHOWN:,} more)" if len(sizes) > SIZES_SHOWN else ""
    lines.append(f"segments created     {len(sizes):>17,}  totalling {mib(sum(sizes))}"
                 + (f": {shown}{more}" if sizes else ""))
    if replay.recorded_segments is not None:
        recorded = len(replay.recorded_segments)
        share = replay.matched_in_order / recorded if recorded else 1.0
        lines.append(f"recorded segments    {recorded:>17,}  matched in order "
                     f"{replay.matched_in_order:,} ({share:.1%}); recorded segment frees "
                     f"{replay.recorded_segment_frees:,}; blocks at the recorded address "
                     f"{replay.placements_matched:,} of {replay.allocs:,}")
    frag = replay.fragmentation
    if frag is not None:
        idle = frag.reserved_bytes - frag.requested_bytes
        lines.append(f"at the peak          reserved - live {idle:,} "
                     f"({mib(idle)}); largest free block "
                     f"{mib(frag.largest_free_block)} of {frag.free_blocks:,} free blocks")
    share = abs(reserved - slab) / reserved if reserved else 0.0
    lines += ["", f"PyTorch would reserve {mib(reserved)}; the slab needs {mib(slab)} "
                  f"({share:.1%} {'less' if slab <= reserved else 'more'})."]
    return "\n".join(lines)
