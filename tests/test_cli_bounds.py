"""Bounds the command line states up front, in one line with exit 2: seeds, picture sizes and
scales, 64-bit overflows naming the file and the buffer, the ignored offset column; `--timeout`
ends with exit 3 saying how far it got; long work shows progress on a terminal; a window export
of a large graph never builds the quadratic closure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from tests.examples import RELU_UNFUSED

ROOT = Path(__file__).resolve().parent.parent


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def _random_trace(path: Path, rows: int = 2000) -> Path:
    """A trace search cannot prove optimal under the dag model (0.03% over the bound after
    20 s): given steps enough, it runs its whole budget."""
    import random

    rng = random.Random(1)
    lines = ["id,lower,upper,size"]
    for i in range(rows):
        lower = rng.randrange(1000)
        lines.append(f"b{i},{lower},{lower + rng.randrange(1, 60)},{rng.randrange(1, 1000)}")
    path.write_text("\n".join(lines) + "\n")
    return path


# --- stated bounds ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", ["-1", str(2**64), "1.5"])
def test_a_seed_out_of_range_is_one_line(capsys, seed):
    with pytest.raises(SystemExit) as stopped:
        main(["plan", str(RELU_UNFUSED), "--algorithm", "search", "--seed", seed])
    assert stopped.value.code == 2 and "--seed" in one_line(capsys.readouterr().err)


def test_the_planner_refuses_a_negative_seed():
    graph = planner.load(RELU_UNFUSED)
    with pytest.raises(planner.PlanError, match="seed must be an integer from 0"):
        planner.plan(graph, algorithm="search", seed=-1, budget=0.1)


@pytest.mark.parametrize("extra, message", [
    (["--width", "32767"], "over 16,384 pixels"),
    (["--width", "9000", "--scale", "2"], "over 16,384 pixels"),
    (["--scale", "0"], "--scale must be positive"),
    (["--width", "5", "--scale", "0.1"], "under one pixel"),
])
def test_picture_sizes_are_bounded_before_any_work(tmp_path, capsys, extra, message):
    out = tmp_path / "x.png"
    assert main(["export", str(RELU_UNFUSED), "--png", str(out), *extra]) == 2
    assert message in one_line(capsys.readouterr().err) and not out.exists()


def test_a_tiny_scale_is_one_line_without_qt_noise(tmp_path):
    out = tmp_path / "x.png"
    result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", "export", str(RELU_UNFUSED),
                             "--png", str(out), "--scale", "1e-9"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--scale must be positive, from 0.1 to 8" in one_line(result.stderr)
    assert not out.exists()


def test_an_overflowing_slab_names_the_file(tmp_path, capsys):
    trace = tmp_path / "huge.csv"
    trace.write_text(f"id,lower,upper,size\na,0,2,{2**64 - 1}\nb,0,2,{2**64 - 1}\n")
    assert main(["plan", str(trace)]) == 2
    assert str(trace) in one_line(capsys.readouterr().err)


def test_an_overflowing_alignment_names_the_buffer(tmp_path, capsys):
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({"alignment": 1024, "nodes": [{"name": "n", "inputs": ["big"]}],
                                 "buffers": [{"name": "big", "bytes": 2**64 - 1}]}))
    assert main(["plan", str(graph)]) == 2
    err = one_line(capsys.readouterr().err)
    assert str(graph) in err and "'big'" in err


def test_the_offset_column_is_said_to_be_ignored(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("id,lower,upper,size,offset\na,0,2,64,0\nb,0,2,64,0\n")  # they overlap
    assert main(["plan", str(trace)]) == 0
    err = capsys.readouterr().err
    assert "offset column (2 rows) is ignored" in one_line(err) and str(trace) in err


def test_a_window_export_never_builds_the_closure(qapp, tmp_path):
    from slabscope.app.render import export_view
    from slabscope.app.state.session import Session

    n = 3_000
    nodes = [{"name": f"n{i}", "inputs": [f"b{i - 1}"] if i else [], "outputs": [f"b{i}"]}
             for i in range(n)]
    buffers = [{"name": f"b{i}", "bytes": 64} for i in range(n)]
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"nodes": nodes, "buffers": buffers}))
    graph = planner.load(path)
    session = Session()
    session.set_graph(graph, path)
    for view in ("window", "map"):
        export_view(session, view, tmp_path / f"{view}.png")
    assert "reachability" not in graph.__dict__  # quadratic: 200k nodes cannot hold it


# --- time -------------------------------------------------------------------------------------

def test_timeout_ends_with_exit_3_saying_how_far_it_got(tmp_path):
    trace = _random_trace(tmp_path / "r.csv")
    out = tmp_path / "plan.csv"
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", "plan", str(trace), "--algorithm",
                             "search", "--conflicts", "dag", "--budget", "60", "--timeout", "2.5",
                             "--iterations", "1000000000", "--csv", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 60
    assert result.returncode == 3, result.stderr
    err = one_line(result.stderr)  # past 2 s, yet no progress lines: stderr is no terminal
    assert f"{trace}: timed out after 2.5 s in search " in err and "nothing was written" in err
    assert not out.exists() and result.stdout == ""


def test_timeout_must_be_a_finite_number(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["plan", str(RELU_UNFUSED), "--timeout", "nan"])
    assert stopped.value.code == 2 and "--timeout" in one_line(capsys.readouterr().err)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses a pseudo-terminal")
def test_long_work_shows_progress_on_a_terminal(tmp_path):
    import pty

    trace = _random_trace(tmp_path / "r.csv")
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "slabscope.app.cli", "plan", str(trace),
                                "--algorithm", "search", "--conflicts", "dag", "--budget",
                                "2.6", "--iterations", "1000000000"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert process.wait(timeout=120) == 0
    text = seen.decode()
    assert "slabscope: search " in text and "% (" in text and " s in" in text
    assert text.endswith("\r\x1b[K")  # the line is cleared when the work ends


@pytest.mark.parametrize("length", [10**8, 2**62])
def test_a_long_onnx_vector_is_not_data_propagated(tmp_path, length):
    # ONNX data propagation holds every value of a 1-D tensor; 10**8 of them took gigabytes.
    onnx = pytest.importorskip("onnx")
    import resource

    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [length])
    y = helper.make_tensor_value_info("huge_y", TensorProto.DOUBLE, [length])
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["huge_y"],
                                                to=TensorProto.DOUBLE)], "g", [x], [y])
    path = tmp_path / "long.onnx"
    onnx.save(helper.make_model(graph), str(path))

    def capped():  # a regression fails here instead of exhausting the machine
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", "plan", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, preexec_fn=capped)
    if length > 2**60:  # past 64 bits: one line naming the file and the tensor
        assert result.returncode == 2
        err = one_line(result.stderr)
        assert str(path) in err and "'huge_y'" in err and "64-bit size limit" in err
    else:
        assert result.returncode == 0, result.stderr
        assert "huge_y" in result.stdout
