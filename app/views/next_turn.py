"""Runs a panel's redraw on the next turn of the event loop, so that a large change is drawn in
stages: the window paints what the other panels drew before this one draws its part."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer


class NextTurn(QObject):
    """`start()` asks for `call()` on a later turn of the event loop (after the posted paints);
    asking again before it ran still runs it once. `stop()` withdraws it; `pending` says whether
    it is asked for."""

    def __init__(self, parent: QObject, call: Callable[[], None]):
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)  # a timer, not a posted call: pending paints go first
        self._timer.timeout.connect(call)

    @property
    def pending(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
