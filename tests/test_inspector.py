"""The inspector: buffer table, summary, and the two-buffer comparison."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.panels.inspector import COLUMNS, Inspector
from tests.examples import RELU_UNFUSED


@pytest.fixture
def inspector(qtbot):
    session = Session()
    session.open(RELU_UNFUSED)
    widget = Inspector(session)
    qtbot.addWidget(widget)
    return widget


def column(widget, name):
    proxy = widget.proxy
    c = COLUMNS.index(name)
    return [proxy.index(r, c).data() for r in range(proxy.rowCount())]


def test_table_shows_every_buffer_with_its_offset(inspector):
    assert column(inspector, "name") == ["x", "w", "b", "workspace", "t0", "t1", "y"]
    assert column(inspector, "offset") == ["0", "65,536", "131,072", "131,328", "1,179,904",
                                           "0", "16,384"]
    assert column(inspector, "reuses")[5] == "x"
    assert column(inspector, "conflicts")[6] == "1"  # y conflicts only with t1 (both used by relu)


def test_table_sorts_by_bytes(inspector):
    inspector.table.sortByColumn(COLUMNS.index("bytes"), Qt.SortOrder.DescendingOrder)
    assert column(inspector, "name")[0] == "workspace"
    assert column(inspector, "name")[-1] == "b"


def test_summary_leads_with_live_peak_slab_and_bound_and_ends_with_without_reuse(inspector):
    labels = [label for label, _ in inspector.summary_rows()]
    assert labels[1:4] == ["live peak", "slab", "lower bound"]
    assert "gap 0 B (0.0%)" in dict(inspector.summary_rows())["lower bound"]
    assert labels[-1] == "without reuse"
    text = inspector.summary.text()
    assert "1,196,288" in text and "1,229,056" in text and "32,768" in text and "first-fit" in text
    assert "lower bound" in text


def test_summary_shows_a_capacity_error(inspector):
    inspector.session.set_capacity(1000)
    assert "capacity" in inspector.summary.text()
    inspector.session.undo_stack.undo()
    assert "1,196,288" in inspector.summary.text()


def test_comparing_two_buffers_says_why(inspector):
    inspector.session.select_buffers(["t1", "y"])
    assert inspector.first.currentText() == "t1" and inspector.second.currentText() == "y"
    assert "conflict" in inspector.verdict.text()
    assert "relu cannot reach itself" in inspector.verdict.text()
    inspector.session.select_buffers(["x", "t1"])
    assert "x precedes t1" in inspector.verdict.text()


def test_picking_in_the_combos_selects_in_the_session(inspector):
    inspector.first.setCurrentIndex(inspector.first.findText("w"))
    inspector.second.setCurrentIndex(inspector.second.findText("workspace"))
    assert inspector.session.selection == ("w", "workspace")
    assert "lt_matmul cannot reach itself" in inspector.verdict.text()


def test_selecting_rows_selects_buffers(inspector):
    selection = inspector.table.selectionModel()
    flags = selection.SelectionFlag.Select | selection.SelectionFlag.Rows
    selection.select(inspector.proxy.index(0, 0), flags)
    selection.select(inspector.proxy.index(4, 0), flags)
    assert inspector.session.selection == ("x", "t0")


def test_serial_conflict_counts_come_from_sorted_intervals_and_match_the_masks(tmp_path):
    from slabscope.app.views.panels.inspector import _overlap_counts

    path = tmp_path / "trace.csv"
    path.write_text("id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\nd,3,5,70\ne,9,10,5\n")
    graph = planner.load(path)
    model = planner.conflict_model(graph, "serial")
    counts = _overlap_counts(*model.use_steps())
    assert counts == [model.conflict_mask(i).bit_count() for i in range(len(graph.buffers))]
    assert counts[-1] == 0
