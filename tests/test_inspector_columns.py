"""The inspector's table at the window's default size: name, bytes, offset and lifetime in view
without scrolling, each number column as wide as its widest value (a 12-digit offset whole), the
rest chosen from the header's menu."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from slabscope.app.views.common.lifetimes import step_model
from slabscope.app.views.panels.inspector import COLUMNS, SHOWN_COLUMNS
from tests.qt_waits import planned_window

HUGE = 300_000_000_000  # bytes: the second buffer lands at a 12-digit offset


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The window at its default size (blank settings) on a trace with a 12-digit offset."""
    path = tmp_path / "huge.csv"
    rows = ["id,lower,upper,size"] + [f"{i},{i},{i + 30},{HUGE + i}" for i in range(3)]
    path.write_text("\n".join(rows) + "\n")
    return planned_window(qtbot, monkeypatch, tmp_path, path)


def in_view(inspector) -> bool:
    """Whether every shown column fits the table's width (no horizontal scrolling)."""
    header, table = inspector.table.horizontalHeader(), inspector.table
    return (header.length() <= table.viewport().width()
            and table.horizontalScrollBar().maximum() == 0)


def test_name_size_offset_and_lifetime_are_in_view_each_as_wide_as_its_widest(qtbot, window):
    inspector = window.inspector
    table, header = inspector.table, inspector.table.horizontalHeader()
    assert inspector.shown_columns() == list(SHOWN_COLUMNS) == ["name", "bytes", "offset",
                                                                "lifetime"]
    assert in_view(inspector)
    largest = max(p.offset for p in window.session.plan.placements)
    assert len(str(largest)) == 12
    assert inspector.model.widest_text("offset") == f"{largest:,}"
    metrics = table.fontMetrics()
    for column in ("bytes", "offset", "lifetime"):
        widest = inspector.model.widest_text(column)
        assert header.sectionSize(COLUMNS.index(column)) >= metrics.horizontalAdvance(widest) + 12
    # The cell's text is the whole number, not elided.
    row = next(r for r in range(inspector.proxy.rowCount())
               if inspector.proxy.index(r, COLUMNS.index("offset")).data() == f"{largest:,}")
    rect = table.visualRect(inspector.proxy.index(row, COLUMNS.index("offset")))
    assert table.viewport().rect().contains(rect)
    steps = step_model(window.session.graph, window.session.plan.conflict_model)
    assert inspector.proxy.index(0, COLUMNS.index("lifetime")).data() == \
        f"{steps.first[0]}–{steps.last[0]}"


def test_the_column_chooser_shows_and_hides_columns_and_the_name_gives_room(qtbot, window):
    inspector = window.inspector
    header = inspector.table.horizontalHeader()
    name_width = header.sectionSize(COLUMNS.index("name"))
    inspector.column_actions["conflicts"].trigger()  # the header's menu: show "conflicts"
    assert "conflicts" in inspector.shown_columns()
    assert header.sectionSize(COLUMNS.index("name")) < name_width
    assert in_view(inspector)
    inspector.column_actions["conflicts"].trigger()
    assert "conflicts" not in inspector.shown_columns()
    assert header.sectionSize(COLUMNS.index("name")) == name_width
    # The hidden columns' facts are in the row's tooltip.
    tip = inspector.proxy.index(0, COLUMNS.index("name")).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == "0" and "kind:" in tip and "conflicts:" in tip


def test_a_narrower_inspector_narrows_the_name_only(qtbot, window):
    inspector = window.inspector
    window.docks["inspector"].raise_()  # the Peak tab is in front of it
    qtbot.waitUntil(inspector.isVisible)
    header = inspector.table.horizontalHeader()
    widths = {c: header.sectionSize(COLUMNS.index(c)) for c in ("bytes", "offset", "lifetime")}
    name_width = header.sectionSize(COLUMNS.index("name"))
    window.resizeDocks([window.docks["inspector"]], [inspector.width() - 60],
                       Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: header.sectionSize(COLUMNS.index("name")) < name_width)
    assert {c: header.sectionSize(COLUMNS.index(c)) for c in widths} == widths
    assert in_view(inspector)
