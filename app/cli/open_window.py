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
    from app.window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName("Slabscope")
    app.setApplicationName("Slabscope")
    session = Session()
    errors: list[str] = []
    session.sigError.connect(errors.append)
    path = args.file or default_example()
    window = MainWindow(session)
    if not window.open_path(path):
        window.deleteLater()
        raise planner.PlanError(errors[0] if errors else f"cannot open {path}")
    session.sigError.disconnect(errors.append)
    window.show()
    return app.exec()
