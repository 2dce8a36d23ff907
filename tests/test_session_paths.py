"""A session names its graph relative to its own folder: absolute paths, `..` escapes and symlinks
out of the folder are refused on the command line and asked about in the window, and no error
quotes what is inside a file the user did not open."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.app.state.session_file import SESSION_FORMAT, GraphOutsideSession, read_session
from tests.examples import RELU_UNFUSED

SECRET = "x7Hs9SecretPassw0rd"


def _session(folder: Path, graph: str, **fields) -> Path:
    path = folder / "s.slabscope"
    path.write_text(json.dumps({"format": SESSION_FORMAT, "version": 1, "graph": graph, **fields}))
    return path


@pytest.fixture
def layout(tmp_path):
    """tmp/secret.csv (outside), tmp/work/s.slabscope beside work/g.json and work/sub/h.json."""
    (tmp_path / "secret.csv").write_text(f"id,lower,upper,size\na,0,2,{SECRET}\n")
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "g.json").write_bytes(RELU_UNFUSED.read_bytes())
    (work / "sub" / "h.json").write_bytes(RELU_UNFUSED.read_bytes())
    return work


@pytest.mark.parametrize("graph, why", [
    ("/etc/passwd", "is absolute"),
    ("/proc/self/environ", "is absolute"),
    ("../secret.csv", "leads out of the session's folder"),
    ("../../../../../../../../etc/passwd", "leads out of the session's folder"),
    ("sub/../../secret.csv", "leads out of the session's folder"),
    ("link.csv", "through a symlink"),
])
def test_graphs_outside_the_session_folder_are_refused(layout, graph, why):
    (layout / "link.csv").symlink_to(layout.parent / "secret.csv")
    with pytest.raises(GraphOutsideSession) as caught:
        read_session(_session(layout, graph))
    message = str(caught.value)
    assert why in message and repr(graph) in message and "\n" not in message
    assert SECRET not in message


def test_the_command_line_refuses_in_one_line_with_exit_2(layout, capsys):
    session = _session(layout, "../secret.csv")
    assert main(["open", str(session)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "leads out of the session's folder" in err
    assert SECRET not in err


@pytest.mark.parametrize("graph", ["g.json", "sub/h.json", "./sub/../g.json"])
def test_graphs_inside_the_folder_open(layout, graph):
    loaded, graph_path, _ = read_session(_session(layout, graph))
    assert loaded.buffers and graph_path.is_relative_to(layout.resolve())


def test_a_symlink_that_stays_inside_the_folder_opens(layout):
    (layout / "alias.json").symlink_to("sub/h.json")
    assert read_session(_session(layout, "alias.json"))[1] == (layout / "sub/h.json").resolve()


@pytest.mark.parametrize("content", [
    f"id,lower,upper,size\na,0,2,{SECRET}\n",
    json.dumps({"nodes": [], "buffers": [], "aws_secret_access_key": SECRET}),
    json.dumps({"nodes": [{"name": SECRET, "inputs": [SECRET]}], "buffers": []}),
])
def test_errors_never_quote_the_named_graph(layout, content):
    suffix = ".csv" if content.startswith("id,") else ".json"
    (layout / f"bad{suffix}").write_text(content)
    with pytest.raises(planner.PlanError) as caught:
        read_session(_session(layout, f"bad{suffix}"))
    message = str(caught.value)
    assert "cannot be read as a graph" in message and f"bad{suffix}" in message
    assert SECRET not in message and "aws_secret_access_key" not in message


def test_a_missing_graph_names_the_session_and_the_path(layout):
    with pytest.raises(planner.PlanError, match=r"session .*s\.slabscope: the graph file .*nope"
                                                r"\.json it names does not exist"):
        read_session(_session(layout, "nope.json"))


def test_an_unknown_order_name_names_the_session_file(layout):
    with pytest.raises(planner.PlanError) as caught:
        read_session(_session(layout, "g.json", order=["t1", "zz"]))
    assert str(caught.value).startswith(f"session {layout / 's.slabscope'}: 'order'")
    assert "'zz'" in str(caught.value)


def test_saving_stores_a_path_relative_to_the_session_folder(layout):
    from slabscope.app.state.session import Session

    session = Session()
    session.set_graph(planner.load(layout / "sub" / "h.json"), layout / "sub" / "h.json")
    session.save_session(layout / "s.slabscope")
    assert json.loads((layout / "s.slabscope").read_text())["graph"] == "sub/h.json"
    elsewhere = layout / "sub" / "other.slabscope"
    session.set_graph(planner.load(layout / "g.json"), layout / "g.json")
    session.save_session(elsewhere)
    assert json.loads(elsewhere.read_text())["graph"] == "../g.json"
    with pytest.raises(GraphOutsideSession):
        read_session(elsewhere)
    assert read_session(elsewhere, allow_outside=True)[1] == (layout / "g.json").resolve()


def test_the_window_asks_naming_the_path_and_opens_on_yes(qtbot, layout):
    from PySide6.QtWidgets import QMessageBox

    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    outside = layout.parent / "outside.json"
    outside.write_bytes(RELU_UNFUSED.read_bytes())
    path = _session(layout, "../outside.json")
    window.open_path(path)
    qtbot.waitUntil(lambda: window.outside_box is not None and window.outside_box.isVisible())
    assert str(outside.resolve()) in window.outside_box.text()
    assert session.graph is None
    window.outside_box.button(QMessageBox.StandardButton.Cancel).click()
    assert session.graph is None and window.outside_box is None
    window.open_path(path)
    qtbot.waitUntil(lambda: window.outside_box is not None and window.outside_box.isVisible())
    window.outside_box.button(QMessageBox.StandardButton.Open).click()
    qtbot.waitUntil(lambda: session.plan is not None)
    assert session.path == outside.resolve()


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs /proc")
def test_the_window_never_reads_proc_environ_without_asking(qtbot, layout):
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.open_path(_session(layout, "/proc/self/environ"))
    qtbot.waitUntil(lambda: window.outside_box is not None and window.outside_box.isVisible())
    assert "/proc/self/environ" in window.outside_box.text()
    assert window.error_box is None and session.graph is None
