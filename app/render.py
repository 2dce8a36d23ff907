"""Headless rendering: build any view (or the whole window) offscreen over a session and write a
PNG, an SVG or both. Views are drawn in their export mode: no buttons, hints or pointer emphasis."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import (QCoreApplication, QEvent, QPoint, QSettings, QSize, Qt,
                            qInstallMessageHandler)
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QWidget

from slabscope.app.views.export.export_title import export_title
from slabscope.app.views.export.png_export import render_png, render_svg, title_height
from slabscope.planner import PlanError

VIEWS = ("slab", "map", "dag", "timeline", "compare", "window")
LAYOUT_WAIT_S = 5.0  # the longest an export waits for item views to lay out their rows
DEFAULT_SIZES = {"slab": QSize(1200, 420), "map": QSize(1200, 700), "dag": QSize(1000, 900),
                 "timeline": QSize(1200, 500), "compare": QSize(1400, 440),
                 "window": QSize(1600, 1000)}


def build_view(session, view: str, settings: QSettings | None = None) -> QWidget:
    """A new widget of kind `view` over `session` (each view module is imported on demand); a
    window keeps its layout and recent files in `settings` (default: the user's)."""
    if view == "slab":
        from slabscope.app.views.slab.slab_view import SlabView
        return SlabView(session)
    if view == "map":
        from slabscope.app.views.lifetimes.lifetime_view import LifetimeView
        return LifetimeView(session)
    if view == "dag":
        # The DAG, or live bytes over time for a chain of time steps, as the window's panel
        # shows it (a large DAG folded into groups, as the window folds it).
        from slabscope.app.views.dag.graph_panel import GraphPanel
        return GraphPanel(session)
    if view == "timeline":
        from slabscope.app.views.timeline.timeline_view import TimelineView
        return TimelineView(session)
    if view == "compare":
        # The session's graph against `session.compare_path`, compared here: an export waits.
        from slabscope.app.views.compare.compare_view import CompareView
        from slabscope.app.views.compare.comparison import compare_with
        from slabscope.planner.support.cancel import NEVER

        view_widget = CompareView()
        if session.graph is not None and session.compare_path is not None:
            name = str(session.path) if session.path else session.graph.name
            view_widget.show_comparison(compare_with(session.graph, name, session.compare_path, NEVER))
        return view_widget
    if view == "window":
        from slabscope.app.window import MainWindow
        return MainWindow(session, settings)
    raise PlanError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")


def export_view(session, view: str, path=None, scale: float = 1.0, size: QSize | None = None,
                svg=None) -> Path:
    """Build `view` over `session` offscreen at `size` (logical pixels, a title line included)
    and write it to the PNG `path` and/or the SVG `svg`; returns the PNG's path (the SVG's when
    there is no PNG).

    The picture depends only on the arguments: a window is built over blank settings, never the
    user's saved layout. Needs a QApplication; nothing appears on any screen.
    """
    if path is None and svg is None:
        raise PlanError("nothing to write: give a PNG or an SVG path")
    with tempfile.TemporaryDirectory(prefix="slabscope-export-") as blank:
        settings = QSettings(os.path.join(blank, "settings.ini"), QSettings.Format.IniFormat)
        widget = build_view(session, view, settings)
        try:
            widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
            size = size or DEFAULT_SIZES[view]
            title = export_title(session)
            asked = QSize(size.width(), max(1, size.height() - title_height(widget)))
            widget.resize(asked)
            widget.show()
            # Again once shown: a window lays its docks out on its first show, and before that
            # its minimum height is larger than it is then.
            widget.resize(asked)
            settle(widget)
            written = render_svg(widget, svg, title) if svg is not None else None
            return render_png(widget, path, scale, title) if path is not None else written
        finally:
            widget.close()
            widget.deleteLater()
            del settings, widget
            collect_qt_garbage()


def collect_qt_garbage() -> None:
    """Delete what was closed with deleteLater and collect Python's cycles now, at a point where
    Qt holds no lock. A collection that starts inside a Qt call (a signal's disconnect) and
    destroys a QObject of an earlier window there deadlocks on Qt's signal-slot mutex."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def settle(widget: QWidget) -> None:
    """Let layouts, resizes and any running layout tween finish so the picture is final."""
    app = QCoreApplication.instance()
    for _ in range(3):
        app.processEvents()
    # A window measures its levers (and other answers) in the background: the picture shows
    # them measured, as the window does once they are (a command's --timeout bounds the wait).
    executor = getattr(widget, "executor", None)
    while executor is not None and executor.running:
        app.processEvents()
        time.sleep(0.005)
    # Item views lay out long lists in batches on later timer ticks; a picture must not catch
    # one before its first rows are laid out, which draws no rows at all.
    deadline = time.monotonic() + LAYOUT_WAIT_S
    for view in widget.findChildren(QAbstractItemView):
        if isinstance(view, QHeaderView):
            continue  # a header has no rows of its own to wait for
        model = view.model()
        while (model is not None and model.rowCount() and view.isVisible()
               and not view.indexAt(QPoint(1, 1)).isValid() and time.monotonic() < deadline):
            app.processEvents()
            time.sleep(0.005)
    tween = getattr(widget, "tween", None)
    if tween is not None:
        tween.finish()
    app.processEvents()


def ensure_application() -> QApplication:
    """The running QApplication, or a new one (offscreen when there is no display to draw on)."""
    app = QApplication.instance()
    if app is None:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
            qInstallMessageHandler(_quiet_offscreen)
        app = QApplication(["slabscope"])
    return app


def _quiet_offscreen(mode, context, message) -> None:
    """Drop the offscreen platform's notice that it ignores window size hints; keep the rest."""
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)
