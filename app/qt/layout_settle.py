"""Lays the window out at once after a change, so that it is painted once, settled."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent

# Each pass carries out the layout requests posted before it; a level of the window's nesting
# (label, panel, dock, window) posts its parent's during the pass. The window nests fewer deep.
LAYOUT_LEVELS = 12


def settle_layouts() -> None:
    """Carry out now the layout requests a change just posted (labels of other lengths, panels
    shown or hidden), every level of them. Left to the event loop, each level is a request of
    its own and the window is painted again after each: opening a graph painted every plot
    four times in one slice of the GUI thread."""
    for _ in range(LAYOUT_LEVELS):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
