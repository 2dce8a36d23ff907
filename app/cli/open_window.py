"""`slabscope [FILE]` (the `open` subcommand): the window on FILE, by default the built-in example."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.examples import default_example


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

    import planner
    from app.session import Session
    from app.state.session import read_session
    from app.window import SESSION_SUFFIX, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("Slabscope")
    app.setApplicationName("Slabscope")
    path = args.file or default_example()
    # Read (not plan) the file before any window appears, so a bad one is one line on stderr.
    if path.suffix == SESSION_SUFFIX:
        graph, graph_path, settings = read_session(path)
    else:
        graph, graph_path, settings = planner.load(path), path, {}
    session = Session()
    window = MainWindow(session)
    window.planning.warm_up()
    session.set_graph(graph, graph_path, **settings)  # plans in the background
    window.opened(path)
    window.show()
    return app.exec()
