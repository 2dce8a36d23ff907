"""Execution-order benchmark: the peak of live bytes in the given order, under the list
schedulers compilers use (LPMF, BFS, DFS, as in Inductor's reorder_for_peak_memory), and under
`planner.schedule`, beside the lower bound on every order's peak.

Graphs: the light ONNX models shipped with the onnx package (activations only, and with their
constants kept), generated transformers, and branchy random DAGs with long skips. The baseline
is the given order (what the serial model planned in before `--schedule best`) and the best of
the list schedulers; the table quotes `planner.schedule` against both.

    .venv/bin/python bench/schedule.py [--budget SECONDS] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope import planner  # noqa: E402
from bench.branchy import branchy_graph  # noqa: E402

MB = 1e6


def onnx_graphs() -> list[tuple[str, callable]]:
    """(label, loader) for each light ONNX model, without and with constants kept."""
    try:
        import onnx
    except ImportError:
        print("onnx not installed: ONNX models skipped")
        return []
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    out = []
    for path in sorted(light.glob("*.onnx")):
        name = path.stem.removeprefix("light_")
        for weights in (False, True):
            out.append((f"{name}{' +constants' if weights else ''}",
                        lambda p=path, w=weights: planner.load(str(p), include_weights=w)))
    return out


def transformer_graphs() -> list[tuple[str, callable]]:
    from slabscope.gpu.generators import transformer

    shapes = [(128, 256, 4, 4), (256, 512, 8, 12)]
    return [(f"transformer s{s} w{w} x{layers}",
             lambda s=s, w=w, h=h, layers=layers: planner.graph_from_dict(
                 transformer(s, w, h, layers=layers), name="transformer"))
            for s, w, h, layers in shapes]


def branchy_graphs(quick: bool) -> list[tuple[str, callable]]:
    sizes = [(300, 4, 1), (300, 4, 2), (300, 8, 3), (300, 8, 4), (1000, 4, 5), (1000, 8, 6),
             (2000, 4, 7), (2000, 8, 8)]
    if quick:
        sizes = sizes[:3]
    return [(f"branchy {n} b{b} s{seed}",
             lambda n=n, b=b, seed=seed: branchy_graph(n, branches=b, seed=seed))
            for n, b, seed in sizes]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per graph (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="fewer graphs")
    args = parser.parse_args(argv)
    graphs = onnx_graphs() + transformer_graphs() + branchy_graphs(args.quick)
    header = (f"{'graph':<30} {'nodes':>5} {'given':>8} {'LPMF':>8} {'BFS':>8} {'DFS':>8} "
              f"{'best':>8} {'bound':>8} {'best/list':>9} {'best/given':>10} {'time':>6}  proof")
    print("peaks of live bytes in MB (10^6 bytes); best/list = best / min(given, LPMF, BFS, DFS)")
    print(header)
    print("-" * len(header))
    below = changeable = 0
    for label, load in graphs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = load()
        start = time.perf_counter()
        chosen = planner.schedule(graph, seed=args.seed, budget=args.budget)
        seconds = time.perf_counter() - start
        s = chosen.starts
        floor = min(s.values())
        if chosen.fixed is None:
            changeable += 1
            below += chosen.peak_bytes < floor
        cells = " ".join(f"{s[k] / MB:>8.3f}" if k in s else f"{'-':>8}"
                         for k in ("given", "LPMF", "BFS", "DFS"))
        print(f"{label:<30} {len(graph.nodes):>5} {cells} {chosen.peak_bytes / MB:>8.3f} "
              f"{chosen.lower_bound_bytes / MB:>8.3f} {chosen.peak_bytes / floor:>9.3f} "
              f"{chosen.peak_bytes / chosen.given_peak_bytes:>10.3f} {seconds:>5.1f}s  "
              f"{chosen.fixed or chosen.proof}")
        assert chosen.peak_bytes <= floor, label
    print(f"\nstrictly below min(given, LPMF, BFS, DFS) on {below} of {changeable} graphs whose "
          f"order can change")
    return 0


if __name__ == "__main__":
    sys.exit(main())
