"""The Run menu's actions, wired to a `RunController` (its progress shows in the window's
executor bar, `task_progress`, when the runs go to the window's executor)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence

from slabscope.app.qt.run_worker import KIND, RunController
from slabscope.app.views.panels.background_import import import_in_background


def install_run_actions(window, session, menu, executor=None) -> RunController:
    """Add "Run" (Ctrl+R) and "Cancel run" to `menu`; runs go to `executor`'s "run" lane (a
    `TaskExecutor`; by default the controller's own), messages to the window's status bar.

    Returns the controller (also kept as `window.run_controller`).
    """
    lane = executor.lane(KIND) if executor is not None else None
    controller = RunController(session, parent=window, lane=lane)
    import_in_background("slabscope.gpu.program")  # the window asks it about each new graph
    QCoreApplication.instance().aboutToQuit.connect(controller.shutdown)
    run_action = QAction("&Run", window)
    run_action.setShortcut(QKeySequence("Ctrl+R"))
    run_action.setStatusTip("Execute the plan in one slab and measure its phases")
    cancel_action = QAction("&Cancel Run", window)
    cancel_action.setShortcut(QKeySequence("Ctrl+."))
    cancel_action.setEnabled(False)
    run_action.triggered.connect(controller.start)
    cancel_action.triggered.connect(controller.cancel)
    menu.addAction(run_action)
    menu.addAction(cancel_action)

    status = window.statusBar()
    controller.sigRunning.connect(cancel_action.setEnabled)
    controller.sigMessage.connect(lambda text: status.showMessage(text, 8000))
    window.run_controller = controller
    window.run_action, window.cancel_run_action = run_action, cancel_action
    return controller
