"""How Slabscope is packaged: one top-level package, data through importlib.resources, a broken Qt
binding refused in one line, and a suite that stands on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from slabscope.app import qt_binding
from slabscope.app.cli import main
from tests.examples import RELU_UNFUSED

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = CONFIG["tool"]["setuptools"]


def test_every_package_folder_is_mapped_under_slabscope():
    folders = {name: ROOT / folder for name, folder in SETUPTOOLS["package-dir"].items()}
    assert set(folders) == {"slabscope", "slabscope.app", "slabscope.planner", "slabscope.gpu",
                            "slabscope.assets"}
    found = set()
    for name, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found.add(".".join((name, *parts)))
    listed = set(SETUPTOOLS["packages"])
    assert found <= listed
    for name in listed - found:  # the data folders of slabscope.assets
        assert name.startswith("slabscope.assets.") and name in SETUPTOOLS["package-data"]
        assert (ROOT / "assets" / name.split(".")[-1]).is_dir()


def test_only_slabscope_is_imported_at_the_top_level():
    code = ("import sys, slabscope.app.window, slabscope.app.cli.export, slabscope.gpu, "
            "slabscope.planner; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('app', 'planner', 'gpu', 'assets')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, env={**__import__("os").environ,
                                              "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_python_m_slabscope_is_the_command():
    result = subprocess.run([sys.executable, "-m", "slabscope", "plan", str(RELU_UNFUSED)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "slab bytes           1,196,288" in result.stdout


def test_icon_and_desktop_entry_are_package_data():
    from importlib.resources import files

    assets = files("slabscope.assets")
    data = SETUPTOOLS["package-data"]
    assert data["slabscope.assets.icons"] == ["*.svg", "*.png"]
    assert data["slabscope.assets"] == ["slabscope.desktop"]
    assert (assets / "icons" / "slabscope.svg").is_file()
    entry = (assets / "slabscope.desktop").read_text()
    assert "Exec=slabscope %f" in entry and "Icon=slabscope" in entry


def test_the_window_has_the_icon(qtbot):
    from slabscope.app.icon import application_icon
    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    window = MainWindow(Session())
    qtbot.addWidget(window)
    assert not window.windowIcon().isNull()
    assert window.windowIcon().availableSizes() == application_icon().availableSizes()


def test_the_installed_binding_keeps_none_alive():
    assert qt_binding.binding_problem() is None
    assert qt_binding.none_references_lost() == 0


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="6.12.0 is known to break before 3.12")
def test_a_known_broken_binding_ends_export_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(qt_binding, "_versions", lambda: ("6.12.0", "6.12.0"))
    code = main(["export", str(RELU_UNFUSED), "--view", "dag", "--png", str(tmp_path / "d.png")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "6.12.0" in err and "none_dealloc" in err and "PySide6-Essentials==" in err
    assert not (tmp_path / "d.png").exists()


def test_a_binding_that_loses_references_to_none_is_refused(monkeypatch):
    monkeypatch.setattr(qt_binding, "_versions", lambda: ("6.99.0", "6.99.0"))
    monkeypatch.setattr(qt_binding, "none_references_lost", lambda calls=64: calls)
    problem = qt_binding.binding_problem()
    assert problem is not None and "6.99.0" in problem and "lost 64 references" in problem


def test_no_test_module_imports_another():
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not [n for n in names if n.startswith("tests.test_")], path.name
