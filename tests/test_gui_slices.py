"""What keeps the GUI thread's slices short while a large graph opens, checked by behaviour
(never by time): Qt counts the request list's rows without calling Python, and the progress bar
asks for a paint rather than painting the window there and then."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject, QStringListModel, Signal  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from slabscope.app.qt.task_executor import Activity  # noqa: E402
from slabscope.app.session import Session  # noqa: E402
from slabscope.app.views.request_list import RequestList, RequestListModel  # noqa: E402
from slabscope.app.views.task_progress import TaskProgress  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def _rows(model) -> list[str]:
    return [model.index(r).data() for r in range(model.rowCount())]


def test_the_request_lists_row_count_is_counted_in_cpp(qtbot, tmp_path):
    # A batched list view asks for the row count twice per row it lays out: no Python there.
    assert "rowCount" not in RequestListModel.__dict__ and "index" not in RequestListModel.__dict__
    session = Session()
    session.open(RELU_UNFUSED)
    widget = RequestList(session)
    qtbot.addWidget(widget)
    model = widget.model
    assert isinstance(model, QStringListModel)
    assert _rows(model) == list(session.order)
    assert model.rowCount(model.index(0)) == 0  # a list: rows have no children
    # A drag, a wholesale reorder and a new graph keep the count and the names in step.
    assert model.move_names([session.order[-1]], 0)
    assert _rows(model) == list(session.order)
    session.sort_by_size()
    assert _rows(model) == list(session.order)
    trace = tmp_path / "trace.csv"
    trace.write_text("id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\n")
    session.open(trace)
    assert _rows(model) == ["a", "b", "c"] and model.rowCount() == 3
    assert model.index(3).data() is None and not model.index(3).isValid()


def test_the_request_list_keeps_the_selection_across_a_reorder(qtbot):
    session = Session()
    session.open(RELU_UNFUSED)
    widget = RequestList(session)
    qtbot.addWidget(widget)
    session.select_buffers(["t0", "y"])
    selected = lambda: sorted(widget.model.names()[i.row()]  # noqa: E731
                              for i in widget.view.selectionModel().selectedRows())
    assert selected() == ["t0", "y"]
    session.sort_by_size()
    assert selected() == ["t0", "y"]
    session.select_buffers([])
    assert selected() == []


class _Executor(QObject):
    """An executor as the progress bar sees it: one activity, announced by `sigActivity`."""

    sigActivity = Signal()

    def __init__(self):
        super().__init__()
        self.current = None

    def activity(self):
        return self.current


class _Paints(QObject):
    def __init__(self, widget):
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def test_the_progress_bar_asks_for_a_paint_instead_of_painting_at_once(qtbot):
    executor = _Executor()
    progress = TaskProgress(executor, lambda lane: None)
    qtbot.addWidget(progress)
    executor.current = Activity(None, "Planning trace", "first fit", None)
    progress.refresh()
    progress.show()
    qtbot.waitExposed(progress)
    QApplication.processEvents()
    paints = _Paints(progress.bar)
    for fraction in (0.25, None, 0.5):  # a new value, a range reset, a new range
        executor.current = Activity(None, "Planning trace", "first fit", fraction)
        progress.refresh()
        assert paints.count == 0  # nothing painted inside the slice that changed it
        qtbot.waitUntil(lambda: paints.count > 0)  # painted on a later turn, with the rest
        paints.count = 0
    assert progress.bar.value() == 50 and progress.bar.maximum() == 100
    assert progress.bar.updatesEnabled()
    assert progress.phase.text() == "first fit" and progress.bar.toolTip() == "Planning trace"
