"""How fast `slabscope diff` compares two large PyTorch memory snapshots (the aim: two 50 MB
snapshots in at most 10 s).

Run: .venv/bin/python bench/diff_speed.py [--events N] [A B]

Without files, two synthetic snapshots of about N events each (default 72,000: about 50 MB each,
training-like, every frame a long C++ name as in real stacks; bench/snapshots.py describes them)
are written with different seeds to a temporary folder. The table gives each phase in one
process (numba's start and kernel compiles done first, untimed), then the whole command in a
fresh process, as a user runs it.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.snapshots import print_table, synthetic_snapshot  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.planner.analysis.diff import compare, side  # noqa: E402

DEFAULT_EVENTS = 72_000
TARGET_S = 10.0


def write(folder: Path, events: int, seed: int) -> Path:
    """A synthetic snapshot of about `events` events under `folder`."""
    path = folder / f"synthetic_{events}_{seed}.pickle"
    with path.open("wb") as handle:
        pickle.dump(synthetic_snapshot(events, seed), handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def phases(a: Path, b: Path) -> list[tuple[str, float]]:
    """Seconds of each phase of the comparison, in this process."""
    times = []

    def timed(label, work):
        began = time.perf_counter()
        value = work()
        times.append((label, time.perf_counter() - began))
        return value

    graph_a = timed("load A", lambda: planner.load(a))
    graph_b = timed("load B", lambda: planner.load(b))
    side_a = timed("A: live peak, first-fit slab, lower bound", lambda: side(graph_a, str(a)))
    side_b = timed("B: live peak, first-fit slab, lower bound", lambda: side(graph_b, str(b)))
    timed("attribution (every grouping)", lambda: compare(side_a, side_b))
    return times


def command_seconds(a: Path, b: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `slabscope diff A B --json` in a fresh process (on a shared
    machine the CPU seconds say what the wall time would be on an idle one)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "slabscope.app.cli", "diff", str(a), str(b), "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--events", type=int, default=DEFAULT_EVENTS)
    args = parser.parse_args(argv)
    folder = None
    if args.files:
        a, b = args.files
    else:
        folder = Path(tempfile.mkdtemp())
        a, b = write(folder, args.events, 0), write(folder, args.events, 1)
    try:
        for path in (a, b):
            graph = planner.load(path)
            print(f"{path.name}: {path.stat().st_size / 1e6:,.1f} MB, {len(graph.buffers):,} "
                  f"buffers, {len(graph.nodes):,} steps")
        phases(a, b)  # warm-up: numba's start and kernels, once per process
        times = phases(a, b)
        total = sum(s for _, s in times)
        rows = [(label, f"{s:.2f} s") for label, s in times]
        rows.append(("all phases", f"{total:.2f} s"))
        command, cpu = command_seconds(a, b)
        rows.append(("`slabscope diff A B --json`, fresh process", f"{command:.2f} s"))
        rows.append(("  its CPU time (user + system)", f"{cpu:.2f} s"))
        print_table(("phase", "time"), rows)
        verdict = {True: "met", False: "NOT met"}
        print(f"aim, at most {TARGET_S:g} s: {verdict[command <= TARGET_S]} in wall time, "
              f"{verdict[cpu <= TARGET_S]} in CPU time (load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores)")
    finally:
        if folder is not None:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
