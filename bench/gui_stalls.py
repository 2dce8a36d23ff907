"""Profiles what the GUI thread runs in its longest stalls while the window opens a graph.

    QT_QPA_PLATFORM=offscreen python -m bench.gui_stalls GRAPH [--transformer LAYERS] [--top N]
        [--hover] [--cpu] [--rank cpu]

A 5 ms timer restarts a cProfile profiler (GUI thread only) at every tick, so each profile covers
exactly one gap between two ticks; the longest gaps' profiles are printed, heaviest functions by
cumulative time first, after where the other threads were as each gap ended (a gap the GUI
thread spent waiting for the GIL shows little of its own). `--hover` also profiles hovering ten nodes of the DAG.
`--rank cpu` keeps the gaps in which the GUI thread itself ran longest (what a busy machine
stretches least) and heads each with what Qt entered Python for (paint events, delivered
outcomes, ...) and how much of the gap's CPU time those Python calls took: the rest ran in Qt's
C++ (layouts, text, painting of plain widgets).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

from bench.app_speed import TICK_MS, _transformer_file, settled


def profile_ticks(action, done, timeout: float, keep: int, cpu: bool = False,
                  rank: str = "wall") -> list[tuple[float, pstats.Stats]]:
    """Run `action` from the event loop until `done()` has held for a tick; the `keep` longest
    gaps between ticks as (seconds, profile of the GUI thread over that gap, timed by the
    thread's CPU time when `cpu`, else by the clock). With `rank` "cpu" the gaps kept, and the
    seconds given, are those of the GUI thread's own CPU time."""
    timer_of = (lambda: cProfile.Profile(time.thread_time)) if cpu else cProfile.Profile
    from PySide6.QtCore import QEventLoop, Qt, QTimer

    loop, timer = QEventLoop(), QTimer()
    timer.setInterval(TICK_MS)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    worst: list[tuple[float, pstats.Stats]] = []
    state = {"start": time.perf_counter(), "last": time.perf_counter(), "seen": False,
             "profile": timer_of(), "cpu": time.thread_time()}

    def tick():
        state["profile"].disable()
        now = time.perf_counter()
        gap = now - state["last"] if rank == "wall" else time.thread_time() - state["cpu"]
        if len(worst) < keep or gap > worst[-1][0]:
            stats = pstats.Stats(state["profile"])
            stats.other_threads = _other_threads()  # where the workers were as the gap ended
            if rank == "cpu":
                stats.other_threads += entered_from_qt(stats, gap)
            worst.append((gap, stats))
            worst.sort(key=lambda pair: -pair[0])
            del worst[keep:]
        if state["seen"] or now - state["start"] > timeout:
            loop.quit()
            return
        state["seen"] = done()
        state["profile"] = timer_of()
        state["last"], state["cpu"] = time.perf_counter(), time.thread_time()
        state["profile"].enable()

    timer.timeout.connect(tick)
    timer.start()
    QTimer.singleShot(0, action)
    state["profile"].enable()
    loop.exec()
    state["profile"].disable()
    timer.stop()
    return worst


def entered_from_qt(stats: pstats.Stats, cpu: float, shown: int = 10) -> list[str]:
    """The functions of a gap's profile that no profiled Python called (Qt entered them from
    C++: slots, event handlers, paint), heaviest first, and how much of the gap's `cpu`
    seconds they account for, one line each."""
    entries = sorted(((cumulative, calls, func) for func, (_, calls, _, cumulative, callers)
                      in stats.stats.items() if not callers), reverse=True)
    total = sum(cumulative for cumulative, _, _ in entries)
    lines = [f"   Python entered from Qt: {total * 1000:,.1f} ms of {cpu * 1000:,.1f} ms CPU "
             "(as profiled)"]
    for cumulative, calls, (path, line, name) in entries[:shown]:
        lines.append(f"   {cumulative * 1000:8.1f} ms x{calls:<6} {Path(path).name}:{line} {name}")
    return lines


def _other_threads() -> list[str]:
    """The innermost frames (ours, else any) of every thread but this one, one line each."""
    import threading
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    lines = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        stack = traceback.extract_stack(frame)
        ours = [f for f in stack if "/site-packages/" not in f.filename
                and not f.filename.startswith("<frozen")] or stack
        where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in ours[-3:][::-1])
        lines.append(f"   [{names.get(ident, ident)}] {where}")
    return lines


def report(title: str, worst: list[tuple[float, pstats.Stats]], lines: int,
           only: str = "") -> None:
    """Print each kept gap and its heaviest functions (those whose file matches `only`)."""
    for gap, stats in worst:
        out = io.StringIO()
        stats.stream = out
        stats.sort_stats("cumulative").print_stats(*([only] if only else []), lines)
        body = [line for line in out.getvalue().splitlines() if line.strip()][-lines - 1:]
        print(f"== {title}: gap {gap * 1000:,.0f} ms")
        print("\n".join(getattr(stats, "other_threads", [])))
        print("\n".join(body))


def main(argv=None) -> int:
    """Open each GRAPH in one window and print the profiles of its longest stalls."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graphs", nargs="*", type=Path)
    parser.add_argument("--transformer", type=int, metavar="LAYERS")
    parser.add_argument("--top", type=int, default=2, help="how many of the longest gaps")
    parser.add_argument("--lines", type=int, default=30, help="functions shown per gap")
    parser.add_argument("--hover", action="store_true", help="also profile hovering nodes")
    parser.add_argument("--only", default="", help="show only functions whose file matches this")
    parser.add_argument("--cpu", action="store_true",
                        help="time functions by the GUI thread's CPU time (leaves out waits for "
                             "the GIL and the machine)")
    parser.add_argument("--rank", choices=("wall", "cpu"), default="wall",
                        help="keep the gaps longest by the clock (default) or by the GUI "
                             "thread's own CPU time, headed by what Qt entered Python for")
    args = parser.parse_args(argv)
    graphs = list(args.graphs)
    if args.transformer:
        graphs.append(_transformer_file(args.transformer))
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    window = MainWindow(Session())
    window.show()
    app.processEvents()
    window.planning.warm_up()
    profile_ticks(lambda: None, lambda: not window.planning.running, 120, 1)
    for path in graphs:
        worst = profile_ticks(lambda p=path: window.open_path(p),
                              lambda: settled(window.session), 120, args.top, args.cpu,
                              args.rank)
        report(f"open {path.stem}", worst, args.lines, args.only)
        if args.hover:
            names = [n.name for n in window.session.graph.nodes]
            worst = []
            for name in names[:: max(1, len(names) // 10)]:
                worst += profile_ticks(lambda n=name: window.dag_view.simulate_hover(n),
                                       lambda: True, 10, 1, args.cpu, args.rank)
            worst.sort(key=lambda pair: -pair[0])
            report(f"hover {path.stem}", worst[: args.top], args.lines, args.only)
        window.session.undo_stack.setClean()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
