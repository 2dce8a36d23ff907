"""What keeps the GUI thread's slices short while a large graph opens, checked by behaviour
(never by time): Qt counts the request list's rows without calling Python, and the progress bar
asks for a paint rather than painting the window there and then."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject, QStringListModel, Signal  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from slabscope.app.qt.task_executor import Activity  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.panels.request_list import RequestList, RequestListModel  # noqa: E402
from slabscope.app.views.panels.task_progress import TaskProgress  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def _three_rows(tmp_path):
    """A MiniMalloc trace of three buffers, a, b and c."""
    trace = tmp_path / "trace.csv"
    trace.write_text("id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\n")
    return trace


def _opened(qtbot, tmp_path, panel_class):
    """A session and its `panel_class` panel, with `_three_rows` opened."""
    session = Session()
    panel = panel_class(session)
    qtbot.addWidget(panel)
    session.open(_three_rows(tmp_path))
    return session, panel


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
    session.open(_three_rows(tmp_path))
    assert _rows(model) == ["a", "b", "c"] and model.rowCount() == 3
    assert model.index(3).data() is None and not model.index(3).isValid()
    resets = []
    model.modelReset.connect(lambda: resets.append(model.rowCount()))
    session.open(RELU_UNFUSED)  # more rows than before: still one reset, no row signals
    assert _rows(model) == list(session.order) and resets == [len(session.order)]


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


def _painted_loop(x0, x1, y0, y1, w, h):
    """The cover image as drawing the boxes in turn leaves it (the oracle)."""
    import numpy as np

    cover = np.zeros((h, w), dtype=np.int64)
    for place, (a, b, c, d) in enumerate(zip(y0, y1, x0, x1), start=1):
        cover[a:b, c:d] = place
    return cover


def test_cover_pixels_keeps_the_last_drawn_box_of_each_pixel():
    import numpy as np

    from slabscope.app.views.common import rect_layer

    rng = np.random.default_rng(22)
    for n, w, h, most in ((3000, 120, 40, 4), (500, 30, 10, 3), (40, 50, 20, 30), (1, 3, 2, 9)):
        x0, y0 = rng.integers(0, w, n), rng.integers(0, h, n)
        x1 = np.minimum(x0 + rng.integers(0, most, n), w)  # some boxes clipped to nothing
        y1 = np.minimum(y0 + rng.integers(1, most, n), h)
        listed = rect_layer.cover_pixels(x0, x1, y0, y1, w, h)  # small boxes: listed at once
        assert (listed == _painted_loop(x0, x1, y0, y1, w, h)).all()
    x0, x1, y0, y1 = (np.array(v) for v in ([0, 0], [40, 40], [0, 0], [20, 20]))
    assert (rect_layer.cover_pixels(x0, x1, y0, y1, 40, 20) == 2).all()  # big boxes: one by one


def test_a_dimmed_raster_recolours_its_pixels_without_filling_them_again(qtbot):
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtGui import QColor

    from slabscope.app.views.common.rect_layer import RASTER_BOXES, RectLayer

    n = 2 * RASTER_BOXES + 500  # half of them still take the raster
    plot = pg.PlotWidget(background="w")
    qtbot.addWidget(plot)
    plot.resize(600, 200)
    layer = RectLayer()
    plot.addItem(layer)
    fills = [QColor("#1f77b4"), QColor("#d62728")]
    layer.set_rects([f"b{i}" for i in range(n)], np.arange(n, dtype=float), np.ones(n),
                    np.zeros(n), np.ones(n), [fills[i % 2] for i in range(n)])
    plot.getPlotItem().getViewBox().setRange(xRange=(0, n), yRange=(0, 1), padding=0)
    plot.show()
    qtbot.waitExposed(plot)
    plot.grab()
    cover, image = layer._cover, layer._raster_image[1]
    assert cover is not None and cover.max() > 0
    assert set(np.unique(image)) - {0} <= {0xFF000000 | (c.rgba() & 0xFFFFFF) for c in fills}
    layer.set_emphasis(alpha=np.full(n, 60.0))  # a hovered node dims every other box
    plot.grab()
    assert layer._cover is cover  # the same pixels' boxes: no fill again
    dimmed = layer._raster_image[1]
    assert dimmed is not image
    assert set(np.unique(dimmed)) - {0} <= {(60 << 24) | (c.rgba() & 0xFFFFFF) for c in fills}
    layer.set_emphasis(shown=np.arange(n) % 2 == 0)  # which boxes show: filled again
    plot.grab()
    assert layer._cover is not cover
    assert set(np.unique(layer._raster_image[1])) - {0} == {(60 << 24) | (fills[0].rgba() & 0xFFFFFF)}


def _stroked(layer, left, top, right, bottom, size):
    """The outlines as stroking every box with its pens draws them (the oracle)."""
    import numpy as np
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter, QPen, Qt

    from slabscope.app.views.common.rect_layer import HALO

    image = QImage(*size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    for i, (color, width) in layer._outlines.items():
        half = width / 2
        box = QRectF(left[i] + half, top[i] + half, max(right[i] - left[i] - width, 1.0),
                     max(bottom[i] - top[i] - width, 1.0))
        for pen_color, pen_width in ((HALO, width + 2.0), (color, width)):
            pen = QPen(pen_color, pen_width)
            pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(box)
    painter.end()
    return np.frombuffer(image.constBits(), dtype=np.uint32).reshape(size[1], size[0]).copy()


def test_small_boxes_outlines_are_filled_as_their_stroke_would_cover_them(qtbot):
    import numpy as np
    from PySide6.QtGui import QColor, QImage, QPainter

    from slabscope.app.views.common.rect_layer import RectLayer

    size = (200, 60)
    left = np.array([10.0, 30.0, 50.5, 80.0, 120.0])
    right = np.array([11.0, 33.0, 52.0, 110.0, 190.0])  # slivers, a narrow box, two wide ones
    top = np.array([10.0, 10.0, 20.0, 5.0, 30.0])
    bottom = np.array([40.0, 12.0, 50.0, 45.0, 33.0])
    layer = RectLayer()
    names = [f"b{i}" for i in range(5)]
    layer.set_rects(names, left, right - left, top, bottom - top, [QColor("gray")] * 5)
    red, blue = QColor("red"), QColor("blue")
    layer.set_emphasis(outlines={"b0": (red, 2.5), "b1": (blue, 2.5), "b2": (red, 2.5),
                                 "b3": (red, 2.5), "b4": (blue, 1.0)})
    image = QImage(*size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    layer._paint_outlines(painter, left, top, right, bottom)
    painter.end()
    drawn = np.frombuffer(image.constBits(), dtype=np.uint32).reshape(size[1], size[0])
    expected = _stroked(layer, left, top, right, bottom, size)
    assert (drawn != 0).sum() > 300
    assert (drawn == expected).all()  # pixel for pixel what stroking each box draws
    assert drawn[25, 95] == 0  # a wide box's inside stays unpainted


def test_the_node_index_is_built_while_loading_not_on_the_first_hover(qtbot, tmp_path):
    from slabscope.app.views.dag.node_panel import NodePanel

    session, panel = _opened(qtbot, tmp_path, NodePanel)
    assert "node_index" in vars(session.graph)  # the cached index exists before any hover
    session.hover_node(session.graph.nodes[1].name)
    assert session.graph.nodes[1].name in panel.text.toPlainText()


def test_a_delivered_outcome_is_laid_out_before_the_window_paints(qtbot):
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from slabscope.app.qt.task_executor import TaskLane
    from slabscope.app.state.tasks import Task

    panel = QWidget()
    qtbot.addWidget(panel)
    layout = QVBoxLayout(panel)
    label = QLabel("one line")
    label.setWordWrap(True)
    outer = QWidget(panel)  # a nested level: its own layout request follows the label's
    QVBoxLayout(outer).addWidget(label)
    layout.addWidget(outer)
    layout.addStretch(1)
    panel.resize(200, 400)
    panel.show()
    qtbot.waitExposed(panel)
    before = label.height()
    heights = []
    lane = TaskLane("test")
    lane.sigEnded.connect(lambda task, how: heights.append(label.height()))
    lane.submit(Task("summary", lambda token: "\n".join(["a longer summary"] * 5),
                     label.setText, lambda message: None))
    qtbot.waitUntil(lambda: bool(heights), timeout=5000)
    # Laid out in the slice that delivered it, before any turn of the event loop could paint.
    assert heights[0] > before and heights[0] == label.heightForWidth(label.width())
    qtbot.waitUntil(lambda: not lane.running, timeout=5000)


def test_gui_stalls_names_what_qt_entered_python_for():
    import cProfile
    import pstats

    from bench.gui_stalls import entered_from_qt

    def inner():
        return sum(range(1000))

    def outer():  # stands for a slot or an event handler that Qt calls
        return inner()

    profile = cProfile.Profile()
    profile.enable()
    outer()
    profile.disable()
    lines = entered_from_qt(pstats.Stats(profile), 0.5)
    assert lines[0].startswith("   Python entered from Qt:") and "of 500.0 ms CPU" in lines[0]
    assert any(line.endswith(" outer") for line in lines[1:])
    assert not any(line.endswith(" inner") for line in lines[1:])  # called from Python


def test_the_compare_combos_take_the_graphs_names_as_read(qtbot, tmp_path):
    from slabscope.app.views.panels.inspector import Inspector

    session, inspector = _opened(qtbot, tmp_path, Inspector)
    for combo in (inspector.first, inspector.second):
        assert combo._names is session.graph.buffer_names  # no list made name by name
        combo.showPopup()  # filled on first use, as before
        assert [combo.itemText(i) for i in range(1, combo.count())] == ["a", "b", "c"]
        combo.hidePopup()


def test_request_rows_answer_only_the_roles_they_have(qtbot):
    from PySide6.QtCore import QModelIndex, Qt

    from slabscope.app.views.panels.request_list import SIZE_ROLE

    session = Session()
    session.open(RELU_UNFUSED)
    widget = RequestList(session)
    qtbot.addWidget(widget)
    model = widget.model
    row = model.index(3)
    assert row.data() == "workspace" and int(row.data(SIZE_ROLE)) == 1048576
    assert row.data(Qt.ItemDataRole.DecorationRole).isValid()
    assert row.data(Qt.ItemDataRole.ToolTipRole).startswith("workspace (")
    for role in (Qt.ItemDataRole.EditRole, Qt.ItemDataRole.FontRole,
                 Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.CheckStateRole):
        assert row.data(role) is None  # the base's empty string is never shown
    flags = model.flags(row)
    for flag in (Qt.ItemFlag.ItemIsEnabled, Qt.ItemFlag.ItemIsSelectable,
                 Qt.ItemFlag.ItemIsDragEnabled, Qt.ItemFlag.ItemIsDropEnabled):
        assert flags & flag
    assert not flags & Qt.ItemFlag.ItemIsEditable
    assert model.flags(QModelIndex()) == Qt.ItemFlag.ItemIsDropEnabled


def test_next_turn_runs_after_the_timers_that_fell_due_during_the_work_that_asked(qtbot):
    import time

    from PySide6.QtCore import QTimer

    from slabscope.app.views.common.next_turn import NextTurn

    owner = QObject()
    order = []
    later = NextTurn(owner, lambda: order.append("staged"))
    waiting = QTimer(owner)  # stands for the window's own timers and input
    waiting.setSingleShot(True)
    waiting.timeout.connect(lambda: order.append("waiting"))

    def work():  # a delivery that asks for its staged part first, then works on
        waiting.start(5)
        later.start()
        later.start()  # asked twice: still one call
        assert later.pending
        end = time.perf_counter() + 0.03
        while time.perf_counter() < end:
            pass

    QTimer.singleShot(0, work)
    qtbot.waitUntil(lambda: "staged" in order, timeout=5000)
    qtbot.wait(20)
    assert order == ["waiting", "staged"] and not later.pending
    later.start()
    later.stop()  # withdrawn before it ran: never called
    qtbot.wait(20)
    assert order == ["waiting", "staged"] and not later.pending
