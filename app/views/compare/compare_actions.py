"""File ▸ Compare With… and the Compare dock: the open graph set against a second run.

The file to compare with is `session.compare_path` (a session file saves and restores it). The
comparison is made on the window executor's "compare" lane, off the GUI thread, whenever the
graph or that file changes; a newer request cancels the one running. The window remembers the
file when it closes and hands it to `restore` when it opens again.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog

from slabscope.app.state.tasks import Task, deliver, run_task
from slabscope.app.views.common.busy_overlay import BusyOverlay
from slabscope.app.views.compare.compare_view import CompareView
from slabscope.app.views.compare.comparison import Comparison, compare_with

KIND = "compare"
GRAPH_FILTER = "Graphs (*.json *.onnx *.pt2 *.csv *.pickle);;All files (*)"


def _same(one: tuple | None, other: tuple | None) -> bool:
    """Whether two (graph, path) requests are one: the same graph object (graphs compare by
    value, which on a large one takes long) and the same path."""
    if one is None or other is None:
        return one is other
    return one[0] is other[0] and one[1] == other[1]


class CompareController(QObject):
    """Makes the comparison of the session's graph with `session.compare_path` in the background
    and shows it in `view`; failures go to `window.show_error`."""

    def __init__(self, window, session, view: CompareView, lane=None):
        super().__init__(window)
        self.window, self.session, self.view, self.lane = window, session, view, lane
        # The comparison shown stays, dimmed, while the next one is made.
        self.veil = BusyOverlay(view, empty=lambda: view.comparison is None)
        self._task: Task | None = None  # the comparison being made
        if lane is not None:
            lane.sigRunningChanged.connect(lambda running: running or self.veil.set_text(None))
            lane.sigEnded.connect(self._ended)
        self._made_for: tuple | None = None  # (graph, path) of the comparison shown or coming
        self._restoring: Path | None = None  # the last window's file, until a graph is shown
        self._refresh_soon = QTimer(self)
        self._refresh_soon.setSingleShot(True)
        self._refresh_soon.setInterval(0)  # after every listener has seen the new graph
        self._refresh_soon.timeout.connect(self.refresh)
        session.sigGraphChanged.connect(lambda *_: self._refresh_soon.start())
        session.sigOpened.connect(lambda *_: self._refresh_soon.start())

    def compare_with(self, path) -> None:
        """Compare the open graph with the file at `path` (it is kept for the next graph and
        saved in session files)."""
        if self.session.graph is None:
            self.window.show_error("Cannot compare", "Open a graph first, then compare it with "
                                                     "another run.")
            return
        self.session.compare_path = Path(path)
        self.refresh()

    def stop(self) -> None:
        """Forget the file compared with; the view says how to start again."""
        self.session.compare_path = None
        self._restoring = None
        self.refresh()

    def restore(self, path) -> None:
        """Compare the first graph shown with `path`, the file compared with when the window
        last closed, unless that graph's session file names its own. It is made off the GUI
        thread like any comparison; a failure (the file is gone) is said in the view, not in a
        dialog, and the tab stays where the restored layout put it."""
        self._restoring = Path(path)

    def remembered(self) -> Path | None:
        """The file to compare with when the window opens next: the one compared with now, else
        one still waiting for a graph (absolute: the next start may be in another folder)."""
        path = self.session.compare_path if self.session.compare_path is not None \
            else self._restoring
        return path.absolute() if path is not None else None

    def _take_restored(self) -> bool:
        """Once a graph is shown, set it against the file `restore` was given, unless its session
        file named one; True when it did."""
        if self.session.graph is None or self._restoring is None:
            return False
        restoring, self._restoring = self._restoring, None
        if self.session.compare_path is not None:
            return False
        self.session.compare_path = restoring
        return True

    def refresh(self) -> None:
        """Start the comparison the session asks for, unless it is the one shown or coming."""
        restored = self._take_restored()
        graph, path = self.session.graph, self.session.compare_path
        wanted = (graph, path) if graph is not None and path is not None else None
        if _same(wanted, self._made_for):
            return
        self._made_for = wanted
        if wanted is None:
            if self.lane is not None:
                self.lane.cancel()
            self.view.show_comparison(None)
            return
        name = str(self.session.path) if self.session.path else graph.name

        def done(comparison: Comparison) -> None:
            if _same(self._made_for, wanted):
                self.view.show_comparison(comparison)
                if not restored:
                    self.window.docks[KIND].raise_()

        def failed(message: str) -> None:
            if _same(self._made_for, wanted):
                self._made_for = None
                self.session.compare_path = None
                if restored:
                    self.view.show_message(
                        f"When Slabscope last closed it was comparing with {path.name}; it "
                        f"cannot compare with it now.\n\n{message}\n\nFile ▸ Compare With… "
                        f"chooses a file to compare with.")
                else:
                    self.view.show_comparison(None)
                    self.window.show_error("Cannot compare",
                                           f"{path.name} was not compared.\n\n{message}")

        task = Task(f"Comparing with {path.name}",
                    lambda token: compare_with(graph, name, path, token), done, failed)
        if self.lane is None:  # no executor (scripts, exports): at once
            deliver(task, run_task(task))
        else:
            self.veil.set_text(f"Comparing with {path.name}")
            if self.view.comparison is None:  # not the page that says how to start one
                self.view.show_message(f"Comparing with {path.name}…")
            self._task = task
            self.lane.submit(task)

    def _ended(self, task: Task, how: str) -> None:
        """A comparison cancelled by the user (not superseded) leaves the one shown in force."""
        if task is not self._task or how != "cancelled":
            return
        shown = self.view.comparison
        self.session.compare_path = shown.b_path if shown is not None else None
        self._made_for = (self.session.graph, shown.b_path) if shown is not None else None
        if shown is not None and shown.diff.a.graph is not self.session.graph:
            self._made_for = None  # the graph changed too: what is shown is out of date
            self.session.compare_path = None
            shown = None
        if shown is None:
            self.view.show_comparison(None)  # how to start one, not "Comparing with …"

    def choose(self) -> None:
        """Ask for the file to compare the open graph with."""
        start = str(self.session.path.parent) if self.session.path else ""
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare with", start, GRAPH_FILTER)
        if path:
            self.compare_with(path)


def install_compare_actions(window, session, menu, executor=None) -> CompareController:
    """Add File ▸ Compare With… (Ctrl+Shift+D) and Stop Comparing to `menu`, and the Compare dock
    (tabbed with the bottom panels) as `window.docks["compare"]`. Returns the controller (also
    `window.compare_controller`; its view is `window.compare_view`)."""
    view = CompareView()
    dock = window._dock("Compare", view, Qt.DockWidgetArea.BottomDockWidgetArea)
    if "allocator" in window.docks:
        window.tabifyDockWidget(window.docks["allocator"], dock)
        window.docks[session.view.tab].raise_()  # a tab added last comes to the front: not this one
    window.docks[KIND] = dock
    lane = executor.lane(KIND) if executor is not None else None
    controller = CompareController(window, session, view, lane)
    compare = QAction("Compare &With…", window)
    compare.setShortcut(QKeySequence("Ctrl+Shift+D"))
    compare.setStatusTip("Compare the open graph with another run: live bytes, slab, reserved, "
                         "and what changed at the live peak")
    compare.triggered.connect(controller.choose)
    stop = QAction("Stop Comparing", window)
    stop.triggered.connect(controller.stop)
    menu.addAction(compare)
    menu.addAction(stop)
    window.compare_controller, window.compare_view = controller, view
    return controller
