"""The Compare dock across a restart: the window's saved layout puts it back where it was, and
the file it compared with is compared again in the background, or the dock says why not."""

from __future__ import annotations

import shutil
import threading

import pytest
from PySide6.QtCore import QSettings, Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.compare import compare_actions
from slabscope.app.views.compare.compare_view import EMPTY_TEXT
from slabscope.app.window import COMPARE_KEY, MainWindow
from tests.examples import DIAMOND, RELU_UNFUSED
from tests.qt_waits import settled


@pytest.fixture
def files(tmp_path):
    """Copies of the two graphs compared (one of them is deleted by a test)."""
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


def test_the_compare_dock_comes_back_where_it_was_and_compares_again(qtbot, tmp_path, files,
                                                                     monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files, lambda window, dock: window.addDockWidget(
        Qt.DockWidgetArea.RightDockWidgetArea, dock))
    assert QSettings(str(ini), QSettings.Format.IniFormat).value(COMPARE_KEY) == str(files[1])

    # The comparison is held on its worker until the test has seen the dock meanwhile.
    threads, release = [], threading.Event()
    compare = compare_actions.compare_with

    def held(*args):
        threads.append(threading.current_thread())
        release.wait(20)
        return compare(*args)

    monkeypatch.setattr(compare_actions, "compare_with", held)
    window, errors = started(qtbot, ini, monkeypatch)
    dock = window.docks["compare"]
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert not dock.isHidden() and not window.tabifiedDockWidgets(dock)
    opened(window, files[0])
    qtbot.waitUntil(lambda: bool(threads))
    assert threads[0] is not threading.main_thread()
    assert window.compare_view.comparison is None
    assert window.compare_view.empty.text() == f"Comparing with {DIAMOND.name}…"
    release.set()
    qtbot.waitUntil(lambda: window.compare_view.comparison is not None, timeout=20000)
    assert window.compare_view.comparison.b_path == files[1]
    assert window.compare_view.current_grouping() is not None and window.compare_view.rows()
    assert window.session.compare_path == files[1] and not errors
    settled(qtbot, window)


def test_a_compared_file_gone_since_is_named_in_the_dock_that_was_in_front(qtbot, tmp_path,
                                                                          files, monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files)  # the Compare tab came forward
    files[1].unlink()

    window, errors = started(qtbot, ini, monkeypatch)
    dock = window.docks["compare"]
    assert not dock.visibleRegion().isEmpty()  # the front tab again
    assert window.docks["slab"].visibleRegion().isEmpty()
    opened(window, files[0])
    view = window.compare_view
    qtbot.waitUntil(lambda: "cannot compare" in view.empty.text(), timeout=20000)
    assert view.pages.currentWidget() is view.empty and view.comparison is None
    assert DIAMOND.name in view.empty.text() and str(files[1]) in view.empty.text()
    assert "File ▸ Compare With…" in view.empty.text()
    assert not errors  # no dialog at start-up
    assert window.session.compare_path is None
    settled(qtbot, window)
    window.close()
    assert window.settings.value(COMPARE_KEY) is None  # not tried again at the next start


def test_a_closed_compare_dock_stays_closed_and_a_session_file_names_its_own(qtbot, tmp_path,
                                                                            files, monkeypatch):
    ini = tmp_path / "settings.ini"
    compared_and_closed(qtbot, ini, monkeypatch, files, lambda window, dock: dock.close())
    # Closed, the comparison is not remembered: the next start does not compare again.
    assert QSettings(str(ini), QSettings.Format.IniFormat).value(COMPARE_KEY) is None
    window, errors = started(qtbot, ini, monkeypatch)
    assert window.docks["compare"].isHidden()
    session = tmp_path / "own.slabscope"
    shutil.copy(RELU_UNFUSED, tmp_path / "other.json")
    session.write_text('{"format": "slabscope-session", "version": 1, "graph": "%s", '
                       '"compare": "other.json"}' % RELU_UNFUSED.name)
    assert window.open_path(session)
    qtbot.waitUntil(lambda: window.compare_view.comparison is not None, timeout=20000)
    assert window.compare_view.comparison.b_path == (tmp_path / "other.json").resolve()
    assert not errors
    settled(qtbot, window)


def test_a_first_comparison_cancelled_leaves_the_page_that_says_how_to_start(qtbot, window,
                                                                           monkeypatch):
    release = threading.Event()
    compare = compare_actions.compare_with
    monkeypatch.setattr(compare_actions, "compare_with",
                        lambda *args: release.wait(20) and compare(*args))
    window.compare_controller.compare_with(DIAMOND)
    view, lane = window.compare_view, window.executor.lane("compare")
    assert view.empty.text() == f"Comparing with {DIAMOND.name}…"
    lane.cancel()
    release.set()
    qtbot.waitUntil(lambda: not lane.running)
    assert view.empty.text() == EMPTY_TEXT and window.session.compare_path is None
