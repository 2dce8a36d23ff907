"""Drawing a widget into a PNG at a chosen scale (HiDPI aware) or an SVG, for the window's Export
and the CLI; a view that has an export mode (`enter_export`/`leave_export`) is drawn in it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from slabscope.planner import PlanError

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


@contextmanager
def export_mode(widget: QWidget):
    """`widget` without its buttons, hints and pointer emphasis while the block runs, when it
    knows how (a view with `enter_export` and `leave_export`); as it is otherwise."""
    enter, leave = getattr(widget, "enter_export", None), getattr(widget, "leave_export", None)
    if enter is None or leave is None:
        yield widget
        return
    enter()
    _settle_layout(widget)
    try:
        yield widget
    finally:
        leave()


def _settle_layout(widget: QWidget) -> None:
    """Apply the layout now, so hidden controls leave no gap in the picture."""
    from PySide6.QtCore import QCoreApplication

    layout = widget.layout()
    if layout is not None:
        layout.activate()
    QCoreApplication.processEvents()


def render_png(widget: QWidget, path, scale: float | None = None) -> Path:
    """Write `widget` to `path` as PNG at `scale` (default: the screen's device pixel ratio)."""
    scale = widget.devicePixelRatioF() if scale is None else scale
    path = Path(path)
    with export_mode(widget):
        image = render_image(widget, scale)
    if not image.save(str(path), "PNG"):
        raise PlanError(f"cannot write PNG {path}")
    return path


def render_svg(widget: QWidget, path) -> Path:
    """Write `widget` to `path` as SVG (vector shapes and text where the widget paints them)."""
    from PySide6.QtSvg import QSvgGenerator

    path = Path(path)
    if not path.parent.is_dir():
        raise PlanError(f"cannot write SVG {path}: no folder {path.parent}")
    with export_mode(widget):
        size = QSize(widget.width(), widget.height())
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(size)
        generator.setViewBox(QRect(QPoint(), size))
        generator.setTitle(widget.windowTitle() or "Slabscope")
        painter = QPainter(generator)
        try:
            QWidget.render(widget, painter, QPoint())
        finally:
            painter.end()
    if not path.is_file() or path.stat().st_size == 0:
        raise PlanError(f"cannot write SVG {path}")
    return path
