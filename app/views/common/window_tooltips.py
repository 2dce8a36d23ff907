"""Tooltips kept inside the window: Qt keeps a tooltip on the screen only, so a long buffer
description near the window's right or bottom edge ran past it (over other windows, or off a
screenshot). Shown here at the pointer, moved left and up just enough to fit the window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QAbstractItemView, QApplication, QToolTip, QWidget

# Qt draws a tooltip this far below and right of the pointer, and pads its text this much.
POINTER_OFFSET = QPoint(2, 16)
PADDING = 12


def tooltip_size(text: str, widget: QWidget) -> tuple[int, int]:
    """About the size (width, height) in pixels Qt will draw `text` at as a tooltip."""
    document = QTextDocument()
    document.setDefaultFont(QToolTip.font())
    if Qt.mightBeRichText(text):
        document.setHtml(text)
    else:
        document.setPlainText(text)
    document.setTextWidth(-1)  # one line per paragraph, as a tooltip lays plain text out
    screen = widget.screen().availableGeometry().width() if widget.screen() else 1920
    if document.idealWidth() > screen / 2:  # Qt wraps very long rich text; so do we
        document.setTextWidth(screen / 2)
    size = document.size()
    return int(size.width()) + PADDING, int(size.height()) + PADDING


def fitted_position(pointer: QPoint, size: tuple[int, int], frame: QRect) -> QPoint:
    """Where to show a tooltip of `size` for the pointer at `pointer` (global pixels) so that it
    lies inside `frame`: below and right of the pointer, moved left and up where it must."""
    at = pointer + POINTER_OFFSET
    x = min(at.x(), frame.right() - size[0])
    y = at.y() if at.y() + size[1] <= frame.bottom() else pointer.y() - size[1] - 4
    return QPoint(max(frame.left(), x), max(frame.top(), y))


class WindowTooltips(QObject):
    """An application event filter that shows the tooltips of `window`'s widgets inside it."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window = window
        QApplication.instance().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        """Show a widget's own tooltip inside the window; anything else goes on as usual."""
        if event.type() != QEvent.Type.ToolTip or not isinstance(watched, QWidget):
            return False
        if watched.window() is not self.window:
            return False
        widget, text = watched, watched.toolTip()
        view = watched.parentWidget()
        if not text and view is not None:
            # A list's or tree's viewport: the row's tooltip; a plot's viewport: its view's.
            if isinstance(view, QAbstractItemView) and watched is view.viewport():
                text = view.indexAt(event.pos()).data(Qt.ItemDataRole.ToolTipRole) or ""
            else:
                text = view.toolTip()
            widget = view
        if not text:
            return False
        pointer = event.globalPos()
        top_left = fitted_position(pointer, tooltip_size(text, widget),
                                   self.window.frameGeometry())
        # Qt adds its offset to the position it is given; take it off so the tip lands here.
        QToolTip.showText(top_left - POINTER_OFFSET, text, widget)
        return True
