"""The caching-allocator model on snapshots: how well it predicts recorded segments, and how fast
it replays a large trace.

Run: .venv/bin/python bench/allocator.py [--events N] [--no-synthetic] [FILE ...]

Table 1, for each snapshot (default: every .pickle in ../shared/snapshots/, then FILEs): steps
(alloc, free_completed and segment events), segments recorded (`segment_alloc`) and predicted,
how many match in order, the model's peak reserved against the recorded one, and the replay's
time beside `planner.load_snapshot`'s (the reader as at f5ea06f, unchanged here) on the file.

Table 2: a synthetic snapshot of about N events (default 1,600,000): a training-like workload
(layers' activations freed in reverse with their gradients, temporaries, batch sizes that vary,
weights from before recording) whose segment events come from running the model itself, so its
match is complete by construction; the table is about time. Frames are drawn from 64 shared
stacks, so the file stays under 100 MB.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope.planner.allocator.allocator_replay import replay_snapshot  # noqa: E402
from slabscope.planner.allocator.caching_allocator import CachingAllocator  # noqa: E402
from slabscope.planner.formats.torch_snapshot import load_snapshot  # noqa: E402

DEFAULT_SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"
MiB = 1 << 20


def print_table(header: tuple, rows: list[tuple]) -> None:
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(v).rjust(w) for v, w in zip(row, widths)))


def timed(function, *args, **kwargs):
    began = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - began


def snapshot_row(path: Path) -> tuple:
    """Table 1's row for the snapshot at `path`."""
    replay, replay_s = timed(replay_snapshot, path)
    graph, load_s = timed(load_snapshot, path)
    recorded = len(replay.recorded_segments)
    share = replay.matched_in_order / recorded if recorded else 1.0
    recorded_peak = replay.recorded_peak_reserved_bytes
    off = replay.peak_reserved_bytes / recorded_peak - 1 if recorded_peak else 0.0
    return (path.name[:44], f"{len(replay.step_reserved) - 1:,}", f"{recorded:,}",
            f"{len(replay.segments_created):,}", f"{replay.matched_in_order:,} ({share:.1%})",
            f"{replay.peak_reserved_bytes / MiB:,.1f}", f"{recorded_peak / MiB:,.1f}",
            f"{off:+.2%}", f"{replay_s:.2f}", f"{load_s:.2f}",
            f"{replay_s / load_s:.2f}" if load_s else "-")


def synthetic_snapshot(events: int, seed: int = 0) -> dict:
    """A snapshot of about `events` events whose allocations the model itself placed."""
    rng = random.Random(seed)
    model = CachingAllocator()
    stacks = [[{"filename": f"/src/model_{k}.py", "line": 10 + k, "name": "forward"},
               {"filename": "??", "line": 0, "name": f"at::native::kernel_{k}"}]
              for k in range(64)]
    trace: list[dict] = []
    live: dict[int, object] = {}
    time_us = 0
    seen_segments = 0

    def emit(action: str, addr: int, size: int) -> None:
        nonlocal time_us
        time_us += 3
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                      "time_us": time_us, "frames": stacks[len(trace) % 64]})

    def alloc(size: int) -> int:
        nonlocal seen_segments
        block = model.malloc(size)
        for creation in model.stats.creations[seen_segments:]:
            emit("segment_alloc", creation.addr, creation.size)
        seen_segments = len(model.stats.creations)
        emit("alloc", block.addr, size)
        live[block.addr] = block
        return block.addr

    def free(addr: int) -> None:
        block = live.pop(addr)
        emit("free_requested", addr, block.requested)
        emit("free_completed", addr, block.requested)
        model.free(block)

    weights = [model.malloc(rng.randint(1, 64) * MiB) for _ in range(100)]  # before recording
    seen_segments = len(model.stats.creations)
    hidden = [rng.choice([4, 8, 12, 16]) * MiB for _ in range(24)]
    while len(trace) < events:
        batch = rng.uniform(0.5, 1.5)  # batch sizes vary, as in inference serving
        saved = []
        for width in hidden:
            saved.append(alloc(int(width * batch) + rng.randint(0, 4096)))
            temp = alloc(rng.randint(256, 900_000))
            free(temp)
        for addr in reversed(saved):
            grad = alloc(live[addr].requested)
            free(addr)
            free(grad)
    segments = []
    for segment in model.segments.values():
        segments.append({
            "device": 0, "address": segment.addr, "total_size": segment.size, "stream": 0,
            "segment_type": "small" if segment.small else "large", "frames": [],
            "blocks": [{"address": b.addr, "size": b.size, "requested_size": b.requested,
                        "state": "active_allocated" if b.allocated else "inactive",
                        "frames": []} for b in segment.blocks()]})
    del weights
    return {"segments": segments, "device_traces": [trace], "allocator_settings": {},
            "external_annotations": []}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--events", type=int, default=1_600_000)
    parser.add_argument("--no-synthetic", action="store_true")
    args = parser.parse_args(argv)
    paths = sorted(DEFAULT_SNAPSHOTS.glob("*.pickle")) if DEFAULT_SNAPSHOTS.exists() else []
    paths += args.files
    header = ("snapshot", "steps", "recorded", "predicted", "matched in order",
              "peak reserved MiB", "recorded MiB", "off", "replay s", "load s", "replay/load")
    if paths:
        print("Table 1: recorded snapshots")
        print_table(header, [snapshot_row(p) for p in paths])
    if args.no_synthetic:
        return
    began = time.perf_counter()
    data = synthetic_snapshot(args.events)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "synthetic.pickle"
        with path.open("wb") as handle:
            pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
        count = len(data["device_traces"][0])
        del data
        print(f"\nTable 2: synthetic snapshot, {count:,} events, {path.stat().st_size:,} bytes "
              f"(made in {time.perf_counter() - began:.1f} s)")
        print_table(header, [snapshot_row(path)])


if __name__ == "__main__":
    main()
