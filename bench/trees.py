"""Running another checkout (a baseline) beside this one, each from its own files.

The installed package maps `slabscope.planner`, `slabscope.app`, ... to this checkout's top-level
folders (pyproject's package-dir), and that mapping outlives a `PYTHONPATH` pointing elsewhere:
another tree's `slabscope/` would be found, but its parts would still come from here. A shim
folder beside the tree, holding a `slabscope` package whose parts link to the tree's folders,
makes every part come from the tree.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

# The tree's top-level folders that the package maps under `slabscope`.
PARTS = ("app", "planner", "gpu", "assets")


@functools.cache
def python_path(tree: Path) -> str:
    """A `PYTHONPATH` under which `slabscope` and all its parts import from `tree` (a tree
    from before the one `slabscope` package is used as it is). Run `python -m` with it as the
    working folder too: `-m` puts the working folder first on the path."""
    tree = Path(tree).resolve()
    if not (tree / "slabscope").is_dir():
        return str(tree)
    folder = tempfile.mkdtemp(prefix="slabscope_tree_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # links only; the tree stays
    shim = Path(folder) / "slabscope"
    shim.mkdir()
    for entry in (tree / "slabscope").iterdir():
        if entry.name != "__pycache__":
            os.symlink(entry, shim / entry.name)
    for part in PARTS:
        if (tree / part).is_dir():
            os.symlink(tree / part, shim / part)
    return str(shim.parent)
