"""Labels never collide or get cut: the detail line keeps its height and clears when the pointer
leaves, and the inspector's columns are as wide as their widest value from the start."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.detail_line import LINES, DetailLine  # noqa: E402
from slabscope.app.views.panels.inspector import COLUMNS, Inspector  # noqa: E402
from slabscope.app.views.slab.slab_view import HOVER_HINT, SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def relu_session() -> Session:
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    return session


def test_a_long_detail_line_is_cut_to_its_lines_at_a_fixed_height(qtbot):
    line = DetailLine("short")
    qtbot.addWidget(line)
    line.resize(300, 10)
    line.show()
    height = line.height()
    text = " ".join(f"word{i}" for i in range(200))
    line.setText(text)
    assert line.height() == height
    shown = line.text().split("\n")
    assert len(shown) == LINES and shown[-1].endswith("…")
    assert line.full_text() == text and line.toolTip() == text
    line.setText("short")
    assert line.text() == "short" and line.toolTip() == ""


def test_the_slab_bars_detail_line_clears_when_the_pointer_leaves(qtbot):
    session = relu_session()
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(500, 320)
    view.show()
    qtbot.waitExposed(view)
    plot_height = view.plot_widget.height()
    assert view.hover_at(20_000, 1.5) == "y"
    assert view.details.full_text().startswith("y")
    assert view.plot_widget.height() == plot_height  # a long line does not squeeze the plot
    session.hover_buffer(None)
    assert view.details.full_text() == HOVER_HINT


def test_inspector_columns_fit_their_widest_value_when_built_over_a_plan(qtbot):
    session = relu_session()
    inspector = Inspector(session)  # the plan exists before the table does
    qtbot.addWidget(inspector)
    metrics = inspector.table.fontMetrics()
    header = inspector.table.horizontalHeader()
    inspector.show_column(COLUMNS.index("reserved"), True)  # hidden until chosen
    for column in ("bytes", "reserved", "offset", "lifetime"):
        widest = inspector.model.widest_text(column)
        assert header.sectionSize(COLUMNS.index(column)) >= metrics.horizontalAdvance(widest) + 12
    assert inspector.table.textElideMode() == Qt.TextElideMode.ElideRight
