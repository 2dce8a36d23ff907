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
        self._call = call
        self._wanted = False
        self._arming = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)  # a timer, not a posted call: pending paints go first
        self._timer.timeout.connect(self._fire)

    @property
    def pending(self) -> bool:
        return self._wanted

    def start(self) -> None:
        self._wanted = True
        if not self._timer.isActive() and not self._arming:
            # The timer starts once the work that asked is done: started at once, it could fall
            # due before the timers already waiting for that work to end (input, the window's
            # own), and the call would run in the same slice of the GUI thread as that work.
            self._arming = True
            QTimer.singleShot(0, self, self._arm)

    def stop(self) -> None:
        self._wanted = False
        self._timer.stop()

    def _arm(self) -> None:
        self._arming = False
        if self._wanted:
            self._timer.start()

    def _fire(self) -> None:
        if self._wanted:
            self._wanted = False
            self._call()
