"""Redraws a panel that sits behind another dock tab only when the user brings it forward, so a
new graph or plan costs the GUI thread only the panels on screen."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDockWidget, QWidget


class RedrawWhenShown(QObject):
    """Call it (it takes a signal's arguments) to run `redraw` at once, unless `widget` is in a
    dock tab behind another one of a window on screen: then `redraw` runs once, when that tab
    comes forward. (Qt moves such a tab off the window rather than hiding it, so it is known by
    its empty visible region.)"""

    def __init__(self, widget: QWidget, redraw: Callable[[], None]):
        super().__init__(widget)
        self.widget, self.redraw = widget, redraw
        self.pending = False
        self._dock: QDockWidget | None = None

    def __call__(self, *_) -> None:
        dock = self._watch_dock()
        window = self.widget.window()
        behind = (dock is not None and window.isVisible() and not window.isMinimized()
                  and self.widget.visibleRegion().isEmpty())
        self.pending = behind
        if not behind:
            self.redraw()

    def _watch_dock(self) -> QDockWidget | None:
        """The dock holding the widget (it is put in one after it is built), watched once."""
        if self._dock is None:
            parent = self.widget.parentWidget()
            while parent is not None and not isinstance(parent, QDockWidget):
                parent = parent.parentWidget()
            if parent is not None:
                parent.visibilityChanged.connect(self._visibility_changed)
                self._dock = parent
        return self._dock

    def _visibility_changed(self, visible: bool) -> None:
        if visible and self.pending:
            self.pending = False
            self.redraw()
