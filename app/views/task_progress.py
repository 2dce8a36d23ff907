"""The status bar's view of the window's executor: the running task's phase and how far it is,
and a Cancel button. Hidden while nothing runs."""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget

from slabscope.app.qt.task_executor import TaskExecutor, TaskLane

BAR_WIDTH = 220  # room for "conflict sets 100%" at the default font


class TaskProgress(QWidget):
    """Shows `executor.activity()`; Cancel calls `cancel(lane)` for the lane it shows."""

    def __init__(self, executor: TaskExecutor, cancel: Callable[[TaskLane], None],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.executor = executor
        self._cancel = cancel
        self.bar = QProgressBar(self)
        self.bar.setFixedWidth(BAR_WIDTH)
        self.bar.setTextVisible(True)
        self.cancel_button = QToolButton(self)
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        executor.sigActivity.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Show the newest running task's progress, or hide."""
        activity = self.executor.activity()
        self.setVisible(activity is not None)
        if activity is None:
            return
        phase = activity.phase or "starting"
        if activity.fraction is None:
            self.bar.setRange(0, 0)  # busy: the total is unknown
            self.bar.setFormat(phase)
        else:
            self.bar.setRange(0, 100)
            self.bar.setValue(round(100 * min(max(activity.fraction, 0.0), 1.0)))
            self.bar.setFormat(f"{phase} %p%")
        self.bar.setToolTip(activity.label)
        self.cancel_button.setToolTip(f"Stop: {activity.label}")

    def cancel(self) -> None:
        """Cancel the task shown."""
        activity = self.executor.activity()
        if activity is not None:
            self._cancel(activity.lane)
