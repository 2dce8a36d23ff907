"""Times the panels at real scale: the slab bar and lifetime map on idealloc's Y_1 (62,185
buffers), the DAG on densenet121, and headless exports of each view of Y_1.

    QT_QPA_PLATFORM=offscreen python -m bench.views_speed [--baseline DIR] [--no-export]

`--baseline DIR` runs the same measurements in another checkout (e.g. a `git worktree` of an
older commit) in a subprocess and prints its figures beside these. Each measurement of a tree
runs in a fresh process so that caches from one do not help another.
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

from bench.trees import python_path

Y_1 = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "idealloc" / "Y_1.csv"
EXPORT_VIEWS = ("slab", "map", "dag", "window")
HOVERS = 10


def densenet_path() -> Path:
    """densenet121 as shipped (weights stripped) in the onnx package's backend test data."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_densenet121.onnx"


def _panel_figures(kind: str, path: Path) -> dict:
    """First paint (after the plan) and hover of one panel over `path`, in this process."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from slabscope.app.state.session import Session

    session = Session()
    session.open(path)
    app.processEvents()
    if kind == "dag":
        from slabscope.app.views.dag.dag_view import DagView as View
        size = (1000, 900)
    elif kind == "slab":
        from slabscope.app.views.slab.slab_view import SlabView as View
        size = (1200, 420)
    else:
        from slabscope.app.views.lifetimes.lifetime_view import LifetimeView as View
        size = (1200, 700)
    start = time.perf_counter()
    view = View(session)
    view.resize(*size)
    view.show()
    app.processEvents()
    view.repaint()
    first = time.perf_counter() - start
    figures = {"first_paint_s": first}
    if kind == "dag":
        fits = []
        for _ in range(3):
            t = time.perf_counter()
            view.fit()
            view.viewport().repaint()
            fits.append(time.perf_counter() - t)
        figures["fit_paint_ms"] = statistics.median(fits) * 1000
        names = [n.name for n in session.graph.nodes]
        hover = lambda name: view.simulate_hover(name)  # noqa: E731
        paint = view.viewport().repaint
    else:
        names = [p.name for p in session.plan.placements]
        hover = session.hover_buffer
        paint = view.repaint
    samples = []
    for name in names[:: max(1, len(names) // HOVERS)][:HOVERS]:
        t = time.perf_counter()
        hover(name)  # every listener runs now (direct signals) ...
        paint()      # ... and the panel paints once, as the next frame would
        samples.append(time.perf_counter() - t)
        app.processEvents()
    figures["hover_ms"] = statistics.median(samples) * 1000
    figures["hover_max_ms"] = max(samples) * 1000
    return figures


def _export_seconds(tree: Path, view: str) -> float | None:
    """Wall time of `slabscope export Y_1 --view VIEW` run in `tree` (None when it fails)."""
    out = Path("/tmp") / f"views_speed_{os.getpid()}_{view}.png"
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", "export", str(Y_1), "--view", view,
                             "--png", str(out)], cwd=python_path(tree), env=_env(tree), capture_output=True,
                            text=True, timeout=600)
    out.unlink(missing_ok=True)
    return time.perf_counter() - start if result.returncode == 0 else None


def _env(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=python_path(tree))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def _measure(tree: Path, kind: str, path: Path) -> dict:
    """`_panel_figures` in a fresh process of `tree`."""
    # This file's functions, run over `tree`'s app (an older checkout may lack this script).
    code = (f"import json; from pathlib import Path\n"
            f"space = {{'__name__': 'views_speed', '__file__': {__file__!r}}}\n"
            f"exec(compile(open({__file__!r}).read(), {__file__!r}, 'exec'), space)\n"
            f"print(json.dumps(space['_panel_figures']({kind!r}, Path({str(path)!r}))))\n")
    script = Path("/tmp") / f"views_speed_{os.getpid()}.py"
    script.write_text(code)
    try:
        result = subprocess.run([sys.executable, str(script)], cwd=tree, env=_env(tree),
                                capture_output=True, text=True, timeout=900)
    finally:
        script.unlink(missing_ok=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def main(argv=None) -> int:
    """Print one table: each measure here, and in the baseline checkout when given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--no-export", action="store_true", help="skip the headless exports")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    trees = [("now", here)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    rows: list[tuple[str, str, list[str]]] = []
    panels = (("Y_1 slab bar", "slab", Y_1, "< 2 s, < 30 ms"), ("Y_1 lifetime map", "map", Y_1,
              "< 2 s, < 30 ms"), ("densenet121 DAG", "dag", densenet_path(), "< 300 ms, < 30 ms"))
    for label, kind, path, goal in panels:
        figures = [_measure(tree, kind, path) for _, tree in trees]
        if kind == "dag":
            rows.append((f"{label}: fit and paint", goal.split(",")[0],
                         [f"{f.get('fit_paint_ms', float('nan')):.1f} ms" for f in figures]))
        else:
            rows.append((f"{label}: first paint after the plan", goal.split(",")[0],
                         [f"{f.get('first_paint_s', float('nan')):.2f} s" for f in figures]))
        rows.append((f"{label}: hover (median, max)", goal.split(",")[1].strip(),
                     [f"{f.get('hover_ms', float('nan')):.1f} ms, {f.get('hover_max_ms', float('nan')):.1f}"
                      for f in figures]))
    if not args.no_export:
        for view in EXPORT_VIEWS:
            times = [_export_seconds(tree, view) for _, tree in trees]
            rows.append((f"export Y_1 --view {view} (load, plan, draw)", "< 20 s",
                         ["failed" if t is None else f"{t:.1f} s" for t in times]))
    names = [name for name, _ in trees]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'goal':<10}  " + "  ".join(f"{n:>16}" for n in names))
    for label, goal, values in rows:
        print(f"{label:<{width}}  {goal:<10}  " + "  ".join(f"{v:>16}" for v in values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
