"""The window's schedule controls: Plan ▸ Schedule (the given order or the best one, beside the
conflict model), a status-bar label with three slabs side by side (DAG-safe, serial in the given
order, serial in the best order), and numbering the DAG's nodes in the chosen order."""

from __future__ import annotations

from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QLabel

from slabscope.app.state.schedule_choice import ScheduleChoice
from slabscope.app.views.panels.request_list import format_bytes

SCHEDULES = {"given": "&Given Order", "best": "&Best Order (least peak)"}


class ScheduleControls:
    """The menu actions and summary label of one window, driven by its `ScheduleChoice`."""

    def __init__(self, window, session, plan_menu):
        self.window, self.session = window, session
        self.choice = ScheduleChoice(session)
        menu = plan_menu.addMenu("&Schedule")
        group = QActionGroup(menu)
        self.actions: dict[str, QAction] = {}
        for which, text in SCHEDULES.items():
            action = menu.addAction(text)
            action.setCheckable(True)
            group.addAction(action)
            action.triggered.connect(lambda checked=False, w=which: self.choice.choose(w))
            self.actions[which] = action
        self.actions["best"].setStatusTip("Find the execution order with the least peak of live "
                                          "bytes (in the background) and plan serially in it")
        menu.addSeparator()
        self.number_action = menu.addAction("&Number DAG Nodes in Execution Order")
        self.number_action.setCheckable(True)
        self.number_action.toggled.connect(self._number_nodes)
        self.label = QLabel(window)
        window.statusBar().addPermanentWidget(self.label)
        self.choice.sigChanged.connect(self._sync)
        session.sigSettingsChanged.connect(self._sync)
        session.sigBusyChanged.connect(self._sync)
        self._sync()

    def summary_text(self) -> str:
        """The best order's live peak beside the given order's, and the three slabs planned in
        the file's request order when it was found (the tooltip), else empty."""
        result = self.choice.result
        if result is None:
            return ""
        chosen = result.schedule
        if chosen.fixed:
            return "schedule: the given order is the only one"
        dag = format_bytes(result.dag_slab) if result.dag_slab is not None else "?"
        return (f"live peak: given order {format_bytes(chosen.given_peak_bytes)}, best order "
                f"{format_bytes(chosen.peak_bytes)} ({chosen.proof or 'no bound'}). Slabs by "
                f"{result.algorithm} in the file's request order: DAG-safe {dag} · serial, given "
                f"order {format_bytes(result.given_slab)} · serial, best order "
                f"{format_bytes(result.best_slab)}")

    def short_text(self) -> str:
        """The two orders' live peaks, for the status bar beside the plan's summary: they depend
        on the order alone, so a later reorder or algorithm never makes them stale (the slabs,
        which do depend on them, are in `summary_text`, the tooltip)."""
        result = self.choice.result
        if result is None or result.schedule.fixed:
            return self.summary_text()
        chosen = result.schedule
        return (f"live peak: given order {format_bytes(chosen.given_peak_bytes)} · best order "
                f"{format_bytes(chosen.peak_bytes)}")

    def _sync(self, *_) -> None:
        for which, action in self.actions.items():
            action.setChecked(which == self.choice.current)
        self.label.setText(self.short_text())
        self.label.setToolTip(self.summary_text())
        self.label.setVisible(bool(self.label.text()))
        self._number_nodes(self.number_action.isChecked())

    def _number_nodes(self, on: bool) -> None:
        """Prefix each DAG node's label with its step in the order planned in."""
        graph = self.session.graph
        items = getattr(self.window.dag_view, "_items", None)
        if graph is None or not items:
            return
        from slabscope.planner.conflicts.serial_model import serial_schedule

        step = {v: s for s, v in enumerate(serial_schedule(graph))} if on else {}
        for index, item in enumerate(items):
            base = getattr(item, "base_label", item.label)
            item.base_label = base
            item.label = f"{step[index]}: {base}" if index in step else base
            item.update()
