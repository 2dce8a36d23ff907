"""The central panel: the DAG, or live bytes over time when the graph is only a chain of time
steps (a trace file or a snapshot), where drawing the chain would tell nothing."""

from __future__ import annotations

from PySide6.QtWidgets import QStackedWidget

from slabscope.app.views.dag.dag_view import DagView
from slabscope.app.views.timeline.live_bytes_view import LiveBytesView, graph_is_time_chain


class GraphPanel(QStackedWidget):
    """Shows `dag_view` or `live_view`, whichever suits the session's graph."""

    def __init__(self, session, dag_view: DagView | None = None,
                 live_view: LiveBytesView | None = None, parent=None):
        super().__init__(parent)
        self.session = session
        self.dag_view = dag_view or DagView(session)
        self.live_view = live_view or LiveBytesView(session)
        self.addWidget(self.dag_view)
        self.addWidget(self.live_view)
        session.sigGraphChanged.connect(self._choose)
        self._choose()

    def shows_live_bytes(self) -> bool:
        """Whether the panel shows live bytes over time rather than the DAG."""
        return self.currentWidget() is self.live_view

    def _choose(self, *_) -> None:
        graph = self.session.graph
        self.setCurrentWidget(self.live_view if graph is not None and graph_is_time_chain(graph)
                              else self.dag_view)

    def enter_export(self) -> None:
        """Export whichever panel is on show in its export mode."""
        enter = getattr(self.currentWidget(), "enter_export", None)
        if enter is not None:
            enter()

    def leave_export(self) -> None:
        """Undo `enter_export`."""
        leave = getattr(self.currentWidget(), "leave_export", None)
        if leave is not None:
            leave()
