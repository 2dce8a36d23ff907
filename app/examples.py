"""The example graphs that ship inside the `app` package, in `assets/example_graphs/`.

They are package data, so a regular (non-editable) install has them too.
"""

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent / "example_graphs"


def default_example() -> Path:
    """The built-in example: relu(x @ w + b), not fused."""
    return EXAMPLES_DIR / "relu_unfused.json"
