"""Slab execution against per-buffer allocation, and eager launches against CUDA graph replay.

From the worked example up to MLPs of several hundred MiB; prints one table. Every figure is
measured by `gpu.run` on this machine (the backend is chosen as `slabscope run` would: CuPy when
a device answers, else NumPy).

    .venv/bin/python bench/runner.py [--backend auto|cupy|numpy] [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope import gpu  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.gpu.generators import mlp, transformer  # noqa: E402
from slabscope.gpu.report import seconds_text  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "example_graphs"


def cases(quick: bool):
    """(label, graph) from the tiny example upwards."""
    yield "relu_unfused (example)", planner.load(EXAMPLES / "relu_unfused.json")
    yield "relu_fused (example)", planner.load(EXAMPLES / "relu_fused.json")
    yield "transformer 256 tok, w512, 8 heads", planner.graph_from_dict(transformer(256, 512, 8))
    yield "mlp 8 x 1024, batch 1024", planner.graph_from_dict(mlp(8, 1024, 1024))
    if not quick:
        yield "mlp 8 x 1024, batch 4096", planner.graph_from_dict(mlp(8, 4096, 1024))
        yield "mlp 6 x 4096, batch 256", planner.graph_from_dict(mlp(6, 256, 4096))


def mib(n: int | None) -> str:
    """Bytes as MiB with one decimal, or '-'."""
    return "-" if n is None else f"{n / 2**20:,.1f}"


def main(argv=None) -> int:
    """Run every case in both layouts and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto", choices=gpu.BACKEND_NAMES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the two largest MLPs")
    args = parser.parse_args(argv)

    gpu.select_backend(args.backend)  # the one-time backend probe is not any row's prepare
    header = ("graph", "buffers", "layout", "alloc MiB", "peak MiB", "prepare", "execute",
              "replay", "verified")
    rows = [header]
    device = None
    for label, graph in cases(args.quick):
        for layout in gpu.LAYOUTS:
            report = gpu.run(graph, backend=args.backend, repeats=args.repeats, layout=layout,
                             verify=layout == "slab")
            device = device or (report.backend, report.device, report.backend_note)
            replay = report.replay
            replayed = f"{seconds_text(replay.replay_seconds)}" if replay.available else "n/a"
            verified = "-" if report.verification is None else \
                ("yes" if report.verification.ok else "NO")
            rows.append((label, str(len(graph.buffers)), layout, mib(report.allocated_bytes),
                         mib(report.peak_used_bytes), seconds_text(report.phase("prepare").seconds),
                         seconds_text(report.execute_seconds), replayed, verified))
            print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    backend, name, note = device
    print(f"backend {backend} on {name}" + (f" ({note})" if note else ""))
    print(f"{args.repeats} timed executes per row; execute = mean wall time of one; prepare "
          f"includes one warm-up execute; peak = "
          f"{'CuPy pool total' if backend == 'cupy' else 'tracemalloc high-water of prepare + one execute, host staging included'}")
    if backend != "cupy":
        print("replay: CUDA graph replay needs CuPy and a device (n/a here)")
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    for r in rows:
        print("  ".join(cell.ljust(w) if c in (0, 2) else cell.rjust(w)
                        for c, (cell, w) in enumerate(zip(r, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
