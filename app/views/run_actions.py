"""The Run menu's actions and the status bar's run progress, wired to a `RunController`."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QProgressBar

from slabscope.app.qt.run_worker import RunController
from slabscope.app.views.background_import import import_in_background


def install_run_actions(window, session, menu) -> RunController:
    """Add "Run" (Ctrl+R) and "Cancel run" to `menu`, with progress in the window's status bar.

    Returns the controller (also kept as `window.run_controller`).
    """
    controller = RunController(session, parent=window)
    import_in_background("slabscope.gpu.binding")  # the window asks it about each new graph
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

    bar = QProgressBar(window)
    bar.setRange(0, 100)
    bar.setMaximumWidth(160)
    bar.setVisible(False)
    status = window.statusBar()
    status.addPermanentWidget(bar)

    def running(on: bool):
        cancel_action.setEnabled(on)
        bar.setVisible(on)
        bar.setValue(0)

    controller.sigRunning.connect(running)
    controller.sigProgress.connect(lambda fraction, phase: (bar.setValue(round(fraction * 100)),
                                                            bar.setFormat(f"{phase} %p%")))
    controller.sigMessage.connect(lambda text: status.showMessage(text, 8000))
    window.run_controller = controller
    window.run_action, window.cancel_run_action = run_action, cancel_action
    return controller
