"""Times the window on large graphs: how long the event loop stalls, and how long until a plan shows.

    QT_QPA_PLATFORM=offscreen python -m bench.app_speed [GRAPH ...] [--shots DIR] [--search NAME]
        [--transformer LAYERS]

A QTimer ticks every 5 ms while each action runs; "stall" is the longest gap between two ticks,
i.e. the longest stretch the window could not repaint or take input. "GUI CPU" is the most CPU
time the GUI thread spent between two ticks: the same stall without the waits of a busy machine
(other processes, the planning worker holding the GIL), so it compares runs on a loaded host. "time" runs from
the action to its plan drawn (the plan arrived and one more turn of the event loop). GRAPHs
default to densenet121 from the onnx package's test data and, when ../shared/benchmarks is
there, the idealloc traces pangu_2.6B and Y_1 and MiniMalloc's K (where the Plan menu also
switches to search). Prints a table; goals: no stall over 100 ms, pangu drawn in 3 s, Y_1 in
10 s, undo and redo back in 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
TICK_MS = 5
DEFAULT_SEARCH = ("K.1048576",)


def densenet_path() -> Path:
    """densenet121 as shipped (weights stripped) in the onnx package's backend test data."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_densenet121.onnx"


def default_graphs() -> list[Path]:
    """densenet121, and the shared traces that are present."""
    shared = [SHARED / "idealloc" / "pangu_2.6B.csv", SHARED / "idealloc" / "Y_1.csv",
              SHARED / "minimalloc" / "K.1048576.csv"]
    return [densenet_path()] + [p for p in shared if p.exists()]


def settled(session) -> bool:
    """Whether the session has a plan for its settings and nothing running (a synchronous
    session is always settled once its call returns)."""
    return session.plan is not None and getattr(session, "busy", None) is None


def measure(action, done, timeout: float) -> tuple[float, float, float]:
    """Run `action` from the event loop and keep the loop turning until `done()` has held for
    one more tick; (seconds to that tick, longest gap between 5 ms ticks in seconds, most GUI
    thread CPU seconds between two ticks)."""
    from PySide6.QtCore import QEventLoop, Qt, QTimer

    loop, timer = QEventLoop(), QTimer()
    timer.setInterval(TICK_MS)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    state = {"start": time.perf_counter(), "last": time.perf_counter(), "longest": 0.0,
             "seen": False, "end": None, "cpu_last": time.thread_time(), "cpu": 0.0}

    def tick():
        now, cpu = time.perf_counter(), time.thread_time()
        state["longest"] = max(state["longest"], now - state["last"])
        state["cpu"] = max(state["cpu"], cpu - state["cpu_last"])
        state["last"], state["cpu_last"] = now, cpu
        if state["seen"] or now - state["start"] > timeout:
            state["end"] = now
            loop.quit()
        state["seen"] = done()  # quit on the next tick: the views have painted in between

    timer.timeout.connect(tick)
    timer.start()
    QTimer.singleShot(0, action)
    loop.exec()
    timer.stop()
    return state["end"] - state["start"], state["longest"], state["cpu"]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def time_graph(window, path: Path, search: bool, timeout: float) -> None:
    """Open `path` in `window`, reorder, undo, redo (and switch to search); print a row each."""
    from PySide6.QtWidgets import QApplication

    session = window.session
    wait = lambda: settled(session)  # noqa: E731

    def row(what: str, seconds: float, stall: float, cpu: float, note: str = "") -> None:
        print(f"  {path.stem:<18} {what:<26} {_ms(seconds):>10} {_ms(stall):>10} {_ms(cpu):>10}"
              f"  {note}", flush=True)

    seconds, stall, cpu = measure(lambda: window.open_path(path), wait, timeout)
    graph = session.graph
    row("open, plan drawn", seconds, stall, cpu,
        f"{len(graph.buffers):,} buffers, {len(graph.nodes):,} nodes")
    first = session.plan

    order = list(session.order)
    moved = order[len(order) // 2]
    seconds, stall, cpu = measure(lambda: window.request_list.model.move_names([moved], 0), wait,
                                  timeout)
    row("reorder (drop a row)", seconds, stall, cpu)
    reordered = session.plan

    seconds, stall, cpu = measure(session.undo_stack.undo, wait, timeout)
    row("undo the reorder", seconds, stall, cpu,
        "same plan" if session.plan is first else "re-planned")
    seconds, stall, cpu = measure(session.undo_stack.redo, wait, timeout)
    row("redo", seconds, stall, cpu, "same plan" if session.plan is reordered else "re-planned")

    names = [n.name for n in graph.nodes]
    hovers, hover_cpu = [], []
    for name in names[:: max(1, len(names) // 10)]:
        _seconds, stall, cpu = measure(lambda n=name: window.dag_view.simulate_hover(n),
                                       lambda: True, timeout)
        hovers.append(stall)
        hover_cpu.append(cpu)
    window.dag_view.simulate_hover(None)
    row("hover a node (longest of 10)", statistics.median(hovers), max(hovers), max(hover_cpu),
        "time: median")

    if search:
        before = session.plan
        seconds, stall, cpu = measure(window.algorithm_actions["search"].trigger, wait, timeout)
        row("Plan > Algorithm > search", seconds, stall, cpu, f"{session.plan.slab_bytes:,} B")
        seconds, stall, cpu = measure(session.undo_stack.undo, wait, timeout)
        row("undo the search", seconds, stall, cpu,
            "same plan" if session.plan is before else "re-planned")
        seconds, stall, cpu = measure(session.undo_stack.redo, wait, timeout)
        row("redo the search", seconds, stall, cpu, f"{session.plan.slab_bytes:,} B")
    session.undo_stack.setClean()
    QApplication.instance().processEvents()


def _transformer_file(layers: int) -> Path:
    """A generated transformer of `layers` blocks written to a temporary JSON file."""
    import tempfile

    from slabscope.gpu.generators import transformer, write_graph

    path = Path(tempfile.mkdtemp(prefix="app_speed_")) / f"transformer{layers}.json"
    write_graph(transformer(16, 32, 2, layers=layers), path)
    return path


def main(argv=None) -> int:
    """Time each GRAPH in one window and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", type=Path)
    parser.add_argument("--search", action="append",
                        help="graph stems where search is also timed (default: K.1048576)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per action at most")
    parser.add_argument("--shots", type=Path, help="save window and panel screenshots here")
    parser.add_argument("--transformer", type=int, metavar="LAYERS",
                        help="also time a generated transformer of LAYERS blocks (440: 10,562 "
                             "nodes, the size whose DAG layout once froze the window)")
    args = parser.parse_args(argv)
    graphs = list(args.graphs or default_graphs())
    if args.transformer:
        graphs.append(_transformer_file(args.transformer))
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    window = MainWindow(Session())
    window.show()
    app.processEvents()
    planning = getattr(window, "planning", None)
    if planning is not None:  # what the app does at start: kernels compile on the worker
        planning.warm_up()
        measure(lambda: None, lambda: not planning.running, 120)
    searched = set(args.search or DEFAULT_SEARCH)
    print(f"  {'graph':<18} {'action':<26} {'time':>10} {'stall':>10} {'GUI CPU':>10}  note")
    for path in graphs:
        time_graph(window, path, path.stem in searched, args.timeout)
        if args.shots:
            args.shots.mkdir(parents=True, exist_ok=True)
            window.grab().save(str(args.shots / f"{path.stem}_window.png"))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
