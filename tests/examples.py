"""Paths to the example graphs, shared by the tests."""

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "example_graphs"
RELU_UNFUSED = EXAMPLES / "relu_unfused.json"
RELU_FUSED = EXAMPLES / "relu_fused.json"
DIAMOND = EXAMPLES / "diamond.json"
LUMINAL_JOIN = EXAMPLES / "luminal_join.json"
LUMINAL_CHAIN = EXAMPLES / "luminal_chain.json"


def onnx_light_model(name: str) -> Path:
    """A model of the onnx package's backend test data (weights stripped), e.g.
    "light_inception_v1.onnx"; the calling test skips, saying why, without the onnx package."""
    import pytest

    onnx = pytest.importorskip("onnx", reason="needs the onnx package: pip install '.[onnx]'")
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / name
