"""Large graphs and their plans are moved out of the cyclic collector's reach once shown."""

from __future__ import annotations

import gc

from slabscope import planner
from slabscope.app.state.heap import LARGE_GRAPH, freeze_large
from tests.examples import RELU_UNFUSED


def chain(buffers: int) -> planner.Graph:
    nodes = [{"name": f"n{i}"} for i in range(buffers + 1)]
    edges = [[f"n{i}", f"n{i + 1}"] for i in range(buffers)]
    bufs = [{"name": f"b{i}", "bytes": 8, "uses": [f"n{i}", f"n{i + 1}"]} for i in range(buffers)]
    return planner.graph_from_dict({"nodes": nodes, "edges": edges, "buffers": bufs})


def test_only_large_graphs_freeze_the_heap():
    try:
        gc.unfreeze()
        assert not freeze_large(planner.load(RELU_UNFUSED))
        assert gc.get_freeze_count() == 0
        assert freeze_large(chain(LARGE_GRAPH))
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
