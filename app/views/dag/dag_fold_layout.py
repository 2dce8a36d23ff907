"""Folding the DAG, and opening or closing a folded group, laid out off the GUI thread: a group
of a few hundred nodes takes about 0.3 s to lay out and draw, and folding a 10,000-node graph
0.1 s, which would freeze the window."""

from __future__ import annotations

import threading

from PySide6.QtCore import QCoreApplication, QObject, Signal

from typing import Callable

from slabscope.app.views.dag.dag_folding import Folding
from slabscope.app.views.dag.dag_prepared import PreparedDag, prepare_dag


class FoldLayouts(QObject):
    """Makes a `Folding` and its drawing on a background thread; `sigReady(folding, prepared)`
    comes back on the GUI thread for the latest request only."""

    sigReady = Signal(object, object)
    _relay = Signal(int, object, object)  # from the worker thread, queued to this object's

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._latest = 0  # requests are numbered; an older one's result is dropped
        self._thread: threading.Thread | None = None
        self._relay.connect(self._arrived)

    @property
    def pending(self) -> bool:
        """Whether a requested layout has not come back yet."""
        return self._latest > 0

    def lay_out(self, make: Callable[[], Folding]) -> None:
        """Make the folding `make()` returns (it must not touch Qt widgets) and lay it out."""
        self._latest = request = abs(self._latest) + 1

        def work() -> None:
            new = make()
            prepared = prepare_dag(new.graph)
            if prepared is not None:
                prepared.drawing()
            try:
                self._relay.emit(request, new, prepared)
            except RuntimeError:
                pass  # the view was closed meanwhile

        self._thread = threading.Thread(target=work, name="dag-fold-layout", daemon=True)
        self._thread.start()

    def wait(self, timeout: float = 60.0) -> None:
        """Block until the latest request's layout has come back (a picture must show it)."""
        if self.pending and self._thread is not None:
            self._thread.join(timeout)
            QCoreApplication.sendPostedEvents(self)  # its queued result, delivered now

    def cancel(self) -> None:
        """Drop the result of any request made so far."""
        self._latest = -abs(self._latest)

    def _arrived(self, request: int, folding: Folding, prepared: PreparedDag | None) -> None:
        if request == self._latest:
            self._latest = -request
            self.sigReady.emit(folding, prepared)
