"""Hostile input to the `slabscope` command and its session files, and how it is installed: every
failure is one line on stderr with exit 2, output errors are caught, nothing hangs or aborts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.app.examples import default_example, examples_dir
from slabscope.app.state.session_file import SESSION_FORMAT, read_session
from tests.examples import RELU_UNFUSED

ROOT = Path(__file__).resolve().parent.parent


def slabscope(*args, env=None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """Run the command line in a fresh interpreter (as the installed script does)."""
    return subprocess.run([sys.executable, "-m", "slabscope.app.cli", *map(str, args)], cwd=ROOT,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=120)


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and "usage:" not in err
    return err


# --- argument errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["plan"], "the following arguments are required: file"),
    (["plan", str(RELU_UNFUSED), "--algorithm", "magic"], "invalid choice: 'magic'"),
    (["plan", str(RELU_UNFUSED), "--budget", "nan"], "finite number of seconds"),
    (["plan", str(RELU_UNFUSED), "--budget", "inf"], "finite number of seconds"),
    (["generate", "mlp", "--layers", "x"], "invalid int value: 'x'"),
    (["plan", str(RELU_UNFUSED), "--bogus"], "unrecognized arguments: --bogus"),
])
def test_argument_errors_are_one_line_without_usage(capsys, argv, message):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = one_line(capsys.readouterr().err)
    assert message in err and "--help" in err


def test_help_still_shows_the_usage(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["plan", "--help"])
    assert stopped.value.code == 0 and "usage: slabscope plan" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--scale", "nan"], "--scale must be positive"),
    (["--scale", "inf"], "--scale must be positive"),
    (["--width", str(10**12)], "over 16,384 pixels"),
    (["--height", "10000", "--scale", "2"], "over 16,384 pixels"),
])
def test_export_refuses_sizes_it_cannot_draw(tmp_path, capsys, extra, message):
    assert main(["export", str(RELU_UNFUSED), "--png", str(tmp_path / "x.png"), *extra]) == 2
    assert message in one_line(capsys.readouterr().err)
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("target, message", [
    ("folder", "cannot write PNG {}: a folder"),
    ("missing/x.png", "cannot write PNG {}: no folder"),
])
def test_export_refuses_targets_it_cannot_write_in_one_line(tmp_path, capsys, target, message):
    (tmp_path / "folder").mkdir()
    path = tmp_path / target
    assert main(["export", str(RELU_UNFUSED), "--png", str(path)]) == 2
    assert message.format(path) in one_line(capsys.readouterr().err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_export_to_a_device_is_refused_before_libpng_speaks(capsys):
    assert main(["export", str(RELU_UNFUSED), "--png", "/dev/full"]) == 2
    assert "not a regular file" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("view", ["slab", "map", "dag", "window"])
def test_export_draws_buffers_past_int64(qapp, tmp_path, capsys, view):
    trace = tmp_path / "huge.csv"
    trace.write_text(f"id,lower,upper,size\na,0,2,{2**63}\nb,1,3,{2**64 - 2**63 - 1}\n")
    out = tmp_path / f"{view}.png"
    assert main(["export", str(trace), "--view", view, "--png", str(out)]) == 0
    assert out.stat().st_size > 0 and capsys.readouterr().err == ""


# --- output streams -----------------------------------------------------------------------------

def _long_trace(tmp_path) -> Path:
    path = tmp_path / "long.csv"
    path.write_text("id,lower,upper,size\n" + "".join(f"b{i},{i},{i + 3},64\n"
                                                     for i in range(20_000)))
    return path


def test_a_closed_pipe_is_a_quiet_exit(tmp_path):
    command = [sys.executable, "-m", "slabscope.app.cli", "plan", str(_long_trace(tmp_path))]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) \
            as process:
        process.stdout.readline()  # what `| head -1` reads
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=120) == 0
    assert err == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["plan", str(RELU_UNFUSED)], ["generate", "mlp"]])
def test_a_full_disk_exits_2_with_one_line(argv):
    with open("/dev/full", "w") as full:
        result = slabscope(*argv, stdout=full)
    assert result.returncode == 2
    assert "No space left on device" in one_line(result.stderr)


@pytest.mark.parametrize("target", ["missing/graph.json", "."])
def test_generate_into_a_missing_folder_or_onto_a_folder(tmp_path, capsys, target):
    assert main(["generate", "mlp", "-o", str(tmp_path / target)]) == 2
    assert "cannot write output" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv, message", [
    (["mlp", "--layers", str(10**8)], "layers must be at most 10,000"),
    (["mlp", "--width", str(10**9)], "width must be at most"),
    (["transformer", "--layers", "100", "--heads", "1000", "--width", "1000"],
     "layers x heads must be at most"),
])
def test_generate_refuses_sizes_that_would_never_finish(tmp_path, capsys, argv, message):
    assert main(["generate", *argv, "-o", str(tmp_path / "g.json")]) == 2
    assert message in one_line(capsys.readouterr().err)


def test_names_with_newlines_keep_the_table_one_row_each(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"nodes": ["a"], "buffers": [
        {"name": "two\nlines", "bytes": 4, "uses": ["a"]}, {"name": "plain", "bytes": 4,
                                                             "uses": ["a"]}]}))
    assert main(["plan", str(path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line[:1].isdigit()]
    assert len(rows) == 2 and "two\\nlines" in rows[0]


def test_a_megabyte_name_in_an_error_is_cut_short(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"nodes": ["a"], "buffers": [
        {"name": "x" * 1_000_000, "bytes": -1, "uses": ["a"]}]}))
    assert main(["plan", str(path)]) == 2
    err = one_line(capsys.readouterr().err)
    assert len(err) < 1_100 and "more characters)" in err


def test_a_name_with_a_newline_in_an_error_stays_one_line(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"nodes": ["a"], "buffers": [
        {"name": "bad\nname", "bytes": 4, "uses": ["zz\nzz"]}]}))
    assert main(["plan", str(path)]) == 2
    assert "'zz\\nzz'" in one_line(capsys.readouterr().err)


# --- session files ------------------------------------------------------------------------------

def _session(tmp_path, **fields) -> Path:
    data = {"format": SESSION_FORMAT, "version": 1, "graph": str(RELU_UNFUSED), **fields}
    path = tmp_path / "s.slabscope"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("fields, message", [
    ({"algorithm": ["first-fit"]}, "'algorithm' must be one of"),
    ({"algorithm": {"a": 1}}, "'algorithm' must be one of"),
    ({"conflicts": ["dag"]}, "'conflicts' must be one of"),
    ({"graph": "relu\u0000.json"}, "'graph' must be a file path"),
    ({"graph": 3}, "'graph' must be a file path"),
    ({"capacity": -1}, "capacity -1 is out of range"),
    ({"capacity": True}, "capacity must be an integer"),
    ({"version": 2}, "version 2 is not one this Slabscope reads"),
    ({"version": "1"}, "version '1' is not one"),
    ({"version": None}, "version None is not one"),
    ({"algoritm": "search"}, "unknown key 'algoritm'; did you mean 'algorithm'?"),
    ({"order": "t1"}, "'order' must be a list of buffer names"),
])
def test_damaged_session_files_are_one_line_errors(tmp_path, fields, message):
    with pytest.raises(planner.PlanError) as caught:
        read_session(_session(tmp_path, **fields))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_session_files_go_through_the_input_limits(tmp_path):
    deep = tmp_path / "deep.slabscope"
    deep.write_text("[" * 5_000 + "]" * 5_000)
    with pytest.raises(planner.PlanError, match="nests deeper"):
        read_session(deep)
    huge = tmp_path / "huge.slabscope"
    huge.write_text('{"format": "%s", "version": 1, "graph": "g.json", "capacity": %s}'
                    % (SESSION_FORMAT, "9" * 5_000))
    with pytest.raises(planner.PlanError, match="over the 40-digit limit"):
        read_session(huge)
    with pytest.raises(planner.PlanError, match="a folder, not a regular file"):
        read_session(tmp_path)


def test_a_good_session_still_reads(tmp_path):
    # A session names its graph inside its own folder (see tests/test_session_paths.py).
    shutil.copy(RELU_UNFUSED, tmp_path / "relu.json")
    graph, graph_path, settings = read_session(_session(tmp_path, graph="relu.json",
                                                        algorithm="best-fit",
                                                        capacity=2**21, order=["t1"]))
    assert graph_path == (tmp_path / "relu.json").resolve()
    assert settings["algorithm"] == "best-fit"
    assert settings["capacity"] == 2**21 and graph.buffers


# --- the window without a display ---------------------------------------------------------------

def _without_display() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland check is Linux's")
def test_no_display_is_exit_2_not_an_abort(tmp_path):
    missing = slabscope(tmp_path / "nonexistent.json", env=_without_display())
    assert missing.returncode == 2 and "nonexistent.json" in one_line(missing.stderr)
    good = slabscope(RELU_UNFUSED, env=_without_display())
    assert good.returncode == 2 and "no display" in one_line(good.stderr)


# --- packaging ----------------------------------------------------------------------------------

def test_the_examples_are_package_data_of_the_assets():
    from importlib.resources import files

    assert default_example().is_file()
    assert examples_dir().parent == Path(str(files("slabscope.assets")))
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["package-data"]["slabscope.assets.example_graphs"] == ["*.json"]


def test_dependencies_are_ranges_and_make_installs_exact_pins():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(config["dependencies"])
    for extra in config["optional-dependencies"].values():
        wanted += extra
    assert not [d for d in wanted if "==" in d]
    pins = {line.split("==")[0].lower() for line in (ROOT / "constraints.txt").read_text()
            .splitlines() if "==" in line and not line.startswith("#")}
    names = {d.split(">")[0].split("<")[0].split("=")[0].strip().lower() for d in wanted}
    assert names <= pins
    makefile = (ROOT / "Makefile").read_text()
    assert makefile.count("-c constraints.txt") == makefile.count("pip install -q -c")
    assert "pip install -q -e" not in makefile


def test_the_command_points_numba_at_a_temporary_folder_when_nothing_is_writable(monkeypatch):
    import tempfile

    from slabscope.app.cli import numba_cache

    monkeypatch.setenv("NUMBA_CACHE_DIR", "")  # unset for numba; restored after the test
    monkeypatch.setattr(numba_cache, "_writable", lambda folder: False)
    numba_cache.configure_numba_cache()
    assert Path(os.environ["NUMBA_CACHE_DIR"]).parent == Path(tempfile.gettempdir())


# A small kernel: what is checked is where numba may cache, the same for every kernel (planning
# a graph compiled the dense kernels too, about 20 s of CPU per process in a cold tree).
KERNEL = ("from slabscope.planner.schedule.schedule_moves import _score; "
          "print(_score(np.array([1, 3, 3, 2])), sum(_score.stats.cache_hits.values()), "
          "_score.stats.cache_path); ")
# A library user's process: the planner compiles its kernels and leaves the environment alone.
LIBRARY_CALL = ("import os, numpy as np; before = dict(os.environ); from slabscope import planner; "
                "print(planner.__file__); " + KERNEL +
                "print('environment unchanged' if dict(os.environ) == before else 'changed')")
# The command's process: `slabscope generate`, then the kernel, cached in a temporary folder.
COMMAND_CALL = ("import sys, numpy as np; from slabscope.app.cli import main; "
                "assert main(['generate', 'mlp', '-o', sys.argv[1]]) == 0; " + KERNEL)


def test_kernels_compile_with_an_unwritable_tree_and_home(tmp_path):
    """A copy of the package in a read-only folder, and a read-only $HOME: by permissions for
    an ordinary user, by read-only bind mounts for root (whom permissions do not bind)."""
    tree, home, scratch = tmp_path / "tree", tmp_path / "home", tmp_path / "tmp"
    package = tree / "slabscope"
    for source, target in ((ROOT / "slabscope", package), (ROOT / "planner", package / "planner"),
                           (ROOT / "app", package / "app")):
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    home.mkdir()
    scratch.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(scratch)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("XDG_CACHE_HOME", None)
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if as_root and not shutil.which("unshare"):
        pytest.skip("root needs unshare for read-only mounts")
    read_only = (package / "planner", package / "app", package, tree, home)

    def python(*args):
        command = [sys.executable, *args]
        if as_root:
            mounts = " && ".join(f"mount --bind {f} {f} && mount -o remount,bind,ro {f}"
                                 for f in (tree, home))
            command = ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$0" "$@"', *command]
        return subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env,
                              timeout=300)

    if not as_root:
        for folder in read_only:
            folder.chmod(0o555)
    try:
        library = python("-c", LIBRARY_CALL)
        if as_root and library.returncode != 0 and "Traceback" not in library.stderr:
            pytest.skip(f"no mount namespace here: {library.stderr.strip()[:80]}")
        assert library.returncode == 0, library.stderr
        assert str(tree) in library.stdout and "(3, 2, 9) 0 None" in library.stdout
        assert "environment unchanged" in library.stdout
        assert not any(scratch.glob("slabscope-numba-*"))
        command = python("-c", COMMAND_CALL, str(scratch / "mlp.json"))
        again = python("-c", COMMAND_CALL, str(scratch / "mlp.json"))
    finally:
        for folder in read_only:
            folder.chmod(0o755)
    assert command.returncode == 0, command.stderr
    assert "(3, 2, 9) 0" in command.stdout and (scratch / "mlp.json").is_file()
    cache = next(scratch.glob("slabscope-numba-*"))
    assert str(cache) in command.stdout and any(cache.rglob("schedule_moves._score-*.nbi"))
    # The next command loads the kernel from that folder instead of compiling it again.
    assert again.returncode == 0, again.stderr
    assert "(3, 2, 9) 1" in again.stdout
