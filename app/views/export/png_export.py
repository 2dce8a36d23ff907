"""Drawing a widget into a PNG at a chosen scale (HiDPI aware) or an SVG, for the window's Export
and the CLI; a view that has an export mode (`enter_export`/`leave_export`) is drawn in it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QWidget

from slabscope.planner import PlanError
from slabscope.planner.support.atomic_write import check_output, write_atomic

MAX_PIXELS = 16384  # per side; larger images are slow and many viewers refuse them
TITLE_PADDING = 10  # pixels above and below the title line, together
TITLE_COLOR = QColor("#1D2330")


def title_height(widget: QWidget) -> int:
    """The height in logical pixels of the title line drawn above `widget` in a picture."""
    return QFontMetrics(widget.font()).height() + TITLE_PADDING


def _draw_title(painter: QPainter, widget: QWidget, title: str) -> None:
    """`title` on one line across the top, elided at the right if the picture is narrow."""
    metrics = QFontMetrics(widget.font())
    painter.setFont(widget.font())
    painter.setPen(TITLE_COLOR)
    text = metrics.elidedText(title, Qt.TextElideMode.ElideRight, widget.width() - 12)
    painter.drawText(QRect(6, 0, widget.width() - 12, title_height(widget)),
                     Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)


def render_image(widget: QWidget, scale: float = 1.0, title: str | None = None) -> QImage:
    """`widget` drawn into an image of its size times `scale` pixels (device pixel ratio `scale`),
    under a line of `title` when one is given (the image is that much taller).

    Drawing through a device pixel ratio keeps text and lines sharp rather than scaling a bitmap.
    """
    if scale <= 0:
        raise PlanError(f"scale must be positive, got {scale:g}")
    top = title_height(widget) if title else 0
    width, height = round(widget.width() * scale), round((widget.height() + top) * scale)
    if max(width, height) > MAX_PIXELS:
        raise PlanError(f"image of {width} x {height} pixels is too large (at most {MAX_PIXELS} a side)")
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        if title:
            _draw_title(painter, widget, title)
        # QWidget's own render: QGraphicsView subclasses overload it to draw only their scene.
        QWidget.render(widget, painter, QPoint(0, top))
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


def render_png(widget: QWidget, path, scale: float | None = None, title: str | None = None) -> Path:
    """Write `widget` to `path` as PNG at `scale` (default: the screen's device pixel ratio),
    under a line of `title` when one is given, through a temporary file renamed into place
    (`planner.support.atomic_write`)."""
    scale = widget.devicePixelRatioF() if scale is None else scale
    path = Path(path)
    check_output(path, "PNG")  # before drawing, which can take long
    with export_mode(widget):
        image = render_image(widget, scale, title)
    encoded = QByteArray()
    device = QBuffer(encoded)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(device, "PNG"):
        raise PlanError(f"cannot write PNG {path}: the image could not be encoded")
    device.close()
    write_atomic(path, encoded.data(), "PNG")
    return path


def render_svg(widget: QWidget, path, title: str | None = None) -> Path:
    """Write `widget` to `path` as SVG (vector shapes and text where the widget paints them),
    under a line of `title` when one is given, through a temporary file renamed into place."""
    from PySide6.QtSvg import QSvgGenerator

    path = Path(path)
    check_output(path, "SVG")
    encoded = QByteArray()
    device = QBuffer(encoded)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    with export_mode(widget):
        top = title_height(widget) if title else 0
        size = QSize(widget.width(), widget.height() + top)
        generator = QSvgGenerator()
        generator.setOutputDevice(device)
        generator.setSize(size)
        generator.setViewBox(QRect(QPoint(), size))
        generator.setTitle(title or widget.windowTitle() or "Slabscope")
        painter = QPainter(generator)
        try:
            if title:
                _draw_title(painter, widget, title)
            QWidget.render(widget, painter, QPoint(0, top))
        finally:
            painter.end()
    device.close()
    if encoded.isEmpty():
        raise PlanError(f"cannot write SVG {path}: nothing was drawn")
    write_atomic(path, encoded.data(), "SVG")
    return path
