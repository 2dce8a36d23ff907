"""A translucent veil over a panel whose content is being recomputed, saying what is running.

The panel underneath stays visible (dimmed) and usable: the veil lets mouse events through.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QWidget

VEIL = QColor(255, 255, 255, 150)
BADGE = QColor(40, 40, 40, 215)


class BusyOverlay(QWidget):
    """Covers `panel` while `set_text(text)` has a text; hidden after `set_text(None)`."""

    def __init__(self, panel: QWidget):
        super().__init__(panel)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.text = ""
        panel.installEventFilter(self)
        self.hide()

    def set_text(self, text: str | None) -> None:
        """Show the veil with `text` in a badge, or hide it on None."""
        if text is None:
            self.hide()
            return
        self.text = text
        self.setGeometry(self.parentWidget().rect())
        self.raise_()
        self.show()
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.parentWidget():
            self.setGeometry(self.parentWidget().rect())
        return False

    def badge_rect(self) -> QRectF:
        """Where the badge is drawn: centred in the panel, so that the panel's first line (a
        summary, the inspector's graph and plan) stays readable under the veil."""
        metrics = self.fontMetrics()
        width = min(self.width() - 16, metrics.horizontalAdvance(self.text) + 24)
        height = metrics.height() + 12
        return QRectF((self.width() - width) / 2, max(10, (self.height() - height) / 2),
                      width, height)

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), VEIL)
        metrics = painter.fontMetrics()
        badge = self.badge_rect()
        width = badge.width()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(BADGE)
        painter.drawRoundedRect(badge, 6, 6)
        painter.setPen(Qt.GlobalColor.white)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter,
                         metrics.elidedText(self.text, Qt.TextElideMode.ElideRight, int(width) - 12))
