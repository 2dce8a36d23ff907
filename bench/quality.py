"""How far from optimal each algorithm's slab is, on real models and public allocation benchmarks.

Run: .venv/bin/python bench/quality.py [--suite standard|hard|dense|all] [--only NAME] [--budget S]
     [--omnimalloc-search] [--benchmarks DIR]

standard: every light ONNX model shipped with the onnx package as the importer builds it, in the
dag model, and every CSV under ../shared/benchmarks/ (MiniMalloc A-K and input.12,
omnimalloc_small, idealloc), in the serial model. hard (graphs the search was not tuned on):
the light ONNX models with their constant tensors kept as buffers, each also in a shuffled
request order, and generated transformers and MLPs, plain and shuffled, in the dag model.

One row per instance: buffers, the lower bound, then per algorithm the gap of its slab over the
lower bound and its time, then the best of omnimalloc's greedy allocators on the same conflicts
(install with `pip install -e '.[bench]'`), with --omnimalloc-search the best of its searches
(simulated annealing, tabu search, TelaMalloc), each given the search budget, and the best known
height where the benchmark publishes one. Every plan, omnimalloc's included, is checked (dag:
`planner.verify`; serial: a sweep over time, as the pairwise check takes minutes on 60,000
buffers); a plan that fails is shown as INVALID. Search budgets: --budget, else 5 s for the dag
model and 10 s for the CSV benchmarks. Search runs with seed 0. dense: generated traces at
idealloc Y_1's density (`bench/dense_trace.py`, 2,525 live on average), 10,000 to 200,000 rows,
in the serial model (not part of all: each takes minutes).
"""

from __future__ import annotations

import argparse
import heapq
import random
import re
import sys
import time
import warnings
from bisect import bisect_left, insort
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.planner.model.reachability import topological_order  # noqa: E402
from slabscope.planner.placement.search import warm_up  # noqa: E402

DEFAULT_BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"

# omnimalloc's single-pass greedy placers (its searches and exact solvers are not peers here).
OMNIMALLOC_GREEDY = ("greedy", "greedy_by_size", "greedy_by_duration", "greedy_by_area",
                     "greedy_by_conflict", "greedy_by_conflict_size", "greedy_by_start",
                     "best_fit")

# omnimalloc's searches, each run with the search budget as its timeout.
OMNIMALLOC_SEARCH = ("simulated_annealing", "tabu_search", "telamalloc")

SEARCH_BUDGET = {"dag": 5.0, "serial": 10.0}

# The seed of shuffled request orders.
SHUFFLE_SEED = 1

# Generated graphs of the hard suite: (name, generator, arguments).
GENERATED = (
    ("transformer-s256-w512-h8-l4", "transformer", (256, 512, 8), {"layers": 4}),
    ("transformer-s128-w256-h4-l2", "transformer", (128, 256, 4), {"layers": 2}),
    ("transformer-s512-w256-h4-l6", "transformer", (512, 256, 4), {"layers": 6}),
    ("mlp-l8-b64-w1024", "mlp", (8, 64, 1024), {}),
    ("mlp-l16-b256-w512-fused", "mlp", (16, 256, 512), {"fused": True}),
)


@dataclass(frozen=True)
class Instance:
    """One benchmark input: its name, conflict model, how to load it, whether its request order
    is shuffled, and a best known height."""

    name: str
    conflicts: str
    load: Callable[[], planner.Graph]
    shuffled: bool = False
    best_known: int | None = None


def _light_models() -> list[Path]:
    try:
        import onnx
    except ImportError:
        return []
    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    return sorted(light.glob("*.onnx"))


def _quietly(load: Callable[[], planner.Graph]) -> Callable[[], planner.Graph]:
    def loaded() -> planner.Graph:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # guessed sizes are the importer's business
            return load()
    return loaded


def onnx_instances() -> list[Instance]:
    """The light ONNX models that ship with the onnx package (none when it is not installed)."""
    return [Instance(f"onnx/{p.stem.removeprefix('light_')}", "dag",
                     _quietly(lambda p=p: planner.load(p))) for p in _light_models()]


def hard_instances() -> list[Instance]:
    """Light ONNX models with constants kept as buffers and generated transformers and MLPs,
    each in its own request order and shuffled."""
    from slabscope.planner.formats.onnx_import import load_onnx

    from slabscope.gpu import generators

    loaders = [(f"onnx+constants/{p.stem.removeprefix('light_')}",
                _quietly(lambda p=p: load_onnx(p, keep_constants=True)[0]))
               for p in _light_models()]
    loaders += [(f"generated/{name}", lambda kind=kind, a=a, k=k: planner.graph_from_dict(
                    getattr(generators, kind)(*a, **k)))
                for name, kind, a, k in GENERATED]
    return [Instance(name + ("/shuffled" if shuffled else ""), "dag", load, shuffled)
            for name, load in loaders for shuffled in (False, True)]


# Rows of the dense suite's generated traces.
DENSE_ROWS = (10_000, 62_185, 200_000)


def dense_instances() -> list[Instance]:
    """Generated MiniMalloc traces at Y_1's density, written to a temporary file and loaded."""
    import tempfile

    from bench.dense_trace import dense_rows

    def load(rows: int) -> planner.Graph:
        with tempfile.TemporaryDirectory(prefix="quality_dense_") as folder:
            path = Path(folder) / f"dense_{rows}.csv"
            path.write_text(dense_rows(rows))
            return planner.load(path)

    return [Instance(f"dense/{rows}", "serial", lambda rows=rows: load(rows))
            for rows in DENSE_ROWS]


def _readme_best_known(folder: Path) -> dict[str, int]:
    """Best known heights from the benchmarks README table (`| A | 154 | LB | best ... |`)."""
    readme = folder / "README.md"
    if not readme.exists():
        return {}
    best = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"[\d,]+", cells[1]):
            height = re.match(r"[\d,]+", cells[3])
            if height:
                best[cells[0]] = int(height.group().replace(",", ""))
    return best


def csv_instances(folder: Path) -> list[Instance]:
    """Every CSV under `folder`, with the best known height where the benchmark gives one."""
    best = _readme_best_known(folder)
    found = []
    for path in sorted(folder.glob("*/*.csv")):
        suite = path.parent.name
        known = best.get(path.name.split(".")[0]) if suite == "minimalloc" else None
        if suite == "omnimalloc_small":  # the number in the name is the optimum
            known = int(path.name.split(".")[1])
        found.append(Instance(f"{suite}/{path.stem}", "serial",
                              lambda path=path: planner.load(path), best_known=known))
    return found


def _timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def _plan_from_offsets(graph: planner.Graph, offsets: dict[int, int], algorithm: str,
                       conflicts: str) -> planner.Plan:
    """A traceless plan for offsets computed elsewhere, so that they can be checked."""
    reserved = graph.reserved
    placements = tuple(planner.Placement(b.name, offsets[i], b.bytes, reserved[i])
                       for i, b in enumerate(graph.buffers))
    return planner.Plan(placements, (), max((p.end for p in placements), default=0),
                        sum(reserved), algorithm, conflicts, graph.alignment)


def _schedule_steps(graph: planner.Graph) -> np.ndarray:
    """Per node index, its step in the graph's schedule (or a topological order)."""
    order = ([graph.node_index[n] for n in graph.schedule] if graph.schedule is not None
             else topological_order([n.name for n in graph.nodes], graph.successors))
    steps = np.empty(len(graph.nodes), dtype=np.int64)
    steps[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    return steps


def _serial_sound(graph: planner.Graph, plan: planner.Plan) -> bool:
    """Whether no two buffers live at a common step of the schedule share bytes, by a sweep.

    Buffers start in step order; the ones still live are kept sorted by offset, so a new one
    only has to clear its two neighbours. Alignment, sizes and the slab's end are checked too.
    """
    steps = _schedule_steps(graph)
    n = len(graph.buffers)
    first = [int(steps[list(uses)].min()) for uses in graph.use_indices]
    last = [int(steps[list(uses)].max()) for uses in graph.use_indices]
    spans = {}
    for p in plan.placements:
        i = graph.buffer_index.get(p.name)
        if i is None or i in spans or p.reserved != graph.reserved[i] or \
                p.offset % graph.alignment or p.end > plan.slab_bytes:
            return False
        spans[i] = (p.offset, p.end)
    if len(spans) != n:
        return False
    live: list[tuple[int, int]] = []  # (offset, buffer) of the buffers live now, by offset
    expiring: list[tuple[int, int]] = []  # (last step, buffer)
    for i in sorted(range(n), key=first.__getitem__):
        while expiring and expiring[0][0] < first[i]:
            _, j = heapq.heappop(expiring)
            del live[bisect_left(live, (spans[j][0], j))]
        at = bisect_left(live, (spans[i][0], i))
        if at > 0 and spans[live[at - 1][1]][1] > spans[i][0]:
            return False
        if at < len(live) and spans[live[at][1]][0] < spans[i][1]:
            return False
        insort(live, (spans[i][0], i))
        heapq.heappush(expiring, (last[i], i))
    return True


def _sound(graph: planner.Graph, plan: planner.Plan, conflicts: str) -> bool:
    """Whether `plan` is valid on `graph` under `conflicts`."""
    if conflicts == "serial":
        return _serial_sound(graph, plan)
    return planner.verify(graph, plan).ok


def _vector_clocks(graph: planner.Graph) -> tuple[np.ndarray, np.ndarray]:
    """Per node, its vector clock over a path cover of the DAG, and its chain.

    clock[v][c] counts the nodes of chain c that reach v or are v, so u strictly reaches v
    exactly when clock[u] <= clock[v] - unit(chain[v]) componentwise.
    """
    topo = topological_order([n.name for n in graph.nodes], graph.successors)
    preds: list[list[int]] = [[] for _ in graph.nodes]
    for u, succ in enumerate(graph.successors):
        for v in succ:
            preds[v].append(u)
    chain = np.full(len(graph.nodes), -1)
    tails: list[int] = []
    for v in topo:
        extendable = [p for p in preds[v] if tails[chain[p]] == p]
        if extendable:
            chain[v] = chain[extendable[0]]
            tails[chain[v]] = v
        else:
            chain[v] = len(tails)
            tails.append(v)
    clock = np.zeros((len(graph.nodes), len(tails)), dtype=np.int64)
    for v in topo:
        if preds[v]:
            clock[v] = clock[preds[v]].max(axis=0)
        clock[v, chain[v]] += 1
    return clock, chain


def omnimalloc_allocations(graph: planner.Graph, conflicts: str):
    """The graph's buffers as omnimalloc allocations with the same conflicts as `conflicts`.

    serial: half-open step intervals over the schedule. dag: vector clocks, a buffer starting
    at the meet of its uses' strict pasts and ending at the join of its uses' clocks, so that
    one ends before the other starts exactly when it precedes it.
    """
    import omnimalloc

    reserved = graph.reserved
    if conflicts == "serial":
        steps = _schedule_steps(graph)
        return [omnimalloc.Allocation(i, reserved[i], int(min(steps[list(uses)])),
                                      int(max(steps[list(uses)])) + 1)
                for i, uses in enumerate(graph.use_indices)]
    clock, chain = _vector_clocks(graph)
    past = clock.copy()
    past[np.arange(len(chain)), chain] -= 1
    allocations = []
    for i, uses in enumerate(graph.use_indices):
        uses = list(uses)
        start = tuple(int(x) for x in past[uses].min(axis=0))
        end = tuple(int(x) for x in clock[uses].max(axis=0))
        allocations.append(omnimalloc.Allocation(i, reserved[i], start, end))
    return allocations


def best_omnimalloc(graph: planner.Graph, conflicts: str, names=OMNIMALLOC_GREEDY,
                    timeout: float | None = None):
    """(slab, allocator name, its seconds, valid) of the best of omnimalloc's allocators `names`
    (each given `timeout` seconds when set)."""
    import omnimalloc
    from omnimalloc.allocators import BaseAllocator

    allocations = omnimalloc_allocations(graph, conflicts)
    best = None
    for name in names:
        allocator = name if timeout is None else BaseAllocator.registry()[name](timeout=timeout)
        try:
            placed, seconds = _timed(omnimalloc.allocate, allocations, allocator)
        except (ValueError, RuntimeError):
            continue  # an allocator that does not take these lifetimes (e.g. vector clocks)
        slab = max((a.offset + a.size for a in placed), default=0)
        if best is None or slab < best[0]:
            best = (slab, name, seconds, placed)
    if best is None:
        return None
    slab, name, seconds, placed = best
    plan = _plan_from_offsets(graph, {a.id: a.offset for a in placed}, f"omnimalloc {name}",
                              conflicts)
    return slab, name, seconds, _sound(graph, plan, conflicts)


def _gap(slab: int, bound: int | None) -> str:
    return f"{slab / bound - 1:+.2%}" if bound else f"{slab:,}"


def shuffled_order(graph: planner.Graph) -> list[str]:
    """The buffer names in a random order (the same every run)."""
    names = [b.name for b in graph.buffers]
    random.Random(SHUFFLE_SEED).shuffle(names)
    return names


def measure(instance: Instance, budget: float | None, with_omnimalloc: bool,
            omnimalloc_search: bool) -> list[str]:
    """One table row for `instance`."""
    graph = instance.load()
    row = [instance.name, instance.conflicts, f"{len(graph.buffers):,}"]
    result, seconds = _timed(planner.lower_bound, graph, conflicts=instance.conflicts)
    bound = result.bytes
    row += [f"{bound:,}", f"{seconds:.2f}s"]
    budget = budget if budget is not None else SEARCH_BUDGET[instance.conflicts]
    order = shuffled_order(graph) if instance.shuffled else None
    for algorithm in planner.ALGORITHMS:
        options = {"conflicts": instance.conflicts, "order": order}
        if algorithm == "search":
            options["budget"] = budget
        plan, seconds = _timed(planner.plan, graph, algorithm=algorithm, **options)
        valid = _sound(graph, plan, instance.conflicts)
        row.append(f"{_gap(plan.slab_bytes, bound)} {seconds:.2f}s" if valid else "INVALID")
        if algorithm == "search":
            search_slab = plan.slab_bytes
    if with_omnimalloc:
        best = best_omnimalloc(graph, instance.conflicts)
        if best is None:
            row.append("no allocator took it")
        else:
            slab, name, seconds, valid = best
            row.append(f"{_gap(slab, bound)} {seconds:.2f}s {name}" if valid
                       else f"INVALID ({name})")
    if with_omnimalloc and omnimalloc_search:
        best = best_omnimalloc(graph, instance.conflicts, OMNIMALLOC_SEARCH, budget)
        if best is None:
            row.append("no search took it")
        else:
            slab, name, seconds, valid = best
            row.append(f"{_gap(slab, bound)} {seconds:.2f}s {name}" if valid
                       else f"INVALID ({name})")
    if instance.best_known:
        row.append(f"{instance.best_known:,}")
        row.append(f"{search_slab / instance.best_known - 1:+.2%}")
    return row


def main(argv=None) -> int:
    """Print the quality table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=("standard", "hard", "dense", "all"), default="all",
                        help="standard: ONNX models as imported and the CSV benchmarks; hard: "
                             "ONNX models with constants as buffers, generated graphs, "
                             "shuffled orders; dense: generated traces at Y_1's density "
                             "(default: all, which is standard and hard)")
    parser.add_argument("--only", help="run only instances whose name contains this text")
    parser.add_argument("--omnimalloc-search", action="store_true",
                        help="also run omnimalloc's searches, each with the search budget")
    parser.add_argument("--budget", type=float, help="search budget in seconds for every instance")
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS,
                        help=f"folder of CSV benchmarks (default {DEFAULT_BENCHMARKS})")
    args = parser.parse_args(argv)
    try:
        import omnimalloc  # noqa: F401
        with_omnimalloc = True
    except ImportError:
        print("omnimalloc is not installed (pip install -e '.[bench]'): its column is left out",
              file=sys.stderr)
        with_omnimalloc = False

    warm_up()  # compiling the search kernels is not what the budget is for
    instances = []
    if args.suite in ("standard", "all"):
        instances += onnx_instances() + csv_instances(args.benchmarks)
    if args.suite in ("hard", "all"):
        instances += hard_instances()
    if args.suite == "dense":
        instances += dense_instances()
    if args.only:
        instances = [i for i in instances if args.only in i.name]
    header = ["instance", "model", "buffers", "lower bound", "LB time"]
    header += [f"{a} gap, time" for a in planner.ALGORITHMS]
    if with_omnimalloc:
        header.append("omnimalloc best greedy")
        if args.omnimalloc_search:
            header.append("omnimalloc best search")
    header += ["best known", "search vs best"]
    rows = [header]
    for instance in instances:
        started = time.perf_counter()
        rows.append(measure(instance, args.budget, with_omnimalloc, args.omnimalloc_search))
        print(f"{instance.name}: {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    rows = [row + [""] * (len(header) - len(row)) for row in rows]
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(w) if c < 2 else cell.rjust(w)
                        for c, (cell, w) in enumerate(zip(row, widths))).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
