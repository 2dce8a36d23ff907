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
from slabscope.app.cli import main
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


def test_curves_peaks_table_highlight_drop_export_and_a_bad_file(qtbot, window, errors,
                                                                  tmp_path):
    # One window for all of these: each new window costs more than the checks.
    comparison = compared(qtbot, window, RELU_FUSED)
    view = window.compare_view
    assert comparison.diff.b.file == str(RELU_FUSED)
    for side in "ab":
        figures = comparison.side(side)
        x, y = view.curves[side].getData()
        assert x[0] == 0 and x[-1] == comparison.length - 1  # one common step axis
        assert y.max() == figures.peak.bytes
        px, py = view.peaks[side].getData()
        assert (px[0], py[0]) == (x[figures.peak.step], figures.peak.bytes)
    assert view.current_grouping() == "op"
    assert view.table.rowCount() == len(view.rows())
    assert sum(r.difference_bytes for r in view.rows()) == comparison.diff.peak_live_difference_bytes

    # Selecting a row fills its buffers' bytes under both curves.
    view.grouping.setCurrentIndex(view.grouping.findData("kind"))
    index = next(i for i, r in enumerate(view.rows()) if r.a_count and r.b_count)
    view.select_row(index)
    row = view.rows()[index]
    for side, peak_bytes in (("a", row.a_bytes), ("b", row.b_bytes)):
        x, y = view.fills[side].getData()
        assert y[comparison.side(side).peak.step] == peak_bytes  # the row's bytes at the peak
        assert np.all(y <= view.curves[side].getData()[1])  # under the whole curve
    view.table.clearSelection()
    cleared = view.fills["a"].getData()[1]
    assert cleared is None or not len(cleared)

    assert window.export_png("compare", tmp_path / "compare.png", 1.0)
    assert (tmp_path / "compare.png").stat().st_size > 1000

    # Shift+drop compares with the dropped file instead of opening it.
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(DIAMOND))])
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data,
                                Qt.MouseButton.NoButton, Qt.KeyboardModifier.ShiftModifier))
    qtbot.waitUntil(lambda: view.comparison.b_path == DIAMOND, timeout=20000)
    assert window.session.path == RELU_UNFUSED
    assert view.current_grouping() == "kind"  # the diamond has no ops: kinds are common

    # Cancelled (the status bar's Cancel), the comparison shown stays in force.
    window.compare_controller.compare_with(RELU_FUSED)
    lane = window.executor.lane("compare")
    lane.cancel()
    qtbot.waitUntil(lambda: not lane.running)
    assert window.session.compare_path == DIAMOND and view.comparison.b_path == DIAMOND

    # The comparison runs on the executor's lane; a file that cannot be read says why.
    lane = window.executor.lane("compare")
    window.compare_controller.compare_with(tmp_path / "missing.json")
    assert lane.running  # submitted, not made in the call
    veil = window.compare_controller.veil
    assert "missing.json" in veil.text  # the comparison shown is veiled meanwhile
    qtbot.waitUntil(lambda: bool(errors))
    qtbot.waitUntil(lambda: veil.isHidden())
    assert errors[0][0] == "Cannot compare" and "missing.json" in errors[0][1]
    assert view.comparison is None and window.session.compare_path is None


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


def test_steps_of_both_sides_stretch_to_the_longer():
    a, b = planner.load(RELU_UNFUSED), planner.load(DIAMOND)
    comparison = compare_with(a, "a", DIAMOND, CancelToken())
    longer = max(comparison.a_lifetimes.steps, comparison.b_lifetimes.steps)
    for side in "ab":
        steps = comparison.steps(side)
        assert steps[-1] == longer - 1 and steps[0] == 0
    assert comparison.diff.b.peak.bytes == planner.diff(a, b).b.peak.bytes


def test_export_draws_the_compare_view_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "compare.png"
    assert main(["export", str(RELU_UNFUSED), "--view", "compare", "--compare", str(DIAMOND),
                 "--png", str(out)]) == 0
    assert out.stat().st_size > 1000 and "compare view" in capsys.readouterr().out
    assert main(["export", str(RELU_UNFUSED), "--view", "compare", "--png", str(out)]) == 2


def test_a_session_names_the_compared_file_inside_its_folder(tmp_path):
    from slabscope.app.state.session_file import read_session

    shutil.copy(RELU_UNFUSED, tmp_path / "a.json")
    shutil.copy(DIAMOND, tmp_path / "b.json")

    def session(compare):
        path = tmp_path / "s.slabscope"
        path.write_text(json.dumps({"format": "slabscope-session", "version": 1,
                                    "graph": "a.json", "compare": compare}))
        return path

    assert read_session(session("b.json"))[2]["compare"] == (tmp_path / "b.json").resolve()
    for outside in ("../b.json", str(tmp_path / "b.json"), 7):
        with pytest.raises(planner.PlanError, match="compare"):
            read_session(session(outside))
