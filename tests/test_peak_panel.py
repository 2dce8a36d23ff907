"""The Peak panel: the live peak and who is live there at once, groupings adding up, levers
measured by `planner.explain`, and a row that reveals its buffer in every panel."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QImage

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.panels.lever_table import COLUMNS
from slabscope.app.views.panels.peak_panel import LEVER_TEXT, NAME_ROLE, PeakPanel
from slabscope.app.views.panels.ranked_rows import (HEADERS, KIND_COLUMN, MIN_ROWS, NAME_COLUMN,
                                                    NAME_SHARE, WHERE_COLUMN)
from slabscope.planner.analysis.peak import live_peak
from tests.examples import DIAMOND, RELU_UNFUSED, TWO_BRANCHES
from tests.qt_waits import settled


def _panel(qtbot, path, appliers=None):
    session = Session()
    session.set_graph(planner.load(path), path)
    panel = PeakPanel(session, appliers=appliers)
    qtbot.addWidget(panel)
    return session, panel


def _window(qtbot, graph):
    """A window shown over `graph`, its plan arrived."""
    from slabscope.app.window import MainWindow

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.show()
    win.session.set_graph(graph)
    settled(qtbot, win)
    return win


def test_the_ranked_list_is_who_is_live_at_the_live_peak(qtbot):
    session, panel = _panel(qtbot, RELU_UNFUSED)
    live = live_peak(session.graph)
    names = [panel.rows.topLevelItem(i).data(0, NAME_ROLE)
             for i in range(panel.rows.topLevelItemCount())]
    assert names == [session.graph.buffers[b].name for b in live.buffers]
    assert "live peak 1.14 MiB at step 1 (lt_matmul)" in panel.headline.text()
    assert panel.rows.topLevelItem(0).text(3) == "matmul"  # the op that makes it


def test_grouping_by_op_adds_up_to_the_live_peak(qtbot):
    session, panel = _panel(qtbot, RELU_UNFUSED)
    panel.grouping.setCurrentText("op")
    counts = [int(panel.rows.topLevelItem(i).text(2).split()[0])
              for i in range(panel.rows.topLevelItemCount())]
    assert sum(counts) == len(live_peak(session.graph).buffers)
    assert {panel.rows.topLevelItem(i).text(3)
            for i in range(panel.rows.topLevelItemCount())} == {"matmul", "upload"}


def test_selecting_a_row_reveals_the_buffer_everywhere(qtbot):
    session, panel = _panel(qtbot, RELU_UNFUSED)
    revealed = []
    session.selection_model.sigReveal.connect(lambda kind, name: revealed.append((kind, name)))
    panel.rows.setCurrentItem(panel.rows.topLevelItem(1))
    name = panel.rows.topLevelItem(1).data(0, NAME_ROLE)
    assert revealed == [("buffer", name)] and session.selection == (name,)


def test_levers_are_the_measured_ones_with_a_button_that_applies_a_saving(qtbot):
    applied = []
    session, panel = _panel(qtbot, DIAMOND, {"order": lambda: applied.append("order"),
                                             "packing": lambda: applied.append("packing"),
                                             "allocator": lambda: applied.append("allocator"),
                                             "serial": lambda: applied.append("serial")})
    found = panel.explanation
    assert found is not None and found.slab_bytes == session.plan.slab_bytes
    shown = [panel.levers.topLevelItem(i).text(0) for i in range(panel.levers.topLevelItemCount())]
    assert shown == [lever.lever for lever in found.levers]
    for i, lever in enumerate(found.levers):
        button = panel.levers.apply_button(panel.levers.topLevelItem(i))
        assert (button is not None) == (lever.saving_bytes > 0)
        if button is not None:
            button.click()
            assert applied[-1] == lever.lever


def test_the_window_shows_the_peak_tab_in_front_and_a_slab_click_reveals(qtbot):
    from slabscope.app.window import MainWindow

    win = MainWindow(Session())
    qtbot.addWidget(win)
    assert win.open_path(RELU_UNFUSED)
    win.show()
    settled(qtbot, win)
    qtbot.waitUntil(lambda: win.peak_panel.explanation is not None, timeout=10000)
    assert not win.peak_panel.visibleRegion().isEmpty()
    revealed = []
    win.session.selection_model.sigReveal.connect(lambda kind, name: revealed.append(name))
    win.slab_view._clicked("w", Qt.KeyboardModifier.NoModifier)
    assert revealed == ["w"] and win.session.selection == ("w",)


def test_a_peak_row_scrolls_the_request_list_and_the_inspector_to_its_buffer(qtbot):
    # A chain of 300 buffers growing in size: the live peak is at the end of every list.
    count = 300
    data = {"nodes": [f"n{i}" for i in range(count + 1)],
            "edges": [[f"n{i}", f"n{i + 1}"] for i in range(count)],
            "buffers": [{"name": f"b{i}", "bytes": 4096 * (i + 1), "uses": [f"n{i}", f"n{i + 1}"]}
                        for i in range(count)]}
    win = _window(qtbot, planner.graph_from_dict(data))
    panel = win.peak_panel
    item = panel.rows.topLevelItem(0)
    name = item.data(0, NAME_ROLE)
    assert name == f"b{count - 1}"
    panel.rows.setCurrentItem(item)
    assert win.session.selection == (name,)
    requests = win.request_list.view
    row = requests.model().names().index(name)
    assert requests.viewport().rect().contains(requests.visualRect(requests.model().index(row)))
    win.docks["inspector"].raise_()
    qtbot.waitUntil(lambda: win.inspector.table.isVisible())
    table = win.inspector.table
    assert table.verticalScrollBar().value() > 0


def test_a_row_chosen_in_the_request_list_or_inspector_is_revealed_everywhere(window):
    revealed = []
    window.session.selection_model.sigReveal.connect(lambda kind, name: revealed.append(name))
    requests = window.request_list.view
    requests.setCurrentIndex(requests.model().index(requests.model().names().index("t1")))
    assert revealed[-1] == "t1" and window.session.selection == ("t1",)
    table = window.inspector.table
    row = next(r for r in range(table.model().rowCount())
               if table.model().index(r, 0).data() == "y")
    table.selectRow(row)
    assert revealed[-1] == "y" and window.session.selection == ("y",)


STEP = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"


def test_what_to_change_reads_whole_where_a_lever_saves(qtbot):
    session, panel = _panel(qtbot, STEP, {"order": lambda: None, "in place": lambda: None,
                                          "packing": lambda: None})
    panel.resize(520, 700)  # the dock's default width
    panel.show()
    qtbot.waitExposed(panel)
    levers = panel.levers
    # The table is as tall as its rows once they are laid out: none is out of view.
    qtbot.waitUntil(lambda: levers.verticalScrollBar().maximum() == 0
                    and levers.height() == levers.sizeHint().height())
    line = levers.fontMetrics().lineSpacing()
    column = levers.header().sectionSize(COLUMNS - 1)
    saving = 0
    for i, lever in enumerate(panel.explanation.levers):
        item = levers.topLevelItem(i)
        height = levers.visualItemRect(item).height()
        wide = levers.fontMetrics().horizontalAdvance(lever.change) > column
        if lever.saving_bytes > 0:
            saving += 1
            # Wider than its column, the text wraps onto as many lines as it needs.
            assert not wide or height >= 2 * line
            button = levers.apply_button(item)
            assert button.text() == "Apply" and button.toolTip() == LEVER_TEXT[lever.lever]
        else:
            assert height < 2 * line  # one line, cut at the end; the tooltip is whole
        assert lever.change in item.toolTip(COLUMNS - 1) and lever.how in item.toolTip(0)
    assert saving >= 2


def test_a_short_panel_keeps_the_largest_buffers_in_view_and_scrolls_the_levers(qtbot):
    session, panel = _panel(qtbot, STEP, {"order": lambda: None, "in place": lambda: None,
                                          "packing": lambda: None})
    panel.resize(520, 280)  # a laptop's Peak dock: its wrapped levers want more room
    panel.show()
    qtbot.waitExposed(panel)
    rows, levers = panel.rows, panel.levers
    qtbot.waitUntil(lambda: levers.verticalScrollBar().maximum() > 0)
    top = rows.topLevelItem(MIN_ROWS - 1)
    assert rows.visualItemRect(top).bottom() <= rows.viewport().height()  # whole in view


def test_an_exported_window_shows_the_levers_measured_at_the_size_asked(qapp, tmp_path):
    from slabscope.app.render import build_view, collect_qt_garbage, export_view, settle

    session = Session()
    session.set_graph(planner.load(STEP), STEP)
    out = export_view(session, "window", tmp_path / "w.png", 1.0, QSize(1366, 768))
    assert QImage(str(out)).size() == QSize(1366, 768)  # a laptop's screen, not 892 px tall
    window = build_view(session, "window", QSettings(str(tmp_path / "s.ini"),
                                                     QSettings.Format.IniFormat))
    try:
        window.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
        window.show()
        settle(window)
        levers = window.peak_panel.levers
        assert window.peak_panel.explanation is not None
        assert levers.topLevelItem(0).text(0) != "measuring…"
    finally:
        window.close()
        window.deleteLater()
        collect_qt_garbage()


def test_the_serial_levers_button_plans_under_serial_conflicts_and_undo_returns(qtbot):
    win = _window(qtbot, planner.graph_from_dict(TWO_BRANCHES))
    panel = win.peak_panel
    qtbot.waitUntil(lambda: panel.explanation is not None, timeout=10000)
    levers = {panel.levers.topLevelItem(i).text(0): panel.levers.topLevelItem(i)
              for i in range(panel.levers.topLevelItemCount())}
    dag_slab = win.session.plan.slab_bytes
    panel.levers.apply_button(levers["serial"]).click()
    settled(qtbot, win)
    assert win.session.conflicts == "serial" and win.session.plan.conflict_model == "serial"
    assert win.session.plan.slab_bytes < dag_slab
    # Measured anew for the serial plan, where the lever no longer applies.
    qtbot.waitUntil(lambda: panel.explanation.conflicts == "serial", timeout=10000)
    assert "serial" not in {lever.lever for lever in panel.explanation.levers}
    win.session.undo_stack.undo()
    settled(qtbot, win)
    assert win.session.conflicts == "dag" and win.session.plan.slab_bytes == dag_slab


def test_the_windows_levers_are_explains_figures(qtbot):
    # The same file, plan, seed and budget: the same steps, so the same savings to the byte.
    step = Path(__file__).parent / "data" / "steps" / "block_sgd_step.json"
    win = _window(qtbot, planner.load(step))
    panel = win.peak_panel
    qtbot.waitUntil(lambda: panel.explanation is not None, timeout=20000)
    found = planner.explain(win.session.graph, win.session.plan)
    assert [(lever.lever, lever.bytes_after) for lever in panel.explanation.levers] == \
        [(lever.lever, lever.bytes_after) for lever in found.levers]
    assert any(lever.lever == "order" for lever in found.levers)


def test_a_long_token_breaks_where_its_line_is_too_short(qtbot):
    from PySide6.QtGui import QTextLayout, QTextOption
    from PySide6.QtWidgets import QStyleOptionViewItem, QTreeWidgetItem

    from slabscope.app.views.panels.lever_table import WRAP_ROLE, LeverTable

    table = LeverTable()
    qtbot.addWidget(table)
    text = "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    item = QTreeWidgetItem(["allocator", "5.8 GiB", "473 GiB", "", text])
    item.setData(COLUMNS - 1, WRAP_ROLE, True)
    table.addTopLevelItem(item)
    table.resize(420, 200)
    table.show()
    qtbot.waitExposed(table)
    column = table.header().sectionSize(COLUMNS - 1)
    assert table.fontMetrics().horizontalAdvance(text.split()[1]) > column  # wider than a line
    index = table.indexFromItem(item, COLUMNS - 1)
    option = QStyleOptionViewItem()
    table.itemDelegateForColumn(COLUMNS - 1).initStyleOption(option, index)
    # Laid out as the style lays it out (at word boundaries), no line is wider than the column.
    wrap = QTextOption()
    wrap.setWrapMode(QTextOption.WrapMode.WordWrap)
    layout = QTextLayout(option.text, option.font)
    layout.setTextOption(wrap)
    layout.beginLayout()
    widths, line = [], layout.createLine()
    while line.isValid():
        line.setLineWidth(column - 6)
        widths.append(line.naturalTextWidth())
        line = layout.createLine()
    layout.endLayout()
    assert len(widths) >= 2 and max(widths) <= column - 6
    assert option.text.replace("\u200b", "") == text  # only break points were added
    assert table.visualItemRect(item).height() >= len(widths) * table.fontMetrics().lineSpacing()


def test_a_narrow_panel_cuts_op_and_module_then_kind_before_the_buffers_name(qtbot):
    step = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"
    session, panel = _panel(qtbot, step)
    panel.resize(460, 400)
    panel.show()
    qtbot.waitExposed(panel)
    rows, header = panel.rows, panel.rows.header()
    assert rows.headerItem().text(WHERE_COLUMN) == "module"  # what it holds, a word short
    shown = [c for c in range(len(HEADERS)) if not rows.isColumnHidden(c)]
    widths = {c: header.sectionSize(c) for c in shown}
    assert sum(widths.values()) <= rows.viewport().width()  # nothing scrolled out sideways
    room = rows.viewport().width() - widths[0] - widths[1]
    longest = max(rows.sizeHintForColumn(NAME_COLUMN), header.sectionSizeHint(NAME_COLUMN))
    assert widths[NAME_COLUMN] >= min(longest, int(room * NAME_SHARE))
    assert all(widths[NAME_COLUMN] > widths[c] for c in shown if c > NAME_COLUMN)
    assert widths[KIND_COLUMN] >= rows.sizeHintForColumn(KIND_COLUMN)  # "optimizer_state" whole
    panel.resize(1400, 400)  # room for all: every column whole, the name takes the rest
    qtbot.waitUntil(lambda: rows.viewport().width() > 1000)
    assert all(header.sectionSize(c) >= rows.sizeHintForColumn(c) for c in shown)


def test_a_snapshots_rows_name_their_frame_column_and_hide_the_op(qtbot):
    from tests.snapshot_builder import TINY_SNAPSHOT

    _session, panel = _panel(qtbot, TINY_SNAPSHOT)
    rows = panel.rows
    assert rows.headerItem().text(WHERE_COLUMN) == "frame" and not rows.isColumnHidden(WHERE_COLUMN)
    assert rows.isColumnHidden(HEADERS.index("op"))  # a snapshot has no ops
