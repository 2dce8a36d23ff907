"""One selection for every panel, Find, the node panel, and what the window says about runs,
imports, shortcuts and unsaved changes (offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from slabscope.app.views.common.buffer_emphasis import SELECTED
from slabscope.app.views.common.palette import HOVERED
from tests.examples import DIAMOND, onnx_light_model
from tests.qt_waits import settled, show_tab


def test_find_selects_a_buffer_in_every_panel(qtbot, window):
    show_tab(qtbot, window, "lifetime")  # the map behind the Slab tab has drawn nothing yet
    found = window.find_dialog.search("t0")
    assert ("buffer", "t0") in found
    window.find_dialog.choose_current()
    assert window.session.selection == ("t0",)
    assert window.slab_view.layer.outlined()["t0"] == SELECTED
    assert window.lifetime_view.layer.outlined()["t0"] == SELECTED
    assert window.dag_view.highlighted_uses() == {"lt_matmul", "add_bias"}
    assert window.inspector.model.outlines.outline_of("t0") == SELECTED
    assert window.request_list.view.itemDelegate().outlines.outline_of("t0") == SELECTED
    row = window.request_list.model.names().index("t0")
    assert window.request_list.view.selectionModel().isRowSelected(row)


def test_hover_outlines_the_buffer_in_the_list_and_table_too(window):
    window.session.hover_buffer("w")
    assert window.inspector.model.outlines.outline_of("w") == HOVERED
    assert window.request_list.view.itemDelegate().outlines.outline_of("w") == HOVERED
    window.session.hover_buffer(None)
    assert window.inspector.model.outlines.outline_of("w") is None


def test_selecting_a_node_fills_the_node_panel_and_outlines_its_buffers(window):
    window.session.selection_model.reveal("node", "lt_matmul")
    html = window.node_panel.text.toHtml()
    assert "matmul" in html and "64×256" in html and "float32" in html and "workspace" in html
    assert window.dag_view.selected_index == window.session.graph.node_index["lt_matmul"]
    assert set(window.slab_view.layer.outlined()) >= {"x", "w", "t0", "workspace"}


def test_run_is_disabled_with_the_reason_when_the_graph_cannot_execute(window, qtbot):
    assert window.run_action.isEnabled()
    assert window.open_path(DIAMOND)
    settled(qtbot, window)
    assert not window.run_action.isEnabled()
    assert "has no op" in window.run_action.toolTip()


def test_a_run_failure_shows_in_the_timeline_and_a_dialog(window, monkeypatch):
    shown = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    window.run_controller.sigFailed.emit("out of device memory")
    assert shown == [("Run failed", "out of device memory")]
    assert "out of device memory" in window.timeline_view.empty.text()


def test_import_notes_show_in_a_bar_the_user_can_dismiss(window, qtbot):
    assert window.notes_bar.isHidden()
    assert window.open_path(onnx_light_model("light_inception_v1.onnx"))
    settled(qtbot, window, timeout=60000)
    if not window.session.import_notes:
        pytest.skip("this onnx version infers every dimension of inception_v1")
    bar = window.notes_bar
    assert bar.isVisible() and "Import notes" in bar.label.text()
    # One line, so the DAG keeps its rows; Details lists every note.
    assert bar.height() <= bar.label.fontMetrics().height() + 16 and bar.details.isHidden()
    bar.details_button.click()
    assert bar.details.isVisible()
    assert all(note in bar.details.text() for note in window.session.import_notes)
    window.notes_bar.close_button.click()
    assert window.notes_bar.isHidden()


def test_help_lists_the_shortcuts(window):
    window.show_shortcuts()
    text = window.shortcuts_dialog.text.toPlainText()
    assert "Find" in text and "Ctrl+F" in text and "Space plays" in text


def test_unsaved_prompt_does_not_speak_of_a_session_never_saved(window, monkeypatch):
    asked = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: asked.append(args[2])
                        or QMessageBox.StandardButton.Cancel)
    window.session.set_order(["y", "t1"])
    assert not window.confirm_discard()
    assert "not saved in a session file" in asked[0] and "was saved" not in asked[0]
    window.session.undo_stack.setClean()  # closing the window at teardown must not ask again
