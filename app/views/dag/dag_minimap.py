"""The DAG's overview: the whole graph in a corner thumbnail, with the part on show framed.

Clicking or dragging in it centres the main view there. The thumbnail is drawn once per graph,
off the GUI thread, with the rest of the drawing (`dag_drawing.thumbnail`), so hovering and
panning only repaint the frame.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsView, QWidget

MAX_SIZE = QSize(170, 170)    # pixels; the thumbnail keeps the graph's aspect within this
MIN_SIDE = 36                 # a very tall or wide graph still gets a usable strip
MARGIN = 10                   # from the view's corner
FRAME = QColor("#D62728")
BACKGROUND = QColor(250, 250, 252, 235)  # the thumbnail's, nearly opaque


class DagMinimap(QWidget):
    """A thumbnail of `view`'s scene in its bottom-right corner, framing the visible part.

    Hidden while the whole scene is already in view (nothing to navigate to), and while the
    user has switched it off (`set_wanted`): after panning it can cover boxes.
    """

    def __init__(self, view: QGraphicsView):
        super().__init__(view)
        self.view = view
        self._pixmap = QPixmap()
        self._scene_rect = QRectF()
        self.wanted = True
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        view.horizontalScrollBar().valueChanged.connect(self.refresh)
        view.verticalScrollBar().valueChanged.connect(self.refresh)
        self.hide()

    def rebuild(self, thumbnail: QImage | None) -> None:
        """Show `thumbnail` of the view's scene (after the graph changed; None: no graph) and
        place the overview."""
        self._scene_rect = QRectF(self.view.sceneRect())
        if thumbnail is None or thumbnail.isNull() or self._scene_rect.isEmpty():
            self._pixmap = QPixmap()
            self.hide()
            return
        self._pixmap = QPixmap.fromImage(thumbnail)
        self.resize(self._pixmap.size())
        self.refresh()

    def set_wanted(self, wanted: bool) -> None:
        """Show the overview where it helps (True), or never (False)."""
        self.wanted = wanted
        self.refresh()
        if not wanted:
            self.hide()

    def visible_scene_rect(self) -> QRectF:
        """The part of the scene the main view shows now."""
        return self.view.mapToScene(self.view.viewport().rect()).boundingRect()

    def refresh(self, *_) -> None:
        """Re-place the overview in the corner, and show it only when part of the graph is hidden."""
        if self._pixmap.isNull():
            return
        port = self.view.viewport().geometry()
        self.move(port.right() - self.width() - MARGIN, port.bottom() - self.height() - MARGIN)
        shown = self.visible_scene_rect()
        # A few per cent hidden at the edges (rounding, margins) is still "the whole graph".
        inset_x, inset_y = self._scene_rect.width() * 0.03, self._scene_rect.height() * 0.03
        whole = shown.contains(self._scene_rect.adjusted(inset_x, inset_y, -inset_x, -inset_y))
        self.setVisible(self.wanted and not whole and port.width() > 2 * self.width()
                        and not getattr(self.view, "exporting", False))
        self.update()

    def _to_scene(self, point: QPointF) -> QPointF:
        target = self._target_rect()
        rect = self._scene_rect
        return QPointF(rect.left() + (point.x() - target.left()) / target.width() * rect.width(),
                       rect.top() + (point.y() - target.top()) / target.height() * rect.height())

    def _target_rect(self) -> QRectF:
        """Where the scene lands inside the thumbnail (centred, aspect kept)."""
        rect, box = self._scene_rect, QRectF(self.rect())
        scale = min(box.width() / rect.width(), box.height() / rect.height())
        target = QRectF(0, 0, rect.width() * scale, rect.height() * scale)
        target.moveCenter(box.center())
        return target

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._pixmap)
        painter.setPen(QPen(QColor("#9099A8"), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        target, rect = self._target_rect(), self._scene_rect
        shown = self.visible_scene_rect().intersected(rect)
        sx, sy = target.width() / rect.width(), target.height() / rect.height()
        frame = QRectF(target.left() + (shown.left() - rect.left()) * sx,
                       target.top() + (shown.top() - rect.top()) * sy,
                       max(3.0, shown.width() * sx), max(3.0, shown.height() * sy))
        painter.setPen(QPen(FRAME, 1.5))
        painter.drawRect(frame)
        painter.end()

    def mousePressEvent(self, event) -> None:
        self.view.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.view.centerOn(self._to_scene(event.position()))
