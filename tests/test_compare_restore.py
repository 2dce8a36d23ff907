"""The Compare dock across a restart: the window's saved layout puts it back where it was."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QSettings, Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.window import MainWindow
from tests.examples import DIAMOND, RELU_UNFUSED


@pytest.fixture
def files(tmp_path):
    """Copies of the two graphs compared."""
    for source in (RELU_UNFUSED, DIAMOND):
        shutil.copy(source, tmp_path / source.name)
    return tmp_path / RELU_UNFUSED.name, tmp_path / DIAMOND.name


def started(qtbot, ini, monkeypatch) -> tuple[MainWindow, list]:
    """A shown window keeping its settings in `ini`, and the error dialogs it would show."""
    window = MainWindow(Session(), QSettings(str(ini), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    errors: list[tuple[str, str]] = []
    monkeypatch.setattr(window, "show_error", lambda title, text: errors.append((title, text)))
    window.show()
    qtbot.waitExposed(window)
    return window, errors


def opened(window, path) -> None:
    """Show `path` as `slabscope FILE` does at start-up: read, then handed to the session."""
    window.session.show_session(planner.load(path), path, {})


def compared_and_closed(qtbot, ini, monkeypatch, files, move=None) -> None:
    """A first window compares the first file with the second; `move(window, dock)` arranges
    the Compare dock, then the window closes (saving its layout)."""
    window, _ = started(qtbot, ini, monkeypatch)
    opened(window, files[0])
    window.compare_controller.compare_with(files[1])
    qtbot.waitUntil(lambda: window.compare_view.comparison is not None, timeout=20000)
    if move is not None:
        move(window, window.docks["compare"])
    window.close()


def test_the_compare_dock_comes_back_where_it_was(qtbot, tmp_path, files, monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files, lambda window, dock: window.addDockWidget(
        Qt.DockWidgetArea.RightDockWidgetArea, dock))
    window, _ = started(qtbot, ini, monkeypatch)
    dock = window.docks["compare"]
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert not dock.isHidden() and not window.tabifiedDockWidgets(dock)


def test_the_compare_tab_in_front_comes_back_in_front(qtbot, tmp_path, files, monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files)  # the Compare tab came forward
    window, _ = started(qtbot, ini, monkeypatch)
    assert not window.docks["compare"].visibleRegion().isEmpty()
    assert window.docks["slab"].visibleRegion().isEmpty()


def test_a_closed_compare_dock_stays_closed(qtbot, tmp_path, files, monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files, lambda window, dock: dock.close())
    window, _ = started(qtbot, ini, monkeypatch)
    assert window.docks["compare"].isHidden()
