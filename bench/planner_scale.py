"""How `slabscope plan FILE --json` (first fit and the lower bound) grows with the graph, beside a
baseline checkout of the planner, each run as its own process.

Run: .venv/bin/python bench/planner_scale.py [--baseline f5ea06f] [--baseline-timeout 60]
     [--only layered,chain-dag,chain-serial,csv,dense] [--quick] [--no-omnimalloc]

For each kind of graph (a layered DAG whose lanes fork and join, dag model; a chain with a
schedule under both models; sparse MiniMalloc CSV rows and rows at idealloc Y_1's density
(`bench/dense_trace.py`), serial model) and size, it prints the wall time and peak resident
memory of the whole process (the child's own rusage from `os.wait4`), the issue's goal where one
exists, the same for the baseline (the baseline commit's files from `git archive`, unpacked in a
temporary folder; run under a timeout and an address-space cap so old quadratic code cannot
starve the machine), and the growth exponent log(t2/t1)/log(n2/n1) between consecutive sizes.
For the dense rows it also runs omnimalloc's C++ greedy on the same intervals (in its own
process, with the same timeout; a refusal is shown as its one-line reason). Each tree first
plans a small graph of each kind untimed, so that numba compiling its kernels (for a tree in a
new folder) is not counted. Timings on a shared machine are noisy: each time is shown as
wall/processor seconds, and the ratio (baseline over this tree) is of processor seconds, which a
busy machine disturbs least.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chain import chain_graph_data, minimalloc_rows  # noqa: E402
from bench.dense_trace import dense_rows  # noqa: E402
from bench.layered import layered_graph_data  # noqa: E402
from bench.trees import python_path  # noqa: E402

# kind -> (sizes, file suffix, extra plan arguments, {size: (goal seconds, goal GiB)})
KINDS = {
    "layered": ((1_000, 10_000, 30_000), ".json", [], {10_000: (2, 1), 30_000: (15, 3)}),
    "chain-dag": ((1_000, 10_000, 30_000, 100_000), ".json", ["--conflicts", "dag"],
                  {30_000: (5, 2)}),
    "chain-serial": ((1_000, 10_000, 100_000), ".json", ["--conflicts", "serial"],
                     {100_000: (5, 1)}),
    "csv": ((1_000, 10_000, 100_000, 1_000_000), ".csv", [], {1_000_000: (15, 1.5)}),
    "dense": ((10_000, 62_185, 200_000, 1_000_000), ".csv", [],
              {200_000: (3, 1.5), 1_000_000: (15, 1.5)}),
}
QUICK_LIMIT = 10_000


def write_graph(kind: str, size: int, folder: Path) -> Path:
    """The generated graph file of `kind` with `size` nodes (rows for csv)."""
    path = folder / f"{kind}_{size}{KINDS[kind][1]}"
    if not path.exists():
        if kind == "layered":
            path.write_text(json.dumps(layered_graph_data(size, size)))
        elif kind == "csv":
            path.write_text(minimalloc_rows(size))
        elif kind == "dense":
            path.write_text(dense_rows(size))
        else:
            path.write_text(json.dumps(chain_graph_data(size)))
    return path


def run_plan(tree: Path, path: Path, extra: list[str], timeout: float, memory_cap: int):
    """(seconds, peak RSS in bytes, outcome, processor seconds) of `python -m slabscope.app.cli plan path --json` in `tree`."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

    began = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "slabscope.app.cli", "plan", str(path), "--json", *extra],
                             cwd=python_path(tree), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=limit, env={**os.environ, "PYTHONPATH": python_path(tree)})
    deadline = began + timeout
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            return time.perf_counter() - began, usage.ru_maxrss * 1024, "timeout", _cpu(usage)
        time.sleep(0.02)
    seconds = time.perf_counter() - began
    code = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace").strip().splitlines()
    outcome = "ok" if code == 0 else f"exit {code}: {error[-1][:60] if error else ''}"
    return seconds, usage.ru_maxrss * 1024, outcome, _cpu(usage)


def _cpu(usage) -> float:
    """The child's processor seconds (user and system): what a busy machine changes least."""
    return usage.ru_utime + usage.ru_stime


_OMNIMALLOC = """
import sys, time, numpy as np, omnimalloc
rows = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
allocations = [omnimalloc.Allocation(int(i), int(s), int(lo), int(hi))
               for i, lo, hi, s in rows.tolist()]
began = time.perf_counter()
placed = omnimalloc.allocate(allocations, omnimalloc.allocators.GreedyAllocator())
seconds = time.perf_counter() - began
print(f"{seconds:.2f} s to place, slab {max(a.offset + a.size for a in placed):,}")
"""


def run_omnimalloc(path: Path, timeout: float) -> str:
    """omnimalloc's greedy on a MiniMalloc CSV, in its own process: its time and slab, or why
    not (not installed, a refusal, a timeout)."""
    try:
        done = subprocess.run([sys.executable, "-c", _OMNIMALLOC, str(path)], timeout=timeout,
                              capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return f"no answer in {timeout:.0f} s"
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        return f"refused: {lines[-1][:110] if lines else f'exit {done.returncode}'}"
    return done.stdout.strip()


def exponent(rows: list[tuple[int, float | None]]) -> list[str]:
    """Growth exponents between consecutive (size, seconds) rows ('' where unknown)."""
    out = [""]
    for (n1, t1), (n2, t2) in zip(rows, rows[1:]):
        out.append(f"{math.log(t2 / t1) / math.log(n2 / n1):.2f}" if t1 and t2 else "")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="f5ea06f", help="commit to compare against "
                                                                "('' for none)")
    parser.add_argument("--no-omnimalloc", action="store_true",
                        help="skip omnimalloc's greedy on the dense rows")
    parser.add_argument("--baseline-timeout", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--memory-cap-gib", type=float, default=6.0)
    parser.add_argument("--only", default=",".join(KINDS))
    parser.add_argument("--quick", action="store_true", help=f"sizes up to {QUICK_LIMIT:,} only")
    args = parser.parse_args()
    cap = int(args.memory_cap_gib * 2**30)
    # A terminated run still removes its baseline worktree (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    with tempfile.TemporaryDirectory(prefix="planner_scale_") as scratch:
        scratch = Path(scratch)
        baseline = None
        if args.baseline:
            baseline = scratch / "baseline"
            baseline.mkdir()
            archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        try:
            print(f"{'graph':<13} {'size':>9}  {'wall/cpu s':>11} {'peak MiB':>9} {'exp':>5}  "
                  f"{'goal':>11}  {'baseline s':>11} {'MiB':>7} {'exp':>5}  {'cpu ratio':>9}",
                  flush=True)
            for tree in (ROOT, baseline) if baseline else (ROOT,):
                # Untimed: numba compiles a tree's kernels on its first run from a new folder
                # (each kind of graph has its own: intervals, bitsets).
                for kind in args.only.split(","):
                    run_plan(tree, write_graph(kind, 500, scratch), KINDS[kind][2], args.timeout,
                             cap)
            for kind in args.only.split(","):
                sizes, _, extra, goals = KINDS[kind]
                sizes = [s for s in sizes if not args.quick or s <= QUICK_LIMIT]
                new_rows, old_rows, lines = [], [], []
                for size in sizes:
                    path = write_graph(kind, size, scratch)
                    new = run_plan(ROOT, path, extra, args.timeout, cap)
                    old = run_plan(baseline, path, extra, args.baseline_timeout, cap) \
                        if baseline else None
                    new_rows.append((size, new[0] if new[2] == "ok" else None))
                    old_rows.append((size, old[0] if old and old[2] == "ok" else None))
                    lines.append((size, new, old))
                for (size, new, old), e_new, e_old in zip(lines, exponent(new_rows),
                                                          exponent(old_rows)):
                    goal = goals.get(size)
                    goal_text = f"<{goal[0]}s/{goal[1]}G" if goal else ""
                    shown = _shown(new)
                    old_shown = _shown(old, args.baseline_timeout) if old else ("-", "-")
                    ratio = f"{old[3] / new[3]:.1f}x" if old and old[2] == "ok" and new[2] == "ok" \
                        else ""
                    print(f"{kind:<13} {size:>9,}  {shown[0]:>11} {shown[1]:>9} {e_new:>5}  "
                          f"{goal_text:>11}  {old_shown[0]:>11} {old_shown[1]:>7} {e_old:>5}  "
                          f"{ratio:>9}", flush=True)
                    if kind == "dense" and not args.no_omnimalloc:
                        print(f"    omnimalloc greedy: "
                              f"{run_omnimalloc(write_graph(kind, size, scratch), args.timeout)}",
                              flush=True)
                    for label, result in (("new", new), ("baseline", old)):
                        if result and result[2] not in ("ok", "timeout"):
                            print(f"    {label}: {result[2]}")
        finally:
            if baseline is not None:
                shutil.rmtree(baseline, ignore_errors=True)


def _shown(result, timeout: float | None = None) -> tuple[str, str]:
    seconds, rss, outcome, cpu = result
    if outcome == "timeout":
        return f">{timeout or seconds:.0f}", f"{rss / 2**20:,.0f}"
    if outcome != "ok":
        return "failed", f"{rss / 2**20:,.0f}"
    return f"{seconds:.2f}/{cpu:.1f}", f"{rss / 2**20:,.0f}"


if __name__ == "__main__":
    main()
