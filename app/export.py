"""PNG export of any view, on screen or headless, at a chosen scale (HiDPI aware)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QPoint, QSize, Qt, qInstallMessageHandler
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from planner import PlanError

VIEWS = ("slab", "map", "dag", "timeline", "window")
DEFAULT_SIZES = {"slab": QSize(1200, 420), "map": QSize(1200, 700), "dag": QSize(1000, 900),
                 "timeline": QSize(1200, 500), "window": QSize(1600, 1000)}
MAX_PIXELS = 16384  # per side; larger images are slow and many viewers refuse them


def render_image(widget: QWidget, scale: float = 1.0) -> QImage:
    """`widget` drawn into an image of its size times `scale` pixels (device pixel ratio `scale`).

    Drawing through a device pixel ratio keeps text and lines sharp rather than scaling a bitmap.
    """
    if scale <= 0:
        raise PlanError(f"scale must be positive, got {scale:g}")
    width, height = round(widget.width() * scale), round(widget.height() * scale)
    if max(width, height) > MAX_PIXELS:
        raise PlanError(f"image of {width} x {height} pixels is too large (at most {MAX_PIXELS} a side)")
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        # QWidget's own render: QGraphicsView subclasses overload it to draw only their scene.
        QWidget.render(widget, painter, QPoint())
    finally:
        painter.end()
    return image


def render_png(widget: QWidget, path, scale: float | None = None) -> Path:
    """Write `widget` to `path` as PNG at `scale` (default: the screen's device pixel ratio)."""
    scale = widget.devicePixelRatioF() if scale is None else scale
    image = render_image(widget, scale)
    path = Path(path)
    if not image.save(str(path), "PNG"):
        raise PlanError(f"cannot write PNG {path}")
    return path


def build_view(session, view: str) -> QWidget:
    """A new widget of kind `view` over `session` (each view module is imported on demand)."""
    if view == "slab":
        from .slab_view import SlabView
        return SlabView(session)
    if view == "map":
        from .lifetime_view import LifetimeView
        return LifetimeView(session)
    if view == "dag":
        from .dag_view import DagView
        return DagView(session)
    if view == "timeline":
        from .timeline_view import TimelineView
        return TimelineView(session)
    if view == "window":
        from .window import MainWindow
        return MainWindow(session)
    raise PlanError(f"unknown view {view!r}; choose from {', '.join(VIEWS)}")


def export_view(session, view: str, path, scale: float = 1.0, size: QSize | None = None) -> Path:
    """Build `view` over `session` offscreen at `size` (logical pixels) and write it to `path`.

    Needs a QApplication; the widget is laid out and drawn without appearing on any screen.
    """
    widget = build_view(session, view)
    try:
        widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
        widget.resize(size or DEFAULT_SIZES[view])
        widget.show()
        _settle(widget)
        return render_png(widget, path, scale)
    finally:
        widget.close()
        widget.deleteLater()


def _settle(widget: QWidget) -> None:
    """Let layouts, resizes and any running layout tween finish so the picture is final."""
    app = QCoreApplication.instance()
    for _ in range(3):
        app.processEvents()
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
