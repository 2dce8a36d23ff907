"""Loading plus first fit (closure, conflict sets, placement) on generated layered DAGs: the planner
against a plain O(n^2) version.

Run: .venv/bin/python bench/first_fit_speed.py [--sizes 1000,2000,10000] [--naive-max 2000]
Prints one row per size; the naive version only runs up to --naive-max (it grows quadratically).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope import planner  # noqa: E402
from bench.layered import layered_graph_data  # noqa: E402


def naive_first_fit(graph: planner.Graph) -> int:
    """Closure by DFS from every node, then first fit checking every placed buffer: O(n^2)."""
    succ = {n.name: [] for n in graph.nodes}
    for a, b in graph.edges:
        succ[a].append(b)
    after = {}
    for start in succ:
        seen, stack = set(), list(succ[start])
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(succ[n])
        after[start] = seen

    def precedes(a, b):
        return all(v in after[u] for u in a.uses for v in b.uses)

    placed = []
    slab = 0
    for name in graph.order:
        buf = graph.buffer(name)
        size = planner.align_up(buf.bytes, graph.alignment)
        spans = sorted((o, o + s) for other, o, s in placed
                       if not precedes(other, buf) and not precedes(buf, other))
        cursor = 0
        for lo, hi in spans:
            if lo - cursor >= size:
                break
            cursor = max(cursor, hi)
        placed.append((buf, cursor, size))
        slab = max(slab, cursor + size)
    return slab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000,10000")
    parser.add_argument("--naive-max", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'nodes=buffers':>13}  {'load s':>14}  {'first fit s':>11}  {'total s':>8}  "
          f"{'naive s':>8}  {'speed-up':>8}  {'slab bytes':>14}  {'conflict pairs':>14}")
    for n in (int(s) for s in args.sizes.split(",")):
        data = layered_graph_data(n, n)
        start = time.perf_counter()
        graph = planner.graph_from_dict(data)  # validates; the closure waits for the dag model
        closed = time.perf_counter()
        result = planner.plan(graph)
        done = time.perf_counter()
        model = planner.conflict_model(graph)
        pairs = sum(model.conflict_mask(i).bit_count() for i in range(n)) // 2
        total = done - start
        naive = speedup = "-"
        if n <= args.naive_max:
            t0 = time.perf_counter()
            assert naive_first_fit(graph) == result.slab_bytes
            naive_s = time.perf_counter() - t0
            naive, speedup = f"{naive_s:8.2f}", f"{naive_s / total:7.1f}x"
        print(f"{n:>13,}  {closed - start:14.3f}  {done - closed:11.3f}  {total:8.3f}  "
              f"{naive:>8}  {speedup:>8}  {result.slab_bytes:>14,}  {pairs:>14,}")


if __name__ == "__main__":
    main()
