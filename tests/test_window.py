"""The main window, driven offscreen: the example's offsets, hover, reorder and undo, files.

The window loads and plans in the background, so tests wait for the plan (`settled`).
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QMimeData, QModelIndex, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from slabscope.app import cli
from slabscope.app.state.session import Session
from slabscope.app.views.panels.inspector import COLUMNS
from slabscope.app.window import MainWindow
from tests.examples import DIAMOND, RELU_UNFUSED
from tests.qt_waits import settled

SPEC_OFFSETS = {"x": 0, "w": 65536, "b": 131072, "workspace": 131328, "t0": 1179904,
                "t1": 0, "y": 16384}


@pytest.fixture
def errors(window, monkeypatch):
    """Error dialogs, recorded instead of shown."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    return shown


def shown_offsets(window) -> dict[str, int]:
    """The offsets as the inspector's table shows them."""
    proxy = window.inspector.proxy
    name, offset = COLUMNS.index("name"), COLUMNS.index("offset")
    return {proxy.index(r, name).data(): int(proxy.index(r, offset).data().replace(",", ""))
            for r in range(proxy.rowCount())}


def test_window_opens_on_the_example_with_spec_offsets(window):
    assert shown_offsets(window) == SPEC_OFFSETS
    assert {p.name: p.offset for p in window.session.plan.placements} == SPEC_OFFSETS
    assert "1,196,288" in window.summary_text()
    assert window.windowTitle().startswith("relu_unfused.json")
    assert not window.isWindowModified()


def test_hover_in_the_window_highlights_ancestors_and_descendants(window):
    window.dag_view.simulate_hover("lt_matmul")
    assert window.dag_view.highlighted_ancestors() == {"upload"}
    assert window.dag_view.highlighted_descendants() == {"add_bias", "relu", "readback"}


def test_reorder_replans_marks_modified_and_undo_restores(window, qtbot):
    model, session = window.request_list.model, window.session
    assert model.dropMimeData(model.mimeData([model.index(3)]), Qt.DropAction.MoveAction, 0, 0,
                              QModelIndex())
    settled(qtbot, window)
    assert shown_offsets(window)["workspace"] == 0
    assert shown_offsets(window)["x"] == 1048576
    assert window.isWindowModified()
    undo = next(a for a in window.menuBar().actions() if a.text() == "&Edit").menu().actions()[0]
    assert undo.shortcut().toString() == "Ctrl+Z"
    undo.trigger()  # the earlier plan is kept: back at once, no waiting
    assert session.busy is None
    assert shown_offsets(window) == SPEC_OFFSETS
    assert session.order[0] == "x"
    assert not window.isWindowModified()


def test_broken_file_shows_an_error_and_keeps_the_graph(window, errors, qtbot, tmp_path):
    graph, plan = window.session.graph, window.session.plan
    broken = tmp_path / "broken.json"
    broken.write_text('{"nodes": ["a"], "buffers": [{"name": "p", "bytes": 4, "uses": ["zz"]}]}')
    assert window.open_path(broken)  # returns at once; the error comes when the load fails
    qtbot.waitUntil(lambda: bool(errors))
    settled(qtbot, window)
    assert window.session.graph is graph and window.session.plan is plan
    assert shown_offsets(window) == SPEC_OFFSETS
    assert len(errors) == 1 and "zz" in errors[0][1]
    assert window.windowTitle().startswith("relu_unfused.json")


def test_error_dialog_does_not_block(window, qtbot, tmp_path):
    broken = tmp_path / "bad.json"
    broken.write_text("{not json")
    window.open_path(broken)
    qtbot.waitUntil(lambda: window.error_box is not None)
    assert isinstance(window.error_box, QMessageBox) and window.error_box.isVisible()
    window.error_box.close()


def test_session_round_trip(window, qtbot, tmp_path):
    session = window.session
    session.set_order(["t1", "y"])
    session.set_capacity(2**21)
    settled(qtbot, window)
    path = tmp_path / "tuned.slabscope"
    assert window.save_session_to(path)
    assert session.undo_stack.isClean() and not window.isWindowModified()
    stored = json.loads(path.read_text())
    assert stored["order"][:2] == ["t1", "y"] and stored["capacity"] == 2**21

    other = MainWindow(Session())
    qtbot.addWidget(other)
    assert other.open_path(path)
    # The graph lies outside the session's folder: the window asks first.
    qtbot.waitUntil(lambda: other.outside_box is not None and other.outside_box.isVisible())
    other.outside_box.button(QMessageBox.StandardButton.Open).click()
    settled(qtbot, other)
    assert other.session.order == session.order
    assert other.session.capacity == 2**21
    assert other.session.algorithm == session.algorithm
    assert other.session.path == RELU_UNFUSED.resolve()
    assert other.windowTitle().startswith("tuned.slabscope")
    assert other.recent_files()[0] == str(path.resolve())


def test_bad_session_file_is_reported(window, errors, qtbot, tmp_path):
    path = tmp_path / "odd.slabscope"
    (tmp_path / "relu.json").write_bytes(RELU_UNFUSED.read_bytes())
    path.write_text(json.dumps({"format": "slabscope-session", "version": 1,
                                "graph": "relu.json", "order": ["nope"]}))
    window.open_path(path)
    qtbot.waitUntil(lambda: bool(errors))
    assert "nope" in errors[0][1]


def test_dropping_a_file_opens_it(window, qtbot):
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(DIAMOND))])
    enter = QDragEnterEvent(QPoint(10, 10), Qt.DropAction.CopyAction, data,
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data,
                      Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    settled(qtbot, window)
    assert window.session.path == DIAMOND
    assert {p.name: p.offset for p in window.session.plan.placements} == {"p": 0, "q": 4096, "r": 0}
    assert window.recent_files()[0] == str(DIAMOND.resolve())


def test_closing_with_unsaved_changes_asks(window, qtbot, monkeypatch):
    window.session.sort_by_size()
    settled(qtbot, window)
    answers = iter([QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard])
    monkeypatch.setattr(QMessageBox, "warning", lambda *args, **kwargs: next(answers))
    assert not window.close()
    assert window.isVisible()
    assert window.close()


def test_plan_menu_changes_the_conflict_model_undoably(window, qtbot):
    for name, action in window.conflict_actions.items():
        action.trigger()
        settled(qtbot, window)
        assert window.session.plan.conflict_model == name
        assert window.session.conflicts == name
        assert action.isChecked()
    while window.session.undo_stack.canUndo():
        window.session.undo_stack.undo()
    assert window.conflict_actions["dag"].isChecked()


def test_export_writes_a_png(window, tmp_path):
    path = tmp_path / "dag.png"
    assert window.export_png("dag", path, scale=2)
    from PySide6.QtGui import QImage
    image = QImage(str(path))
    assert image.width() == 2 * window.dag_view.width()


def test_open_command_opens_the_example(qtbot, monkeypatch):
    opened = []

    def fake_exec(app):
        opened.extend(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow))
        for w in opened:
            w.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert cli.main([]) == 0
    assert opened and opened[-1].session.path.name == "relu_unfused.json"
    for w in opened:
        w.deleteLater()


def test_open_command_rejects_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert cli.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("slabscope: ") and err.count("\n") == 1


def test_menu_shortcuts_are_unique(window):
    seen: dict[str, str] = {}

    def walk(menu):
        for action in menu.actions():
            if action.menu():
                walk(action.menu())
            for key in action.shortcuts():
                text = key.toString()
                assert text not in seen, f"{text} is both {seen[text]!r} and {action.text()!r}"
                seen[text] = action.text()

    for top in window.menuBar().actions():
        walk(top.menu())
    assert {"Ctrl+O", "Ctrl+Z", "Ctrl+Shift+Z", "Ctrl+E", "Ctrl+S"} <= set(seen)


def test_window_layout_is_remembered(qtbot, window):
    window.docks["inspector"].hide()
    assert window.close()
    again = MainWindow(Session(), settings=window.settings)
    qtbot.addWidget(again)
    again.show()
    assert again.docks["inspector"].isHidden()
    assert not again.docks["requests"].isHidden()


def test_an_exported_window_leaves_the_saved_layout_alone(qtbot, tmp_path):
    from slabscope.app.render import export_view

    session = Session()
    session.open(RELU_UNFUSED)
    export_view(session, "window", tmp_path / "w.png")
    settings = MainWindow(Session()).settings
    assert settings.value("window/layout") is None and settings.value("window/geometry") is None


def test_the_window_makes_workers_hand_back_the_gil_within_half_a_millisecond(qtbot):
    # A worker running Python kept the GIL for the default 5 ms each time the GUI thread came
    # back from a Qt call; a window shortens that, and never lengthens a shorter setting.
    import sys

    from slabscope.app.qt.gil_turns import GUI_SWITCH_INTERVAL

    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        qtbot.addWidget(MainWindow(Session()))
        assert sys.getswitchinterval() == pytest.approx(GUI_SWITCH_INTERVAL)
        sys.setswitchinterval(0.0001)
        qtbot.addWidget(MainWindow(Session()))
        assert sys.getswitchinterval() == pytest.approx(0.0001)
    finally:
        sys.setswitchinterval(before)


def test_the_overview_switch_is_in_the_view_menu_and_remembered(qtbot, window):
    window.overview_action.trigger()
    assert not window.dag_view.minimap.wanted and not window.overview_action.isChecked()
    again = MainWindow(Session(), settings=window.settings)
    qtbot.addWidget(again)
    assert not again.dag_view.minimap.wanted and not again.overview_action.isChecked()
    again.dag_view.set_overview(True)  # O in the DAG
    assert again.overview_action.isChecked() and window.settings.value("dag/overview", type=bool)
