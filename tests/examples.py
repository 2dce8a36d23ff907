"""Paths to the example graphs, and generated inputs, shared by the tests."""

import random
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "example_graphs"
RELU_UNFUSED = EXAMPLES / "relu_unfused.json"
RELU_FUSED = EXAMPLES / "relu_fused.json"
DIAMOND = EXAMPLES / "diamond.json"
LUMINAL_JOIN = EXAMPLES / "luminal_join.json"
LUMINAL_CHAIN = EXAMPLES / "luminal_chain.json"

# mm makes x; relu (pointwise) reads x last and makes y of x's size: in place, y takes x's bytes.
IN_PLACE_CHAIN = {"nodes": [{"name": "mm", "op": "mm", "inputs": ["w"], "outputs": ["x"]},
                            {"name": "relu", "op": "relu", "inputs": ["x"], "outputs": ["y"],
                             "attrs": {"pointwise": "yes"}},
                            {"name": "sum", "op": "sum", "inputs": ["y"], "outputs": ["s"]}],
                  "buffers": [{"name": "w", "bytes": 16, "kind": "weight"},
                              {"name": "x", "bytes": 1024}, {"name": "y", "bytes": 1024},
                              {"name": "s", "bytes": 4, "kind": "output"}],
                  "schedule": ["mm", "relu", "sum"]}

# Two branches from a to d: under the dag model either branch's buffers may be live with the
# other's; one at a time in the order shown (b's branch, then c's) they never are.
TWO_BRANCHES = {"nodes": ["a", "b1", "b2", "c1", "c2", "d"],
                "edges": [["a", "b1"], ["a", "c1"], ["b1", "b2"], ["c1", "c2"], ["b2", "d"],
                          ["c2", "d"]],
                "schedule": ["a", "b1", "b2", "c1", "c2", "d"],
                "buffers": [{"name": "x", "bytes": 1024, "uses": ["a", "b1", "c1"]},
                            {"name": "b", "bytes": 4096, "uses": ["b1", "b2"]},
                            {"name": "c", "bytes": 4096, "uses": ["c1", "c2"]},
                            {"name": "bo", "bytes": 512, "uses": ["b2", "d"]},
                            {"name": "co", "bytes": 512, "uses": ["c2", "d"]}]}


def onnx_light_model(name: str) -> Path:
    """A model of the onnx package's backend test data (weights stripped), e.g.
    "light_inception_v1.onnx"; the calling test skips, saying why, without the onnx package."""
    import pytest

    onnx = pytest.importorskip("onnx", reason="needs the onnx package: pip install '.[onnx]'")
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / name


def write_slow_search_trace(path: Path) -> Path:
    """Write (and return) a 2,000-buffer MiniMalloc trace whose search keeps improving and
    does not reach the lower bound early."""
    rnd = random.Random(1)
    rows = ["id,lower,upper,size"]
    for i in range(2000):
        lower, size = rnd.randrange(0, 1000), rnd.randint(1, 1000) * 4096 + rnd.randint(0, 4095)
        rows.append(f"{i},{lower},{lower + rnd.randint(1, 200)},{size}")
    path.write_text("\n".join(rows) + "\n")
    return path
