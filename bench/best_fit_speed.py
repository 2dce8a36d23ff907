"""Best fit against first fit on the interval kernel, this tree's kernel beside a baseline's.

Run: .venv/bin/python bench/best_fit_speed.py [--baseline main] [--repeat 2] [--rows 200000]

The baseline commit's `planner/placement/dense_kernels.py` is imported in the same process as
this tree's (its relative imports pointed at this tree's `support` package), so both place the
same arrays under the same load. Traces, serial model: generated rows at idealloc Y_1's density
(`bench/dense_trace.py`), request order and largest first; idealloc's Y_1 and MiniMalloc's K
from the shared benchmarks folder when present, else generated traces of 62,185 and 1M rows.
Each cell is one packing's processor seconds (`time.process_time`: a loaded machine disturbs
it least), the least of --repeat runs, compiling excluded; the ratios are best fit over first
fit of the same kernel. Offsets of the two kernels must be identical, or the bench stops.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.dense_trace import dense_rows  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.planner.placement import dense_kernels  # noqa: E402
from slabscope.planner.placement.greedy import largest_first_order  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
KERNEL = "planner/placement/dense_kernels.py"


def baseline_kernels(commit: str, folder: Path):
    """The dense kernels module as of `commit`, imported beside this tree's."""
    source = subprocess.run(["git", "show", f"{commit}:{KERNEL}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    source = source.replace("from ..support.", "from slabscope.planner.support.")
    path = folder / "baseline_dense_kernels.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_dense_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def traces(rows: int, folder: Path) -> list[tuple[str, Path]]:
    """(label, MiniMalloc CSV) of each trace to measure: generated ones written to `folder`."""
    found = [("Y_1", SHARED / "idealloc" / "Y_1.csv"),
             ("K", SHARED / "minimalloc" / "K.1048576.csv")]
    found = [(label, path) for label, path in found if path.exists()]
    sizes = [rows] + ([] if any(label == "Y_1" for label, _ in found) else [62_185, 1_000_000])
    generated = []
    for n in sizes:
        path = folder / f"dense_{n}.csv"
        path.write_text(dense_rows(n))
        generated.append((f"{n:,} rows at Y_1's density", path))
    return generated + found


def cpu_seconds(place, repeat: int) -> tuple[float, np.ndarray]:
    """The least processor seconds of `repeat` calls of `place()`, and its result."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = place()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="commit whose kernel to compare")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--rows", type=int, default=200_000, help="generated rows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        kernels = {"before": baseline_kernels(args.baseline, folder), "now": dense_kernels}
        for module in kernels.values():
            module.warm_up()
        print("| trace | order | first fit before | now | best fit before | now "
              "| best/first before | now |")
        print("|---|---|---|---|---|---|---|---|")
        for label, path in traces(args.rows, folder):
            graph = planner.load(path)
            model = planner.conflict_model(graph, "serial")
            first, last = model.intervals
            size = np.asarray(graph.reserved, dtype=np.int64)
            orders = {"request order": np.arange(len(size)),
                      "largest first": np.asarray(largest_first_order(graph, model))}
            for name, order in orders.items():
                seconds, offsets = {}, {}
                for fit in (dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT):
                    for kernel, module in kernels.items():
                        placer = module.IntervalPlacer(size, first, last)
                        seconds[kernel, fit], offsets[kernel, fit] = cpu_seconds(
                            lambda: placer.offsets(order, fit), args.repeat)
                    if not np.array_equal(offsets["before", fit], offsets["now", fit]):
                        sys.exit(f"{label}, {name}: offsets differ from the baseline's")
                ff, bf = dense_kernels.FIRST_FIT, dense_kernels.BEST_FIT
                cells = [seconds[k, f] for f in (ff, bf) for k in kernels]
                ratios = [seconds[k, bf] / seconds[k, ff] for k in kernels]
                print(f"| {label} | {name} | " + " | ".join(f"{c:.3f} s" for c in cells)
                      + " | " + " | ".join(f"{r:.1f}x" for r in ratios) + " |", flush=True)
        print(f"\nbaseline {args.baseline}; offsets of both kernels identical in every row")


if __name__ == "__main__":
    main()
