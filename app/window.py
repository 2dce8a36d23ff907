"""The main window: the DAG in the centre, the other panels in docks, menus, files and status.

Every panel is built from the one `Session`; the window only wires menus to session methods and
handles files (open, drag and drop, recent files, session files, unsaved-changes warning). It
installs one `TaskExecutor`, so loading, planning, search and runs run in the background: the
status bar says what is running, for how long and how far it is (with a Cancel button), the
panels waiting for it are marked, search's best plan so far shows in the slab bar, the lifetime
map and the inspector, marked provisional, and Esc cancels.
"""

from __future__ import annotations

import time
from pathlib import Path


from PySide6.QtCore import QCoreApplication, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QInputDialog, QMainWindow,
                               QMessageBox, QVBoxLayout, QWidget)

from slabscope import planner
from slabscope.app.icon import application_icon
from slabscope.app.qt.gil_turns import share_gil_with_gui
from slabscope.app.qt.planning_controller import PlanningController
from slabscope.app.qt.task_executor import TaskExecutor, TaskLane
from slabscope.app.views.allocator.allocator_panel import AllocatorPanel
from slabscope.app.views.common.busy_overlay import BusyOverlay
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.common.elided_label import ElidedLabel
from slabscope.app.views.common.peak_headline import headline_line, use_live_peak
from slabscope.app.views.common.window_tooltips import WindowTooltips
from slabscope.app.views.compare.compare_actions import install_compare_actions
from slabscope.app.views.dag.dag_view import DagView
from slabscope.app.views.dag.graph_panel import GraphPanel
from slabscope.app.views.dag.node_panel import NodePanel
from slabscope.app.views.export.export_title import export_title
from slabscope.app.views.export.png_export import render_png, render_svg
from slabscope.app.views.export.window_export import (enter_window_export, leave_window_export,
                                                      without_veils)
from slabscope.app.views.lifetimes.lifetime_view import LifetimeView
from slabscope.app.views.panels.find_dialog import FindDialog
from slabscope.app.views.panels.inspector import Inspector
from slabscope.app.views.panels.notes_bar import NotesBar
from slabscope.app.views.panels.peak_panel import PeakPanel
from slabscope.app.views.panels.request_list import RequestList
from slabscope.app.views.panels.run_actions import install_run_actions
from slabscope.app.views.panels.schedule_controls import ScheduleControls
from slabscope.app.views.panels.shortcuts_dialog import ShortcutsDialog
from slabscope.app.views.panels.tab_memory import TabMemory
from slabscope.app.views.panels.task_progress import TaskProgress
from slabscope.app.views.slab.slab_view import SlabView
from slabscope.app.views.timeline.timeline_view import TimelineView, run_unavailable_text
from slabscope.planner.formats.safety.input_limits import one_line
from slabscope.planner.support.atomic_write import check_outputs
from slabscope.planner.support.text import counted

SESSION_SUFFIX = ".slabscope"
GRAPH_FILTER = "Graphs (*.json *.onnx *.pt2 *.csv *.pickle);;All files (*)"
SESSION_FILTER = f"Slabscope sessions (*{SESSION_SUFFIX});;All files (*)"
RECENT_KEY = "recent_files"
RECENT_LIMIT = 8
GEOMETRY_KEY = "window/geometry"
LAYOUT_KEY = "window/layout"
OVERVIEW_KEY = "dag/overview"  # whether the DAG shows its overview (remembered across runs)
COMPARE_KEY = "window/compare"  # the file the Compare dock compared with
EXPORT_SCALES = (1.0, 2.0, 3.0)
DEFAULT_EXPORT_SCALE = 2.0  # sharp on HiDPI screens and in slides
DEFAULT_SIZE = QSize(1440, 900)  # the first window's size, where the screen has room
# Tall enough for a lifetime map of 250 pixels or more under its header lines; the rest of the
# height goes to the DAG and the Peak panel above.
SLAB_DOCK_HEIGHT = 400
BUSY_TICK_MS = 200  # how often the status bar's "running for ..." count moves


class MainWindow(QMainWindow):
    """The Slabscope window over `session`; `settings` (default: the user's QSettings) keeps the
    recent files and the window layout."""

    def __init__(self, session, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        share_gil_with_gui()  # the window's workers run Python beside its event loop
        self.session = session
        # An explicit INI format, so a test's QSettings.setPath really redirects it.
        self.settings = settings if settings is not None else QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, "Slabscope", "Slabscope")
        self.session_file: Path | None = None
        self._peak_tabbed = False  # see showEvent
        self.last_error: str | None = None
        self.error_box: QMessageBox | None = None
        self.outside_box: QMessageBox | None = None  # asks about a session's outside graph
        self._geometry_restored = False  # see _restore_layout and showEvent
        self.resize(DEFAULT_SIZE)
        self.tooltips = WindowTooltips(self)  # long buffer descriptions stay inside the window
        self.setWindowIcon(application_icon())
        self.setAcceptDrops(True)

        self.dag_view = DagView(session)
        # The DAG (or live bytes over time for a trace), under the bar of import notes.
        self.graph_panel = GraphPanel(session, self.dag_view)
        self.notes_bar = NotesBar()
        central = QWidget(self)
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.notes_bar)
        column.addWidget(self.graph_panel, 1)
        self.setCentralWidget(central)
        self.node_panel = NodePanel(session)
        self.node_panel.setMinimumHeight(40)  # a line or two: the bottom docks need the height
        self.find_dialog = FindDialog(session, self)
        self.export_folder: Path | None = None  # where the last export went
        self.request_list = RequestList(session)
        self.inspector = Inspector(session)
        self.slab_view = SlabView(session)
        self.lifetime_view = LifetimeView(session)
        self.timeline_view = TimelineView(session)
        self.allocator_panel = AllocatorPanel(session)
        self.executor = TaskExecutor(self)  # every long task: loads, plans, searches, runs
        self.in_place = session.in_place  # the Plan menu's In place switch
        self.peak_panel = PeakPanel(session, self.executor.add(TaskLane("levers")), {
            "order": lambda: self.schedule_controls.choice.choose("best"),
            "packing": lambda: session.set_algorithm("search"),
            "allocator": self._show_expandable,
            "in place": lambda: self.in_place.set(True),
            "serial": lambda: session.set_conflicts("serial")})
        self.docks = {
            "requests": self._dock("Requests", self.request_list, Qt.DockWidgetArea.LeftDockWidgetArea),
            "inspector": self._dock("Inspector", self.inspector, Qt.DockWidgetArea.RightDockWidgetArea),
            "node": self._dock("Node", self.node_panel, Qt.DockWidgetArea.RightDockWidgetArea),
            "slab": self._dock("Slab", self.slab_view, Qt.DockWidgetArea.BottomDockWidgetArea),
            "lifetime": self._dock("Lifetimes", self.lifetime_view, Qt.DockWidgetArea.BottomDockWidgetArea),
            "timeline": self._dock("Timeline", self.timeline_view, Qt.DockWidgetArea.BottomDockWidgetArea),
            "allocator": self._dock("Allocator", self.allocator_panel, Qt.DockWidgetArea.BottomDockWidgetArea),
            "peak": self._dock("Peak", self.peak_panel, Qt.DockWidgetArea.RightDockWidgetArea),
        }

        # Tabbed rather than side by side: the slab bar and lifetime map each need most of the
        # window's width for their byte axes and headers.
        self.tabifyDockWidget(self.docks["slab"], self.docks["lifetime"])
        self.tabifyDockWidget(self.docks["lifetime"], self.docks["timeline"])
        self.tabifyDockWidget(self.docks["timeline"], self.docks["allocator"])
        self.docks[session.view.tab].raise_()  # "slab" unless the session says otherwise
        self.tab_memory = TabMemory(session, self.docks)  # the front tab, in the view settings
        self._size_docks()

        # Panels that show the plan (or, while a file loads, the graph) and so wait for the worker.
        self.busy_overlays = {name: BusyOverlay(self.docks[name].widget())
                              for name in ("slab", "lifetime", "inspector")}
        # The central panel has no title bar: its badge shows only while it has nothing to cover.
        self.busy_overlays["graph"] = BusyOverlay(self.graph_panel,
                                                  empty=lambda: session.graph is None)
        self.busy_label = ElidedLabel(self)
        self.statusBar().addPermanentWidget(self.busy_label)
        self.planning = self.executor.add(PlanningController())
        self.task_progress = TaskProgress(self.executor, self._cancel_lane, self)
        self.statusBar().addPermanentWidget(self.task_progress)
        self.busy_timer = QTimer(self)
        self.busy_timer.setInterval(BUSY_TICK_MS)
        self.busy_timer.timeout.connect(self._show_busy)
        self.summary_label = ElidedLabel(self)
        self.statusBar().addPermanentWidget(self.summary_label)
        session.use_executor(self.planning)
        use_live_peak(session)  # the status bar leads with it
        QCoreApplication.instance().aboutToQuit.connect(self._stop_planning)
        self._build_menus()
        self._restore_layout()  # now that every dock is made: the Compare dock comes with File
        session.sigGraphChanged.connect(self._update_title)
        session.sigDirtyChanged.connect(self._update_title)
        session.sigGraphChanged.connect(self._update_summary)
        session.sigPlanChanged.connect(self._update_summary)
        session.sigSettingsChanged.connect(self._sync_plan_menu)
        session.sigGraphChanged.connect(self._sync_plan_menu)
        session.sigError.connect(self._remember_error)
        session.sigBusyChanged.connect(self._busy_changed)
        session.sigPlanChanged.connect(self._show_marks)
        # Search's best plan so far goes to the slab bar as a plan would, and is marked (the
        # lifetime map and the inspector follow it themselves).
        session.sigProvisionalPlan.connect(self.slab_view._plan_changed)
        session.sigProvisionalPlan.connect(self._show_marks)
        session.sigOpened.connect(self.opened)
        session.sigOpenFailed.connect(self._open_failed)
        session.sigSessionGraphOutside.connect(self._ask_graph_outside)
        self._update_title()
        self._update_summary()
        self._sync_plan_menu()
        self._busy_changed(session.busy)

    def _dock(self, title: str, widget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title.lower()}")  # saveState needs a stable name
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    # --- menus ---------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open Graph…", self.choose_graph, QKeySequence.StandardKey.Open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        install_compare_actions(self, self.session, file_menu, self.executor)
        file_menu.addSeparator()
        self._action(file_menu, "Open &Session…", self.choose_session, "Ctrl+Shift+O")
        self._action(file_menu, "&Save Session", self.save_session, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Save Session &As…", self.save_session_as, "Ctrl+Shift+S")
        file_menu.addSeparator()
        self.export_menu = file_menu.addMenu("&Export PNG")
        self._build_export_menu()
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        edit_menu = self.menuBar().addMenu("&Edit")
        stack = self.session.undo_stack
        undo = self._history_action(edit_menu, "&Undo", stack.undo, stack.canUndo, stack.undoText,
                                    stack.canUndoChanged, stack.undoTextChanged)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self._history_action(edit_menu, "&Redo", stack.redo, stack.canRedo, stack.redoText,
                                    stack.canRedoChanged, stack.redoTextChanged)
        redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.undo_action, self.redo_action = undo, redo
        edit_menu.addSeparator()
        edit_menu.addActions([self.request_list.sort_action, self.request_list.restore_action])
        edit_menu.addSeparator()
        self._action(edit_menu, "&Find…", self.find_dialog.open_find, QKeySequence.StandardKey.Find)

        view_menu = self.menuBar().addMenu("&View")
        self._action(view_menu, "&Fit Graph", self.dag_view.fit, "Ctrl+0")
        dag = self.dag_view
        self.overview_action = self._action(
            view_menu, "Graph &Overview", lambda: dag.set_overview(self.overview_action.isChecked()))
        self.overview_action.setCheckable(True)
        self.overview_action.setStatusTip("The DAG's thumbnail in its corner (O in the DAG)")
        dag.sigOverviewChanged.connect(self._overview_changed)
        dag.set_overview(self.settings.value(OVERVIEW_KEY, True, type=bool))
        self.overview_action.setChecked(dag.minimap.wanted)
        view_menu.addSeparator()
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())

        plan_menu = self.menuBar().addMenu("&Plan")
        self.algorithm_actions = self._choice_menu(plan_menu.addMenu("&Algorithm"),
                                                   planner.ALGORITHMS, self.session.set_algorithm)
        self.conflict_actions = self._choice_menu(plan_menu.addMenu("&Conflict Model"),
                                                  planner.CONFLICT_MODELS, self.session.set_conflicts)
        self.schedule_controls = ScheduleControls(self, self.session, plan_menu)
        self.in_place_action = self._action(plan_menu, "In &Place", lambda: self.in_place.set(
            self.in_place_action.isChecked()), "Ctrl+Shift+I")
        self.in_place_action.setCheckable(True)
        self.in_place_action.setStatusTip("Plan with the opt-in in-place rule: a pointwise op "
                                          "writes its output over an argument that dies there")
        self.in_place.sigChanged.connect(lambda: self.in_place_action.setChecked(self.in_place.on))
        plan_menu.addSeparator()
        self._action(plan_menu, "Set Ca&pacity…", self.choose_capacity, "Ctrl+Shift+C")
        self._action(plan_menu, "&No Capacity Limit", lambda: self.session.set_capacity(None))
        plan_menu.addSeparator()
        self.cancel_action = self._action(plan_menu, "Ca&ncel Planning or Run", self.cancel_work, "Esc")
        self.cancel_action.setStatusTip("Stop the running load, plan or run; the earlier plan stays")

        run_menu = self.menuBar().addMenu("&Run")
        install_run_actions(self, self.session, run_menu, self.executor)
        self.run_controller.sigRunning.connect(self._sync_cancel_action)
        run_menu.setToolTipsVisible(True)  # a disabled Run says why in its tooltip
        self.run_controller.sigFailed.connect(self._run_failed)
        self.session.sigGraphChanged.connect(self._sync_run_action)
        self._sync_run_action()
        help_menu = self.menuBar().addMenu("&Help")
        self._action(help_menu, "&Keyboard Shortcuts…", self.show_shortcuts, "F1")

    def _build_export_menu(self) -> None:
        views = (("&Slab Bar…", "slab", None), ("&Lifetime Map…", "map", None),
                 ("&DAG…", "dag", None), ("&Timeline…", "timeline", None),
                 ("&Compare…", "compare", None),
                 ("Whole &Window…", "window", "Ctrl+E"))
        for text, view, shortcut in views:
            self._action(self.export_menu, text, lambda v=view: self.choose_export(v), shortcut)
        self.export_menu.addSeparator()
        group = QActionGroup(self.export_menu)
        self.export_scales = {}
        for scale in EXPORT_SCALES:
            action = self.export_menu.addAction(f"Scale {scale:g}×")
            action.setCheckable(True)
            action.setChecked(scale == DEFAULT_EXPORT_SCALE)
            group.addAction(action)
            self.export_scales[scale] = action

    def export_widget(self, view: str):
        """The widget shown for export `view` ("slab", "map", "dag", "timeline", "compare" or
        "window")."""
        return {"slab": self.slab_view, "map": self.lifetime_view, "dag": self.graph_panel,
                "timeline": self.timeline_view, "compare": self.compare_view, "window": self}[view]

    def export_scale(self) -> float:
        """The scale checked in the Export PNG menu."""
        return next(s for s, action in self.export_scales.items() if action.isChecked())

    def choose_export(self, view: str) -> None:
        """Ask for a PNG file name and export `view` at the chosen scale."""
        graph = self.session.path.stem if self.session.path else "slabscope"
        # The last export's folder, else home: never the package's own example folder.
        start = str((self.export_folder or Path.home()) / f"{graph}_{view}.png")
        path, _ = QFileDialog.getSaveFileName(self, "Export PNG", start,
                                              "PNG images (*.png);;SVG drawings (*.svg)")
        if path:
            self.export_png(view, path)

    def export_png(self, view: str, path, scale: float | None = None) -> bool:
        """Write `view` as it is on screen to `path`: a PNG (default scale: the menu's choice), or
        an SVG when the name ends in .svg; busy veils are left out (the title line says what
        they say)."""
        widget, title = self.export_widget(view), export_title(self.session)
        try:
            # Never over the graph or session file this window has open.
            check_outputs([self.session.path, self.session_file], [("export", path)])
            with without_veils(self):
                if Path(path).suffix.lower() == ".svg":
                    written = render_svg(widget, path, title)
                else:
                    written = render_png(widget, path,
                                         self.export_scale() if scale is None else scale, title)
        except planner.PlanError as exc:
            self.show_error("Cannot export", str(exc))
            return False
        self.export_folder = Path(written).parent
        self.statusBar().showMessage(f"Exported {written}", 5000)
        return True

    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        action = menu.addAction(text)
        action.triggered.connect(lambda checked=False: slot())
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        return action

    def _history_action(self, menu, text: str, slot, enabled, detail, enabled_changed,
                        detail_changed) -> QAction:
        """An Undo or Redo action that follows the undo stack: enabled when it can, and named
        after the step it would take ("Undo Reorder requests")."""
        action = self._action(menu, text, slot)

        def sync(*_):
            action.setEnabled(enabled())
            step = detail()
            action.setText(f"{text} {step}" if step else text)

        enabled_changed.connect(sync)
        detail_changed.connect(sync)
        sync()
        return action

    def _choice_menu(self, menu, names, choose) -> dict[str, QAction]:
        group = QActionGroup(menu)
        actions = {}
        for name in names:
            action = menu.addAction(name)
            action.setCheckable(True)
            group.addAction(action)
            action.triggered.connect(lambda checked=False, n=name: choose(n))
            actions[name] = action
        return actions

    def _sync_plan_menu(self) -> None:
        for current, actions in ((self.session.algorithm, self.algorithm_actions),
                                 (self.session.conflicts, self.conflict_actions)):
            for name, action in actions.items():
                action.setChecked(name == current)

    def choose_capacity(self) -> None:
        """Ask for a capacity in bytes (0 or empty: no limit) and apply it (undoable)."""
        current = "" if self.session.capacity is None else str(self.session.capacity)
        text, ok = QInputDialog.getText(self, "Slab capacity",
                                        "Capacity in bytes (empty for no limit):", text=current)
        if not ok:
            return
        text = text.replace(",", "").replace("_", "").strip()
        if not text:
            self.session.set_capacity(None)
        elif text.isdigit():
            self.session.set_capacity(int(text))
        else:
            self.show_error("Capacity", f"{text!r} is not a whole number of bytes.")

    # --- files ---------------------------------------------------------------------------

    def choose_graph(self) -> None:
        """Ask for a graph file and open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open graph", self._start_folder(), GRAPH_FILTER)
        if path:
            self.open_path(path)

    def choose_session(self) -> None:
        """Ask for a session file and open it."""
        path, _ = QFileDialog.getOpenFileName(self, "Open session", self._start_folder(), SESSION_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path) -> bool:
        """Start opening a graph or (by its suffix) a session file and return at once; the file
        loads and plans in the background. A bad file shows an error dialog when that is known
        and keeps the current graph. Asks first when there are unsaved changes; False when the
        user keeps them (or the file has already failed)."""
        path = Path(path)
        if not self.confirm_discard():
            return False
        self.last_error = None
        self.statusBar().clearMessage()  # the last file's "Opened ..." is not this one's
        if path.suffix == SESSION_SUFFIX:
            return self.session.open_session(path)
        return self.session.open(path)

    def opened(self, path: Path) -> None:
        """Record that `path` (a graph or session file) is open: title, recent files, status,
        and what importing it had to assume, in the notes bar."""
        self.notes_bar.show_notes(self.session.import_notes)
        self.session_file = path if path.suffix == SESSION_SUFFIX else None
        self._remember_recent(path)
        self._update_title()
        self.statusBar().showMessage(f"Opened {path}", 5000)

    def _open_failed(self, path: Path, message: str) -> None:
        self.show_error("Cannot open file", f"{path.name} was not opened.\n\n{message}")

    def _ask_graph_outside(self, path: Path, stored: str, graph_path: Path) -> None:
        """Ask, naming the path, whether to open the graph a session names outside its folder."""
        where = one_line(stored)
        if Path(stored) != graph_path:
            where += f"\n(that is {one_line(str(graph_path))})"
        box = QMessageBox(QMessageBox.Icon.Warning, "Graph outside the session's folder",
                          f"{path.name} names a graph file outside its own folder:\n\n"
                          f"{where}\n\nOpen that file?",
                          QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
                          self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.buttonClicked.connect(
            lambda button: box.standardButton(button) == QMessageBox.StandardButton.Open
            and self.session.open_session(path, allow_outside=True))
        box.finished.connect(lambda _: setattr(self, "outside_box", None))
        self.outside_box = box
        box.open()

    def save_session(self) -> bool:
        """Save the session to its file (asking for one the first time); True when saved."""
        if self.session_file is None:
            return self.save_session_as()
        return self.save_session_to(self.session_file)

    def save_session_as(self) -> bool:
        """Ask for a file name and save the session there; True when saved."""
        start = self._start_folder()
        if self.session.path is not None:
            start = str(self.session.path.with_suffix(SESSION_SUFFIX))
        path, _ = QFileDialog.getSaveFileName(self, "Save session", start, SESSION_FILTER)
        return bool(path) and self.save_session_to(path)

    def save_session_to(self, path) -> bool:
        """Write the session file at `path`; a failure shows an error dialog."""
        path = Path(path)
        if path.suffix != SESSION_SUFFIX:
            path = path.with_name(path.name + SESSION_SUFFIX)
        try:
            self.session.save_session(path)
        except planner.PlanError as exc:
            self.show_error("Cannot save session", str(exc))
            return False
        self.session_file = path
        self._remember_recent(path)
        self._update_title()
        self.statusBar().showMessage(f"Saved session {path}", 5000)
        return True

    def recent_files(self) -> list[str]:
        """Recently opened graph and session files, newest first."""
        value = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):  # QSettings returns a lone string for one-element lists
            value = [value]
        return [str(v) for v in value or []]

    def _remember_recent(self, path: Path) -> None:
        entry = str(path.resolve())
        recent = [entry] + [p for p in self.recent_files() if p != entry]
        self.settings.setValue(RECENT_KEY, recent[:RECENT_LIMIT])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for i, path in enumerate(recent):
            action = self.recent_menu.addAction(f"&{i + 1} {Path(path).name}")
            action.setToolTip(path)
            action.triggered.connect(lambda checked=False, p=path: self.open_path(p))
        if not recent:
            self.recent_menu.addAction("No recent files").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear Recent Files").triggered.connect(
                lambda: self.settings.setValue(RECENT_KEY, []))

    def _start_folder(self) -> str:
        return str(self.session.path.parent) if self.session.path else ""

    # --- dialogs (methods, so tests can replace them) ------------------------------------

    def show_error(self, title: str, message: str) -> None:
        """Show `message` in a window-modal error box that does not block the caller."""
        self.error_box = QMessageBox(QMessageBox.Icon.Critical, title, message,
                                     QMessageBox.StandardButton.Ok, self)
        self.error_box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.error_box.open()

    def confirm_discard(self) -> bool:
        """True when there are no unsaved changes, or the user saves or discards them."""
        if self.session.undo_stack.isClean():
            return True
        answer = QMessageBox.warning(
            self, "Unsaved changes",
            "The request order or plan settings have changed "
            + ("since the session was saved." if self.session_file is not None
               else "and are not saved in a session file."),
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save_session()
        return answer == QMessageBox.StandardButton.Discard

    def showEvent(self, event) -> None:
        """The first show puts the Peak tab over the inspector, in front: the answer first.
        Tabified before the window is shown, a second tab group keeps a stale duplicate tab bar
        on screen (Qt 6.11)."""
        super().showEvent(event)
        # A layout restored from the settings may have placed it already.
        if not self._peak_tabbed and not self.tabifiedDockWidgets(self.docks["peak"]):
            self._peak_tabbed = True
            self.tabifyDockWidget(self.docks["inspector"], self.docks["peak"])
            self.docks["peak"].raise_()
            if not self._geometry_restored:
                # Shown untabified, the docks stacked made the window at least 892 pixels
                # tall, taller than a laptop's screen; tabbed, it may be smaller again.
                self.resize(self._first_size())
            self._size_docks()  # tabifying lays the docks out anew

    def _first_size(self) -> QSize:
        """`DEFAULT_SIZE`, within the screen's room for windows (an offscreen platform's
        screen is a nominal 800 x 600 that nothing is shown on)."""
        screen = self.screen()
        if screen is None or QGuiApplication.platformName() == "offscreen":
            return DEFAULT_SIZE
        return DEFAULT_SIZE.boundedTo(screen.availableSize())

    def _size_docks(self) -> None:
        """The docks' default sizes."""
        self.resizeDocks([self.docks["requests"], self.docks["inspector"]], [230, 520],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["slab"]], [SLAB_DOCK_HEIGHT], Qt.Orientation.Vertical)
        # The Peak panel (tabbed with the inspector) takes the height; the node panel a few lines.
        self.resizeDocks([self.docks["inspector"], self.docks["node"]], [600, 70],
                         Qt.Orientation.Vertical)

    def closeEvent(self, event) -> None:
        if self.confirm_discard():
            self._stop_planning()
            # A window built only to be exported (never on screen) must not overwrite the user's.
            if not self.testAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen):
                self.settings.setValue(GEOMETRY_KEY, self.saveGeometry())
                self.settings.setValue(LAYOUT_KEY, self.saveState())
                # A comparison is done again at the next start only where its dock was left
                # open (in front or behind a tab): a closed dock means no longer wanted.
                open_ = self.docks["compare"].toggleViewAction().isChecked()
                compared = self.compare_controller.remembered() if open_ else None
                if compared is None:
                    self.settings.remove(COMPARE_KEY)
                else:
                    self.settings.setValue(COMPARE_KEY, str(compared))
            event.accept()
        else:
            event.ignore()

    def _restore_layout(self) -> None:
        """Put the window and its docks back as the user left them last time, and compare the
        first graph shown with the file compared with then (in the background)."""
        geometry = self.settings.value(GEOMETRY_KEY)
        if geometry is not None:
            self._geometry_restored = self.restoreGeometry(geometry)
        layout = self.settings.value(LAYOUT_KEY)
        if layout is not None:
            self.restoreState(layout)
        compared = self.settings.value(COMPARE_KEY)
        if isinstance(compared, str) and compared:
            self.compare_controller.restore(compared)

    # --- drag and drop -------------------------------------------------------------------

    def dragEnterEvent(self, event) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            # Shift held: compare the open graph with the dropped file instead of opening it.
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and self.session.graph:
                self.compare_controller.compare_with(files[0])
            else:
                self.open_path(files[0])

    # --- title and status ----------------------------------------------------------------

    def cancel_work(self) -> None:
        """Esc: stop the load, plan or search running; else the run."""
        if self.session.busy is not None:
            self.session.cancel()
        else:
            self.run_controller.cancel()

    def _cancel_lane(self, lane: TaskLane) -> None:
        """The progress bar's Cancel: the session's own work is cancelled through the session."""
        if lane is self.planning:
            self.session.cancel()
        else:
            lane.cancel()

    def _sync_cancel_action(self, *_) -> None:
        self.cancel_action.setEnabled(self.session.busy is not None or self.run_controller.running)

    def _stop_planning(self) -> None:
        """Stop the background workers and give the session back its at-once executor."""
        self.executor.shutdown()
        self.busy_timer.stop()
        if self.session.executor is self.planning:
            self.session.use_executor(None)

    def _busy_changed(self, label: str | None) -> None:
        """Start or stop the status bar's running count; mark the panels that wait."""
        busy = label is not None
        self._sync_cancel_action()
        if busy:
            self.busy_timer.start()
        else:
            self.busy_timer.stop()
        self._show_busy()
        self._show_marks()

    def _show_marks(self, *_) -> None:
        """Veil the panels whose content is being made, or is out of date, and say so in the
        title and summary."""
        session = self.session
        if session.busy is not None and session.loading:
            text = f"{session.busy}…"
        elif session.plan_provisional:  # every panel of the plan shows search's best so far
            text = f"Searching… best so far {self._provisional_text()} (provisional)"
        elif session.busy is not None:
            text = "Planning… the earlier plan is shown" if session.plan_stale else "Planning…"
        elif session.plan_stale:
            text = "Out of date: planning was cancelled"
        else:
            text = None
        for name, overlay in self.busy_overlays.items():
            # The graph panel depends on the graph only: it waits for loads, never for plans.
            overlay.set_text(text if name != "graph" or session.loading else None)
        self._update_title()
        self._update_summary()

    def _show_expandable(self) -> None:
        """The allocator lever: the Allocator tab, replaying with expandable segments."""
        self.allocator_panel.expandable.setChecked(True)
        self.docks["allocator"].raise_()

    def _provisional_text(self) -> str:
        """Search's best slab so far, and how far above the lower bound it is."""
        slab = self.session.provisional_plan.slab_bytes
        bound = self.session.lower_bound()
        if bound is None or not bound.bytes:
            return format_bytes(slab)
        return f"{format_bytes(slab)}, {slab / bound.bytes - 1:.2%} above the bound"

    def _show_busy(self) -> None:
        session = self.session
        if session.busy is None:
            self.busy_label.setText("")
            return
        elapsed = time.monotonic() - (session.busy_since or time.monotonic())
        self.busy_label.setText(f"{session.busy}… {elapsed:.1f} s (Esc cancels)")

    def _overview_changed(self, shown: bool) -> None:
        self.overview_action.setChecked(shown)
        self.settings.setValue(OVERVIEW_KEY, shown)

    def _sync_run_action(self, *_) -> None:
        """Run only when the graph can execute; otherwise its tooltip says why not."""
        reason = None
        if self.session.graph is None:
            reason = "Open a graph first."
        else:
            from slabscope.gpu.program import run_unavailable

            unavailable = run_unavailable(self.session.graph, self.session.path)
            reason = f"Cannot run: {unavailable}" if unavailable else None
        self.run_action.setEnabled(reason is None)
        self.run_action.setToolTip(reason or "Execute the plan in one slab and measure its phases")
        snapshot = getattr(self.session.graph, "allocator", None) is not None
        self.timeline_view.set_empty_text(run_unavailable_text(reason, snapshot))

    def _run_failed(self, message: str) -> None:
        """A failed run is shown in the timeline (raised) and in a dialog."""
        self.timeline_view.show_failure(message)
        self.docks["timeline"].raise_()
        self.show_error("Run failed", message)

    def enter_export(self) -> None:
        """Draw the window for a picture: panels in their export modes, no passing message."""
        enter_window_export(self)

    def leave_export(self) -> None:
        """Back from `enter_export`."""
        leave_window_export(self)

    def show_shortcuts(self) -> None:
        """Help ▸ Keyboard Shortcuts: every shortcut of the menus and the panels."""
        self.shortcuts_dialog = ShortcutsDialog(self)
        self.shortcuts_dialog.open()

    def _remember_error(self, message: str) -> None:
        self.last_error = message
        self.statusBar().showMessage(message, 10000)

    def _update_title(self, *_):
        shown = self.session_file or self.session.path
        name = shown.name if shown else "no graph"
        state = " (planning…)" if self.session.busy else (
            " (plan out of date)" if self.session.plan_stale else "")
        self.setWindowTitle(f"{name}[*]{state} — Slabscope")
        self.setWindowModified(not self.session.undo_stack.isClean())

    def _update_summary(self, *_):
        self.summary_label.setText(self.summary_text())

    def summary_text(self) -> str:
        """The status bar's one-line summary of the graph and its plan."""
        graph, plan = self.session.graph, self.session.shown_plan
        if graph is None:
            return "No graph open"
        head = f"{counted(len(graph.buffers), 'buffer')} · {counted(len(graph.nodes), 'node')}"
        if plan is None:
            return f"{head} · no plan: {self.session.plan_error or 'planning'}"
        if self.session.plan_stale:
            head += " · out of date"
        elif self.session.plan_provisional:
            head += " · provisional (search continues)"
        return (f"{head} · {headline_line(self.session)} · {plan.algorithm}, "
                f"{plan.conflict_model} conflicts · without reuse "
                f"{format_bytes(plan.no_reuse_bytes)}")
