"""The Compare view: File ▸ Compare With… sets the open graph against a second run, off the GUI
thread; the curves, both live peaks, the attribution table and a row's highlight on both
curves; Shift+drop, session files and PNG export."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.compare.comparison import compare_with
from slabscope.app.window import MainWindow
from slabscope.planner.support.cancel import CancelToken
from tests.examples import DIAMOND, RELU_FUSED, RELU_UNFUSED
from tests.qt_waits import settled


@pytest.fixture
def errors(window, monkeypatch):
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    return shown


def compared(qtbot, window, path):
    """Compare the window's graph with `path` and wait for the view to show it."""
    window.compare_controller.compare_with(path)
    qtbot.waitUntil(lambda: window.compare_view.comparison is not None
                    and window.compare_view.comparison.b_path == path, timeout=20000)
    return window.compare_view.comparison


def test_compare_with_draws_both_curves_peaks_and_the_table(qtbot, window):
    comparison = compared(qtbot, window, DIAMOND)
    view = window.compare_view
    assert comparison.diff.b.file == str(DIAMOND)
    for side in "ab":
        figures = comparison.side(side)
        x, y = view.curves[side].getData()
        assert x[0] == 0 and x[-1] == comparison.length - 1  # one common step axis
        assert y.max() == figures.peak.bytes
        px, py = view.peaks[side].getData()
        assert (px[0], py[0]) == (x[figures.peak.step], figures.peak.bytes)
    assert view.current_grouping() == "kind"  # the diamond has no ops: kinds are common
    rows = view.rows()
    assert view.table.rowCount() == len(rows)
    assert sum(r.difference_bytes for r in rows) == comparison.diff.peak_live_difference_bytes


def test_selecting_a_row_highlights_its_buffers_on_both_curves(qtbot, window):
    comparison = compared(qtbot, window, RELU_FUSED)
    view = window.compare_view
    view.grouping.setCurrentIndex(view.grouping.findData("kind"))
    index = next(i for i, r in enumerate(view.rows()) if r.a_count and r.b_count)
    view.select_row(index)
    row = view.rows()[index]
    for side, peak_bytes in (("a", row.a_bytes), ("b", row.b_bytes)):
        x, y = view.fills[side].getData()
        step = comparison.side(side).peak.step
        assert y[step] == peak_bytes  # at the live peak, exactly the row's bytes
        assert np.all(y <= view.curves[side].getData()[1])  # under the whole curve
    view.table.clearSelection()
    assert view.fills["a"].getData()[0] is None or len(view.fills["a"].getData()[0]) == 0


def test_the_comparison_runs_off_the_gui_thread_and_a_bad_file_says_why(qtbot, window, errors,
                                                                           tmp_path):
    lane = window.executor.lane("compare")
    window.compare_controller.compare_with(tmp_path / "missing.json")
    assert lane.running  # submitted to the executor, not made in the call
    qtbot.waitUntil(lambda: bool(errors))
    assert errors[0][0] == "Cannot compare" and "missing.json" in errors[0][1]
    assert window.compare_view.comparison is None and window.session.compare_path is None


def test_shift_drop_compares_instead_of_opening(qtbot, window):
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(DIAMOND))])
    drop = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data,
                      Qt.MouseButton.NoButton, Qt.KeyboardModifier.ShiftModifier)
    window.dropEvent(drop)
    qtbot.waitUntil(lambda: window.compare_view.comparison is not None, timeout=20000)
    assert window.session.path == RELU_UNFUSED


def test_a_session_file_saves_and_restores_the_comparison(qtbot, window, tmp_path, monkeypatch):
    for source in (RELU_UNFUSED, DIAMOND):
        shutil.copy(source, tmp_path / source.name)
    window.open_path(tmp_path / RELU_UNFUSED.name)
    settled(qtbot, window)
    compared(qtbot, window, tmp_path / DIAMOND.name)
    assert window.save_session_to(tmp_path / "run.slabscope")
    assert json.loads((tmp_path / "run.slabscope").read_text())["compare"] == DIAMOND.name
    other = MainWindow(Session())
    qtbot.addWidget(other)
    other.show()
    assert other.open_path(tmp_path / "run.slabscope")
    qtbot.waitUntil(lambda: other.compare_view.comparison is not None, timeout=20000)
    assert other.compare_view.comparison.b_path == (tmp_path / DIAMOND.name).resolve()


def test_the_compare_view_exports_as_png(qtbot, window, tmp_path):
    compared(qtbot, window, DIAMOND)
    assert window.export_png("compare", tmp_path / "compare.png", 1.0)
    assert (tmp_path / "compare.png").stat().st_size > 1000


def test_steps_of_both_sides_stretch_to_the_longer():
    a, b = planner.load(RELU_UNFUSED), planner.load(DIAMOND)
    comparison = compare_with(a, "a", DIAMOND, CancelToken())
    longer = max(comparison.a_lifetimes.steps, comparison.b_lifetimes.steps)
    for side in "ab":
        steps = comparison.steps(side)
        assert steps[-1] == longer - 1 and steps[0] == 0
    assert comparison.diff.b.peak.bytes == planner.diff(a, b).b.peak.bytes
