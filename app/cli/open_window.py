"""`slabscope [FILE]` (the `open` subcommand): the window on FILE, by default the built-in example."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from slabscope.app.examples import default_example


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope open`."""
    parser.add_argument("file", nargs="?", type=Path,
                        help="graph file (.json, .onnx, .csv) or session (.slabscope); "
                             "default: the relu(x @ w + b) example")


def run(args) -> int:
    """Open the window on the file and run the event loop until it closes.

    A file that cannot be opened is reported on stderr (exit 2) before any window appears.
    """
    from PySide6.QtWidgets import QApplication

    from slabscope import planner
    from slabscope.app.icon import application_icon
    from slabscope.app.qt_binding import require_sound_binding
    from slabscope.app.state.session import Session
    from slabscope.app.state.session_file import read_session
    from slabscope.app.window import SESSION_SUFFIX, MainWindow

    require_sound_binding()
    path = args.file or default_example()
    # Read (not plan) the file before any window appears, so a bad one is one line on stderr.
    if path.suffix == SESSION_SUFFIX:
        graph, graph_path, settings = read_session(path)
        if settings["in_place"]:  # saved with the In place switch on
            from slabscope.planner.conflicts.in_place import in_place

            settings["in_place"] = in_place(graph)
    else:
        graph, graph_path, settings = planner.load(path), path, {}
    graph.build_objects()  # now, not on the event loop's first walk over the buffers
    if QApplication.instance() is None:
        missing = _missing_display()
        if missing:
            raise planner.PlanError(missing)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("Slabscope")
    app.setApplicationName("Slabscope")
    app.setDesktopFileName("slabscope")  # matches assets/slabscope.desktop on Wayland
    app.setWindowIcon(application_icon())
    # Python's collector runs only on the GUI thread, from a timer, where Qt holds no lock: a
    # collection inside a Qt call that destroys a QObject can deadlock on Qt's own mutex.
    from pyqtgraph.util.garbage_collector import GarbageCollector

    collector = GarbageCollector(interval=1.0)  # noqa: F841 (kept alive by this frame)
    session = Session()
    window = MainWindow(session)
    session.show_session(graph, graph_path, settings)  # plans in the background
    window.planning.warm_up()  # then the other kernels, before anyone asks for search
    window.opened(path)
    window.show()
    return app.exec()


def _missing_display() -> str | None:
    """Why the window cannot open here, or None. Qt aborts the process (SIGABRT) when its X11
    or Wayland plugin finds no display, so this is checked before Qt is asked."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return ("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "`slabscope plan` and `slabscope export` need none")
