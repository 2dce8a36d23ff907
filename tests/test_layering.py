"""The app's layers: `app/state/` is plain Python (no Qt, no plotting) and never reaches up into
the views or the Qt adapters, so the session runs the same in scripts, exports and the window."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

STATE = Path(__file__).resolve().parent.parent / "app" / "state"
# Qt and plotting, and the app's own layers above state (which are built on Qt).
FORBIDDEN = ("PySide6", "pyqtgraph", "slabscope.app.views", "slabscope.app.qt",
             "slabscope.app.window", "slabscope.app.qt_binding")


def imported_modules(source: str) -> set[str]:
    """Every module name an import statement in `source` names, anywhere in the file (also
    imports inside functions); `from a import b` counts as both `a` and `a.b`."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports would hide the layer they reach"
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def reaches(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def test_the_check_sees_every_kind_of_import():
    source = ("import PySide6.QtCore\nfrom slabscope.app import views\n"
              "def f():\n    from pyqtgraph import PlotWidget\n")
    names = imported_modules(source)
    assert all(any(reaches(n, layer) for n in names)
               for layer in ("PySide6", "pyqtgraph", "slabscope.app.views"))


@pytest.mark.parametrize("module", sorted(STATE.glob("*.py")), ids=lambda p: p.name)
def test_state_imports_no_qt_and_no_layer_above_it(module):
    names = imported_modules(module.read_text())
    wrong = sorted(n for n in names for layer in FORBIDDEN if reaches(n, layer))
    assert not wrong, f"app/state/{module.name} imports {', '.join(wrong)}"
