"""The example graphs installed with Slabscope: package data of `slabscope.assets`, in the
repository's `assets/example_graphs/`, found through importlib.resources so a wheel and an
editable install give the same files."""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from importlib.resources import as_file, files
from pathlib import Path

_files = ExitStack()  # keeps extracted copies alive when the package is not on a file system
atexit.register(_files.close)


def examples_dir() -> Path:
    """The folder of example graphs, as a real path."""
    return _files.enter_context(as_file(files("slabscope.assets") / "example_graphs"))


def example(name: str) -> Path:
    """The path of one example graph, e.g. `example("diamond.json")`."""
    return examples_dir() / name


def default_example() -> Path:
    """The built-in example: relu(x @ w + b), not fused."""
    return example("relu_unfused.json")
