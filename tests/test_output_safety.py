"""Outputs never harm the user's files: an output that is an input, or named twice, is refused
before any work; every write goes through a temporary file renamed into place, so a failure,
Ctrl+C or kill leaves the old file whole; FIFOs are refused rather than waited on; session saves
keep one backup."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.support import atomic_write
from slabscope.planner.support.atomic_write import BACKUP_SUFFIX, check_outputs, write_atomic
from tests.examples import RELU_UNFUSED

ROOT = Path(__file__).resolve().parent.parent
TRACE = "id,lower,upper,size\na,0,2,64\nb,1,3,32\n"


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def slabscope(*args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slabscope.app.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def inputs(tmp_path):
    graph = tmp_path / "g.json"
    graph.write_bytes(RELU_UNFUSED.read_bytes())
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE)
    return graph, trace


@pytest.fixture(params=["unnamed", "named"])
def temporary_kind(request, tmp_path, monkeypatch):
    """Writes through an unnamed O_TMPFILE file where the system has them, or a named one."""
    if request.param == "unnamed" and not atomic_write._unnamed_supported(tmp_path):
        pytest.skip("no unnamed temporary files here")
    monkeypatch.setattr(atomic_write, "_unnamed_files", [request.param == "unnamed"])
    return request.param


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- an output that is an input --------------------------------------------------------------

@pytest.mark.parametrize("which", [0, 1])
def test_plan_csv_onto_its_input_is_refused_and_the_input_kept(inputs, capsys, which):
    source = inputs[which]
    before = source.read_bytes()
    assert main(["plan", str(source), "--csv", str(source)]) == 2
    err = one_line(capsys.readouterr().err)
    assert "is the input file" in err and str(source) in err
    assert source.read_bytes() == before


@pytest.mark.parametrize("flag", ["--png", "--svg"])
def test_export_onto_its_input_is_refused(qapp, inputs, capsys, flag):
    graph = inputs[0]
    before = graph.read_bytes()
    assert main(["export", str(graph), flag, str(graph)]) == 2
    assert "is the input file" in one_line(capsys.readouterr().err)
    assert graph.read_bytes() == before


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "dotted"])
def test_links_and_other_spellings_of_the_input_are_refused(inputs, capsys, kind):
    trace = inputs[1]
    alias = trace.parent / "alias.csv"
    if kind == "symlink":
        alias.symlink_to(trace.name)
    elif kind == "hardlink":
        os.link(trace, alias)
    else:
        alias = trace.parent / "." / ".." / trace.parent.name / trace.name
    assert main(["plan", str(trace), "--csv", str(alias)]) == 2
    assert "is the input file" in one_line(capsys.readouterr().err)
    assert trace.read_text() == TRACE


def test_one_path_for_both_pictures_is_refused_before_drawing(qapp, inputs, tmp_path, capsys):
    out = tmp_path / "same.out"
    assert main(["export", str(inputs[0]), "--png", str(out), "--svg", str(out)]) == 2
    err = one_line(capsys.readouterr().err)
    assert "also the PNG output" in err and not out.exists()
    assert capsys.readouterr().out == ""  # never "wrote same.out"


def test_outputs_named_through_a_symlink_to_each_other_are_refused(tmp_path):
    (tmp_path / "b.png").symlink_to("a.png")
    with pytest.raises(planner.PlanError, match="also the PNG output"):
        check_outputs([], [("PNG", tmp_path / "a.png"), ("SVG", tmp_path / "b.png")])


# --- outputs that are not regular files -------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("argv", [["plan", str(RELU_UNFUSED), "--csv"], ["generate", "mlp", "-o"]])
def test_a_fifo_output_is_refused_without_blocking(tmp_path, argv):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = slabscope(*argv, fifo, timeout=60)
    assert result.returncode == 2
    assert "a FIFO, not a regular file" in one_line(result.stderr)


# --- writes are whole or not at all -----------------------------------------------------------

def test_a_failed_write_keeps_the_old_file_and_leaves_nothing(tmp_path, monkeypatch,
                                                             temporary_kind):
    target = tmp_path / "plan.csv"
    target.write_text("old\n")

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "write", full)
    with pytest.raises(planner.PlanError, match="No space left on device") as caught:
        write_atomic(target, "new\n" * 1000, "CSV")
    assert "\n" not in str(caught.value) and str(target) in str(caught.value)
    monkeypatch.undo()
    assert target.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_ctrl_c_during_a_write_keeps_the_old_file(tmp_path, monkeypatch, temporary_kind):
    target = tmp_path / "graph.json"
    target.write_text("old\n")
    real_write = os.write

    def interrupted(fd, data):
        real_write(fd, bytes(data[:10]))
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic_write.os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "x" * 10_000)
    monkeypatch.undo()
    assert target.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_a_write_keeps_the_permissions_and_follows_a_symlink(tmp_path, temporary_kind):
    real = tmp_path / "real.csv"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(real.name)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o640 and _leftovers(tmp_path) == []


_WRITER = """
import sys
from slabscope.planner.support.atomic_write import write_atomic
target, size = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
k = 0
while True:
    write_atomic(target, (b"ab"[k % 2:k % 2 + 1]) * size)
    k += 1
"""


@pytest.mark.parametrize("sig, delays", [(signal.SIGKILL, (0.2,)), (signal.SIGTERM, (0.1,))])
def test_a_killed_writer_leaves_the_file_whole(tmp_path, sig, delays):
    target = tmp_path / "out.bin"
    size = 2_000_000
    target.write_bytes(b"o" * size)
    for delay in delays:
        process = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), str(size)],
                                   cwd=ROOT, stdout=subprocess.PIPE)
        process.stdout.readline()
        time.sleep(delay)
        process.send_signal(sig)
        process.wait(timeout=30)
        process.stdout.close()
        data = target.read_bytes()
        assert len(data) == size and data in (b"o" * size, b"a" * size, b"b" * size)


def test_a_terminated_command_removes_its_temporary_file(tmp_path):
    # SIGTERM is an exception in the command line: the write under way cleans up after itself.
    target = tmp_path / "out.bin"
    script = ("import sys, os, signal\n"
              "from slabscope.app.cli.long_work import terminate_cleanly\n"
              "from slabscope.planner.support import atomic_write\n"
              "real = os.write\n"
              "def slow(fd, data):\n"
              "    os.kill(os.getpid(), signal.SIGTERM)\n"
              "    return real(fd, data)\n"
              "atomic_write.os.write = slow\n"
              "with terminate_cleanly():\n"
              f"    atomic_write.write_atomic({str(target)!r}, b'x' * 100)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=60)
    assert result.returncode == 128 + signal.SIGTERM
    assert not target.exists() and _leftovers(tmp_path) == []


# --- session saves ----------------------------------------------------------------------------

def test_session_saves_keep_one_backup(tmp_path, inputs):
    from slabscope.app.state.session import Session

    session = Session()
    session.set_graph(planner.load(inputs[0]), inputs[0])
    path = tmp_path / "s.slabscope"
    session.save_session(path)
    first = path.read_text()
    session.set_algorithm("best-fit")
    session.save_session(path)
    assert json.loads(path.read_text())["algorithm"] == "best-fit"
    assert (tmp_path / f"s.slabscope{BACKUP_SUFFIX}").read_text() == first
    session.set_algorithm("largest-first")
    session.save_session(path)
    backup = json.loads((tmp_path / f"s.slabscope{BACKUP_SUFFIX}").read_text())
    assert backup["algorithm"] == "best-fit" and _leftovers(tmp_path) == []


def test_a_session_is_never_saved_over_its_graph(inputs):
    from slabscope.app.state.session import Session

    session = Session()
    graph = inputs[0]
    before = graph.read_bytes()
    session.set_graph(planner.load(graph), graph)
    with pytest.raises(planner.PlanError, match="is the input file"):
        session.save_session(graph)
    assert graph.read_bytes() == before


def test_the_windows_export_never_overwrites_the_open_graph(qtbot, inputs):
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    graph = inputs[0]
    before = graph.read_bytes()
    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    session.set_graph(planner.load(graph), graph)
    assert not window.export_png("slab", graph)
    assert "is the input file" in window.error_box.text()
    assert graph.read_bytes() == before
    out = graph.with_name("slab.png")
    assert window.export_png("slab", out) and out.read_bytes().startswith(b"\x89PNG")
    assert _leftovers(graph.parent) == []


def test_generated_graphs_are_written_whole(tmp_path, capsys):
    out = tmp_path / "mlp.json"
    out.write_text("old")
    assert main(["generate", "mlp", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["nodes"] and _leftovers(tmp_path) == []
