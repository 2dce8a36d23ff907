"""A translucent veil over a panel whose content is being recomputed, saying what is running.

The panel underneath stays visible (dimmed) and usable: the veil lets mouse events through.
The badge that names the work never covers the panel's text: in a dock it sits in the title
bar, between the title and the buttons; elsewhere it is drawn only while the panel is empty.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QWidget

VEIL = QColor(255, 255, 255, 150)
BADGE = QColor(40, 40, 40, 215)
MIN_BADGE_WIDTH = 48  # narrower than this, the badge is left out (the status bar says it too)
TITLE_GAP = 12        # between the dock's title and the badge, and the badge and the buttons


class BusyOverlay(QWidget):
    """Covers `panel` while `set_text(text)` has a text; hidden after `set_text(None)`.

    In a dock, the overlay spans the whole dock and puts its badge in the title bar's free
    space; a panel outside a dock gets a centred badge only while `empty()` says it shows
    nothing (never, by default).
    """

    def __init__(self, panel: QWidget, empty: Callable[[], bool] | None = None):
        host = panel.parentWidget()
        self.dock = host if isinstance(host, QDockWidget) else None
        super().__init__(self.dock or panel)
        self.panel = panel
        self.empty = empty or (lambda: False)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.text = ""
        self.parentWidget().installEventFilter(self)
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
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and not self.isHidden():
            self.setGeometry(self.parentWidget().rect())
            self.update()
        return False

    def veil_rect(self) -> QRect:
        """The panel's area, in this overlay's coordinates."""
        if self.dock is None:
            return self.rect()
        return self.panel.geometry()

    def badge_rect(self) -> QRectF:
        """Where the badge is drawn, in this overlay's coordinates; empty where no free space
        wide enough is found."""
        metrics = self.fontMetrics()
        wanted = metrics.horizontalAdvance(self.text) + 24
        if self.dock is not None:
            left, right, height = self._title_room()
            width = min(wanted, right - left)
            if width < MIN_BADGE_WIDTH or height < metrics.height():
                return QRectF()
            badge_height = min(height - 2, metrics.height() + 6)
            return QRectF(right - width, (height - badge_height) / 2, width, badge_height)
        if not self.empty():
            return QRectF()
        width = min(self.width() - 16, wanted)
        height = metrics.height() + 12
        return QRectF((self.width() - width) / 2, max(10, (self.height() - height) / 2),
                      width, height)

    def _title_room(self) -> tuple[int, int, int]:
        """The dock title bar's free span (left, right) past the title and before the buttons,
        and the bar's height."""
        top = self.panel.geometry().top()
        title = self.dock.fontMetrics().horizontalAdvance(self.dock.windowTitle())
        left = title + 2 * TITLE_GAP
        right = self.width() - TITLE_GAP // 2
        for button in self.dock.findChildren(QAbstractButton):
            if button.isVisible() and button.parentWidget() is self.dock and button.y() < top:
                right = min(right, button.x() - TITLE_GAP // 2)
        return left, right, top

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.veil_rect(), VEIL)
        badge = self.badge_rect()
        if badge.isEmpty():
            return
        metrics = painter.fontMetrics()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(BADGE)
        painter.drawRoundedRect(badge, 6, 6)
        painter.setPen(Qt.GlobalColor.white)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter,
                         metrics.elidedText(self.text, Qt.TextElideMode.ElideRight,
                                            int(badge.width()) - 12))
