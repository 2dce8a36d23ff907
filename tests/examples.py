"""Paths to the example graphs, shared by the tests."""

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "example_graphs"
RELU_UNFUSED = EXAMPLES / "relu_unfused.json"
RELU_FUSED = EXAMPLES / "relu_fused.json"
DIAMOND = EXAMPLES / "diamond.json"
LUMINAL_JOIN = EXAMPLES / "luminal_join.json"
LUMINAL_CHAIN = EXAMPLES / "luminal_chain.json"
