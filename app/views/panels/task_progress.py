"""The status bar's view of the window's executor: the running task's phase, how far it is (a
moving bar while the total is unknown) and a Cancel button. Hidden while nothing runs."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from slabscope.app.qt.task_executor import TaskExecutor, TaskLane

BAR_WIDTH = 120


class TaskProgress(QWidget):
    """Shows `executor.activity()`; Cancel calls `cancel(lane)` for the lane it shows."""

    def __init__(self, executor: TaskExecutor, cancel: Callable[[TaskLane], None],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.executor = executor
        self._cancel = cancel
        # The phase in a label of its own: a bar of unknown total draws no text.
        self.phase = QLabel(self)
        self.bar = QProgressBar(self)
        self.bar.setFixedWidth(BAR_WIDTH)
        self.bar.setTextVisible(True)
        self.bar.setFormat("%p%")
        self.cancel_button = QToolButton(self)
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(self.phase)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        # QProgressBar repaints the whole window at once when its range resets; refreshing on
        # the next turn of the event loop keeps that paint out of the slice that delivers a
        # task's result (a new graph, a plan), and folds a burst of signals into one refresh.
        self._pending = QTimer(self)
        self._pending.setSingleShot(True)
        self._pending.setInterval(0)
        self._pending.timeout.connect(self.refresh)
        executor.sigActivity.connect(self._pending.start)
        self.refresh()

    def refresh(self) -> None:
        """Show the newest running task's progress, or hide."""
        activity = self.executor.activity()
        self.setVisible(activity is not None)
        if activity is None:
            return
        self.phase.setText(activity.phase or "starting")
        # A range reset or a new value repaints the bar at once, and that repaint paints all
        # else the window has to paint (six plots after a new plan) in this slice: with its
        # updates off for the change, the bar only asks for a paint with the others.
        self.bar.setUpdatesEnabled(False)
        try:
            if activity.fraction is None:
                self.bar.setRange(0, 0)  # busy: the total is unknown
            else:
                self.bar.setRange(0, 100)
                self.bar.setValue(round(100 * min(max(activity.fraction, 0.0), 1.0)))
        finally:
            self.bar.setUpdatesEnabled(True)
        for widget in (self.phase, self.bar):
            widget.setToolTip(activity.label)
        self.cancel_button.setToolTip(f"Stop: {activity.label} (Esc)")

    def cancel(self) -> None:
        """Cancel the task shown."""
        activity = self.executor.activity()
        if activity is not None:
            self._cancel(activity.lane)
