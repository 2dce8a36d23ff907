"""Times opening the DAG panel: the loading worker's step (layout, drawing, memory per node, edge
labels, the opening folding of a large graph) and what the GUI thread then spends, on densenet121
(ONNX) and generated transformers of about 3,000 and 10,000 nodes.

    QT_QPA_PLATFORM=offscreen python -m bench.dag_open_speed [--baseline DIR]

`--baseline DIR` measures another checkout (e.g. `git archive` of an older commit unpacked in a
folder) in a fresh process of its own and prints its figures beside these.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

INPUTS = (("densenet121 (ONNX)", "densenet", 0), ("transformer, 120 layers", "transformer", 120),
          ("transformer, 420 layers", "transformer", 420))
HOVERS = 10


def _graph(kind: str, layers: int):
    from slabscope import planner

    if kind == "densenet":
        import onnx

        return planner.load(Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" /
                            "light_densenet121.onnx")
    from slabscope.gpu.generators import transformer

    return planner.graph_from_dict(transformer(4, 8, 2, layers=layers))


def figures(kind: str, layers: int) -> dict:
    """The worker's seconds, then the GUI thread's: building the view and its first paint, the
    longest turn of the event loop until every item is in, and a hover with its repaint."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from slabscope.app.state.session import Session
    from slabscope.app.views.dag.dag_prepared import DrawingPreparer
    from slabscope.app.views.dag.dag_view import DagView

    graph = _graph(kind, layers)
    graph.build_objects()
    start = time.perf_counter()
    DrawingPreparer()(graph)  # what the loading worker does
    worker = time.perf_counter() - start
    session = Session()
    session.graph = graph  # drawn only: the plan is not what is timed
    start = time.perf_counter()
    view = DagView(session)
    view.resize(1000, 900)
    view.show()
    app.processEvents()
    view.viewport().repaint()
    first = time.perf_counter() - start
    turns = []
    while view.building:
        t = time.perf_counter()
        app.processEvents()
        turns.append(time.perf_counter() - t)
    names = [n.name for n in graph.nodes]
    hovers = []
    for name in names[:: max(1, len(names) // HOVERS)][:HOVERS]:
        t = time.perf_counter()
        view.simulate_hover(name)
        view.viewport().repaint()
        hovers.append(time.perf_counter() - t)
    return {"nodes": len(graph.nodes), "worker_s": worker, "first_paint_ms": first * 1000,
            "longest_turn_ms": max(turns, default=0.0) * 1000,
            "hover_ms": statistics.median(hovers) * 1000}


def _measure(tree: Path, kind: str, layers: int) -> dict:
    """`figures` in a fresh process of `tree`."""
    from bench.trees import python_path  # here: a measuring process runs this file alone

    code = (f"import json\nspace = {{'__name__': 'dag_open_speed'}}\n"
            f"exec(compile(open({__file__!r}).read(), {__file__!r}, 'exec'), space)\n"
            f"print(json.dumps(space['figures']({kind!r}, {layers})))\n")
    env = dict(os.environ, PYTHONPATH=python_path(tree))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    result = subprocess.run([sys.executable, "-c", code], cwd=python_path(tree), env=env,
                            capture_output=True, text=True, timeout=1800)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.stderr.write(result.stderr[-2000:])
    return json.loads(lines[-1]) if lines else {}


def main(argv=None) -> int:
    """Print one table: each measure here, and in the baseline checkout when given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this one")
    args = parser.parse_args(argv)
    trees = [("now", Path(__file__).resolve().parents[1])]
    if args.baseline:
        trees.append(("baseline", args.baseline.resolve()))
    print(f"{'input':<44}{'measure':<22}" + "".join(f"{name:>12}" for name, _ in trees))
    for label, kind, layers in INPUTS:
        results = [_measure(tree, kind, layers) for _, tree in trees]
        label = f"{label} ({results[0].get('nodes', 0):,} nodes)"
        for key, unit in (("worker_s", "s"), ("first_paint_ms", "ms"), ("longest_turn_ms", "ms"),
                          ("hover_ms", "ms")):
            cells = "".join(f"{r[key]:>10.2f} {unit:<1}" if key in r else f"{'-':>12}"
                            for r in results)
            print(f"{label:<44.44}{key:<22}{cells}")
            label = ""
    return 0


if __name__ == "__main__":
    sys.exit(main())
