"""PyTorch memory snapshots: what the caching allocator reserved against a static plan, and how
fast and lean big snapshots load.

Run: .venv/bin/python bench/snapshots.py [--budget S] [--synthetic EVENTS [--no-plan]] [FILE ...]

Table 1, for each snapshot (default: every .pickle in ../shared/snapshots/): buffers, events,
the allocator's peak reserved bytes, its peak live bytes (the serial lower bound), the static
plan `search` finds within --budget seconds (default 10), the plan's gap over the bound, its
time (after a warm-up that compiles the search's kernels), and what the plan saves against the
allocator's reservation.

With --synthetic EVENTS, a synthetic snapshot of that many events (a training-like workload with
segments made and released, every frame a distinct long C++ name, like real stacks) is written
to a temporary file and planned in table 1. Then, for each snapshot, a table loads it in fresh
processes: the stock unpickler (refusing classes, no limits: the baseline), the restricted
reader's opcode loop alone (the reader before its pre-scan), `read_snapshot` (pre-scan, then the
stock unpickler; as `planner.load_snapshot` does), the same with the whole file read into bytes
first, and `load_snapshot` into a graph; load time against the stock unpickler, and peak Python
memory (tracemalloc) against the file's size.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope import planner  # noqa: E402
from slabscope.planner.formats.torch_snapshot import load_snapshot  # noqa: E402

DEFAULT_SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"


def plan_row(path: Path, budget: float) -> dict:
    """The allocator's numbers and the static plan's for the snapshot at `path`."""
    began = time.perf_counter()
    graph = load_snapshot(path)
    loaded = time.perf_counter() - began
    trace = graph.allocator
    bound = planner.lower_bound(graph, "serial").bytes
    began = time.perf_counter()
    result = planner.plan(graph, algorithm="search", conflicts="serial", budget=budget)
    took = time.perf_counter() - began
    if not planner.verify(graph, result).ok:
        raise SystemExit(f"{path.name}: the search plan does not verify")
    return {"name": path.stem, "buffers": len(graph.buffers), "steps": len(graph.nodes),
            "load_s": loaded, "reserved": trace.peak_reserved_bytes,
            "live": trace.peak_allocated_bytes, "bound": bound, "plan": result.slab_bytes,
            "plan_s": took}


# Long enough for numba to compile every stage of the search on a cold cache (each stage's
# kernels compile on first use, over ten seconds each on 2 cores).
WARM_UP_BUDGET = 60.0


def warm_up(path: Path) -> None:
    """Plan `path` once, untimed, so that no snapshot's time includes compiling the search."""
    planner.plan(load_snapshot(path), algorithm="search", conflicts="serial",
                 budget=WARM_UP_BUDGET)


def print_plan_table(paths: list[Path], budget: float) -> None:
    if paths:
        warm_up(paths[0])
    header = ("snapshot", "buffers", "load", "reserved", "peak live = bound", "static plan",
              "gap", "search", "saving vs reserved")
    rows = []
    for path in paths:
        r = plan_row(path, budget)
        saving = r["reserved"] - r["plan"]
        rows.append((r["name"], f"{r['buffers']:,}", f"{r['load_s']:.2f} s", f"{r['reserved']:,}",
                     f"{r['live']:,}" + ("" if r["live"] == r["bound"] else f" (bound {r['bound']:,})"),
                     f"{r['plan']:,}", f"{r['plan'] / r['bound'] - 1:.3%}", f"{r['plan_s']:.1f} s",
                     f"{saving:,} ({saving / r['reserved']:.1%})"))
    print_table(header, rows)


def print_table(header, rows) -> None:
    widths = [max(len(str(row[c])) for row in [header, *rows]) for c in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(w) if c == 0 else str(cell).rjust(w)
                        for c, (cell, w) in enumerate(zip(row, widths))))


SEGMENT = 2 << 20  # the caching allocator's large-segment granularity


def synthetic_snapshot(events: int, seed: int = 0) -> dict:
    """A consistent snapshot of about `events` trace events on one device.

    Layers allocate activations that live until a matching backward step frees them, with
    short-lived temporaries in between; 200 weights were allocated before recording. Each block
    takes a cached segment that is large enough, or a new one (`segment_alloc`); now and then
    the cache is emptied (`segment_free` of every cached segment), as `empty_cache()` does.
    """
    rng = random.Random(seed)
    trace, live, stack = [], {}, []
    segments: dict[int, int] = {}  # address -> size, every segment reserved now
    cached: list[int] = []  # addresses of reserved segments holding no block
    next_address, time_us = 1 << 32, 0

    def frames(i: int) -> list:
        # Real stacks hold a few Python frames and dozens of long, templated C++ frames.
        cpp = [{"filename": "??", "line": 0,
                "name": f"at::native::kernel_{i}_{k}<" + "c10::ArrayRef<long>, " * 12 + ">"}
               for k in range(6)]
        return [{"filename": f"/src/model_{i % 50}.py", "line": i % 997, "name": "forward"},
                *cpp, {"filename": "/src/train.py", "line": 40, "name": "<module>"}]

    def event(action: str, addr: int, size: int, stack_frames=()) -> None:
        nonlocal time_us
        time_us += rng.randint(1, 20)
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0,
                      "time_us": time_us, "frames": list(stack_frames)})

    def segment_for(size: int, record: bool = True) -> int:
        nonlocal next_address
        for k, addr in enumerate(cached):
            if segments[addr] >= size:
                return cached.pop(k)
        addr, next_address = next_address, next_address + (1 << 32)
        segments[addr] = -(-size // SEGMENT) * SEGMENT
        if record:
            event("segment_alloc", addr, segments[addr])
        return addr

    def free(addr: int) -> None:
        size = live.pop(addr)
        event("free_requested", addr, size)
        event("free_completed", addr, size)
        cached.append(addr)

    for _ in range(200):
        size = 512 * rng.randint(1, 2048)
        live[segment_for(size, record=False)] = size
    i = 0
    while len(trace) < events:
        i += 1
        if stack and (rng.random() < 0.45 or len(stack) > 400):
            free(stack.pop())
        elif cached and rng.random() < 0.002:
            for addr in cached:
                event("segment_free", addr, segments.pop(addr))
            cached.clear()
        else:
            size = 512 * rng.randint(1, 8192)
            addr = segment_for(size)
            event("alloc", addr, size, frames(i))
            live[addr] = size
            if rng.random() < 0.5:  # a temporary freed at once
                free(addr)
            else:
                stack.append(addr)
    snapshot_segments = []
    for addr, total in segments.items():
        used = live.get(addr, 0)
        blocks = [{"address": addr, "size": used, "requested_size": used,
                   "state": "active_allocated", "frames": []}] if used else []
        if total > used:
            blocks.append({"address": addr + used, "size": total - used, "requested_size": 0,
                           "state": "inactive", "frames": []})
        snapshot_segments.append({"device": 0, "address": addr, "total_size": total,
                                  "stream": 0, "blocks": blocks})
    return {"segments": snapshot_segments, "device_traces": [trace], "allocator_settings": {},
            "external_annotations": []}


# Each loader runs in a fresh process, timed once untraced, then once under tracemalloc, whose
# peak counts every Python allocation: the file's bytes too, when a loader holds them. numba's
# start (LLVM, once per process, which planning pays anyway for its kernels) is done untimed
# first, and timed on its own as the "numba" loader.
LOADER = """
import io, pickle, sys, time, tracemalloc
from pathlib import Path
from slabscope import planner
import slabscope.planner.formats.torch_snapshot
from slabscope.planner.formats.safety import restricted_pickle
from slabscope.planner.formats.safety.pickle_prescan import proves_plain
from slabscope.planner.formats.safety.restricted_pickle import load_plain_data
from slabscope.planner.support.gc_pause import paused_collection

def streamed(path):
    return planner.formats.torch_snapshot.read_snapshot(path)

def graph(path):
    return planner.formats.torch_snapshot.load_snapshot(path)

def naive(path):
    data = Path(path).read_bytes()
    with paused_collection():  # as read_snapshot does: every loader here pauses the collector
        return load_plain_data(io.BytesIO(data), len(data))

def loop(path):  # the reader's opcode loop alone: the reader before the pre-scan
    with open(path, "rb") as handle, paused_collection():
        return restricted_pickle._Reader(handle, Path(path).stat().st_size).run()

class ClassRefusing(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"{module}.{name}")

def stock(path):  # the stock C unpickler, refusing classes but with no limits: the baseline
    with open(path, "rb") as handle, paused_collection():
        return ClassRefusing(handle).load()

def numba(path):
    return proves_plain(b"N.", 10)

load = globals()[sys.argv[2]]
if sys.argv[2] != "numba":
    proves_plain(b"N.", 10)
if sys.argv[3] == "memory":
    tracemalloc.start()
    load(sys.argv[1])
    print(tracemalloc.get_traced_memory()[1])
else:
    began = time.perf_counter()
    load(sys.argv[1])
    print(time.perf_counter() - began)
"""


def measure(loader: str, path: Path, what: str) -> float:
    """Seconds, or peak traced bytes, of `loader` ("streamed", "naive", "graph") on `path`."""
    out = subprocess.run([sys.executable, "-c", LOADER, str(path), loader, what],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    return float(out.stdout)


def write_synthetic(events: int) -> Path:
    """A synthetic snapshot of about `events` events in a new temporary folder (the caller
    removes both)."""
    began = time.perf_counter()
    data = synthetic_snapshot(events)
    path = Path(tempfile.mkdtemp()) / f"synthetic_{events}.pickle"
    with path.open("wb") as handle:
        pickle.dump(data, handle, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"synthetic snapshot: {len(data['device_traces'][0]):,} events, "
          f"{path.stat().st_size:,} bytes (written in {time.perf_counter() - began:.1f} s)")
    return path


LOADS = (("stock unpickler, classes refused, no limits (baseline)", "stock"),
         ("opcode loop alone (the reader before the pre-scan)", "loop"),
         ("read_snapshot: pre-scan, then the stock unpickler", "streamed"),
         ("the same, the file read into bytes first", "naive"),
         ("load_snapshot: read_snapshot, then the graph", "graph"))


def print_load_table(path: Path) -> None:
    size = path.stat().st_size
    print(f"{path.name}: {size:,} bytes; numba's start, once per process and not counted below: "
          f"{measure('numba', path, 'time'):.2f} s")
    rows, times = [], {}
    for label, loader in LOADS:
        times[loader] = seconds = measure(loader, path, "time")
        peak = int(measure(loader, path, "memory"))
        ratio = "" if loader == "stock" else f"{seconds / times['stock']:.2f}x"
        rows.append((label, f"{seconds * 1e3:,.0f} ms", ratio, f"{peak:,}", f"{peak / size:.2f}"))
    print_table(("load", "time", "vs stock", "peak Python memory", "peak / file size"), rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--synthetic", type=int, metavar="EVENTS",
                        help="also plan, and time loading, a synthetic snapshot of this many "
                             "events")
    parser.add_argument("--no-plan", action="store_true",
                        help="skip table 1 (only time the loads)")
    args = parser.parse_args(argv)
    paths = args.files or sorted(DEFAULT_SNAPSHOTS.glob("*.pickle"))
    synthetic = write_synthetic(args.synthetic) if args.synthetic else None
    try:
        if not args.no_plan:
            print_plan_table(paths + ([synthetic] if synthetic else []), args.budget)
        for path in paths + ([synthetic] if synthetic else []):
            print()
            print_load_table(path)
    finally:
        if synthetic:
            os.unlink(synthetic)
            os.rmdir(synthetic.parent)


if __name__ == "__main__":
    main()
