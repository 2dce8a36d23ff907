"""The example graphs that ship in `assets/examples/`."""

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "assets" / "examples"


def default_example() -> Path:
    """The built-in example: relu(x @ w + b), not fused (SPEC.md section 4)."""
    return EXAMPLES_DIR / "relu_unfused.json"
