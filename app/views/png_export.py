"""Drawing a widget into a PNG at a chosen scale (HiDPI aware), for the window's Export and the CLI."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from planner import PlanError

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
