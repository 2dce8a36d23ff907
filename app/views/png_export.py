"""Drawing a widget into a PNG at a chosen scale (HiDPI aware) or an SVG, for the window's Export
and the CLI; a view that has an export mode (`enter_export`/`leave_export`) is drawn in it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from planner import PlanError
from planner.atomic_write import check_output, write_atomic

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
    """Write `widget` to `path` as PNG at `scale` (default: the screen's device pixel ratio),
    through a temporary file renamed into place (`planner.atomic_write`)."""
    scale = widget.devicePixelRatioF() if scale is None else scale
    path = Path(path)
    check_output(path, "PNG")  # before drawing, which can take long
    with export_mode(widget):
        image = render_image(widget, scale)
    encoded = QByteArray()
    device = QBuffer(encoded)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(device, "PNG"):
        raise PlanError(f"cannot write PNG {path}: the image could not be encoded")
    device.close()
    write_atomic(path, encoded.data(), "PNG")
    return path


def render_svg(widget: QWidget, path) -> Path:
    """Write `widget` to `path` as SVG (vector shapes and text where the widget paints them),
    through a temporary file renamed into place."""
    from PySide6.QtSvg import QSvgGenerator

    path = Path(path)
    check_output(path, "SVG")
    encoded = QByteArray()
    device = QBuffer(encoded)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    with export_mode(widget):
        size = QSize(widget.width(), widget.height())
        generator = QSvgGenerator()
        generator.setOutputDevice(device)
        generator.setSize(size)
        generator.setViewBox(QRect(QPoint(), size))
        generator.setTitle(widget.windowTitle() or "Slabscope")
        painter = QPainter(generator)
        try:
            QWidget.render(widget, painter, QPoint())
        finally:
            painter.end()
    device.close()
    if encoded.isEmpty():
        raise PlanError(f"cannot write SVG {path}: nothing was drawn")
    write_atomic(path, encoded.data(), "SVG")
    return path
