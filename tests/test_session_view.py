"""Session files keep the view settings: address mode, the slab bar's zoom, mode and lane
following, and the front tab; File > Save session writes them and opening the file restores
them. A wrong field is one line naming the file and the field."""

from __future__ import annotations

import json
import shutil

import pytest
from PySide6.QtCore import Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.state.session_file import read_session
from slabscope.app.state.view_settings import ViewSettings
from slabscope.app.views.slab.slab_view import ALL_LANES, ONE_STEP
from slabscope.app.window import MainWindow
from tests.examples import RELU_UNFUSED
from tests.qt_waits import settled


def _graph_copy(tmp_path):
    graph = tmp_path / RELU_UNFUSED.name
    shutil.copy(RELU_UNFUSED, graph)
    return graph


def test_saved_view_settings_read_back(tmp_path):
    graph = _graph_copy(tmp_path)
    session = Session()
    session.set_graph(planner.load(graph), graph)
    session.view = ViewSettings(addresses="pytorch", slab="step", tab="timeline",
                                zoom=(128.0, 4096.5), follow_lanes=False)
    path = tmp_path / "s.slabscope"
    session.save_session(path)
    assert json.loads(path.read_text())["view"]["zoom"] == [128.0, 4096.5]
    _, _, settings = read_session(path)
    assert settings["view"] == session.view


def test_a_session_without_view_settings_opens_with_the_defaults(tmp_path):
    graph = _graph_copy(tmp_path)
    path = tmp_path / "old.slabscope"
    path.write_text(json.dumps({"format": "slabscope-session", "version": 1,
                                "graph": graph.name}))
    assert read_session(path)[2]["view"] == ViewSettings()


@pytest.mark.parametrize("view, message", [
    ({"tab": "dag"}, "view 'tab' must be one of slab, lifetime, timeline, allocator, got 'dag'"),
    ({"zoom": [5, 1]}, "view 'zoom' must be [first, last] bytes"),
    ({"zoom": [True, 5]}, "view 'zoom' must be"),
    ({"follow_lanes": 1}, "view 'follow_lanes' must be true or false, got 1"),
    ({"colour": "red"}, "'view' has an unknown key 'colour'"),
    ([], "'view' must be an object"),
])
def test_a_wrong_view_field_is_one_line_naming_it(tmp_path, view, message):
    graph = _graph_copy(tmp_path)
    path = tmp_path / "bad.slabscope"
    path.write_text(json.dumps({"format": "slabscope-session", "version": 1,
                                "graph": graph.name, "view": view}))
    with pytest.raises(planner.PlanError) as caught:
        read_session(path)
    text = str(caught.value)
    assert "\n" not in text and str(path) in text and message in text


def _window(qtbot) -> MainWindow:
    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    settled(qtbot, window)
    return window


def test_the_window_saves_and_restores_its_view(qtbot, tmp_path):
    graph = _graph_copy(tmp_path)
    window = _window(qtbot)
    assert window.open_path(graph)
    settled(qtbot, window)
    slab = window.slab_view
    slab.mode_choice.setCurrentText(ONE_STEP)
    assert slab.handle_key(Qt.Key.Key_Plus) and slab.handle_key(Qt.Key.Key_Right)
    zoomed = slab.view_box.viewRange()[0]
    window.docks["lifetime"].raise_()
    qtbot.waitUntil(lambda: window.session.view.tab == "lifetime")
    path = tmp_path / "kept.slabscope"
    assert window.save_session_to(path)
    assert json.loads(path.read_text())["view"]["slab"] == "step"

    again = _window(qtbot)
    assert again.session.view == ViewSettings() and again.slab_view.mode_choice.currentText() == ALL_LANES
    assert again.open_path(path)
    settled(qtbot, again)
    restored = again.slab_view
    assert restored.mode_choice.currentText() == ONE_STEP and restored.section is not None
    assert restored.zoomed and restored.fit_button.isVisible()
    assert restored.view_box.viewRange()[0] == pytest.approx(zoomed)
    qtbot.waitUntil(lambda: not again.docks["lifetime"].visibleRegion().isEmpty())
    assert again.docks["slab"].visibleRegion().isEmpty()
    # Fitting is a view setting too: the next save says the bar shows the whole slab.
    restored.fit()
    assert again.session.view.zoom is None


def test_opening_a_plain_graph_fits_its_slab_bar(qtbot):
    window = _window(qtbot)
    assert window.slab_view.handle_key(Qt.Key.Key_Plus)
    assert window.session.view.zoom is not None
    assert window.open_path(RELU_UNFUSED)
    settled(qtbot, window)
    assert window.session.view.zoom is None and not window.slab_view.zoomed
