"""A hover lights the edges between the hovered node's ancestors (or descendants): exactly
those, found with arrays, a whole band's edges drawn with the band's own merged path."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.dag.dag_view import DagView  # noqa: E402
from slabscope.gpu.generators import transformer  # noqa: E402


def test_a_hovers_lit_edges_are_exactly_those_between_lit_nodes(qtbot):
    session = Session()
    session.graph = planner.graph_from_dict(transformer(4, 8, 2, layers=30))
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    qtbot.waitUntil(lambda: not view.building)
    drawn = view._drawn
    for nodes in ({0}, set(range(len(drawn.x) // 2)), set(range(len(drawn.x)))):
        merged = view._edges_within(nodes)
        expected: dict[int, int] = {}
        for src, dst, band, _path in drawn.edges:
            if src in nodes and dst in nodes:
                expected[band] = expected.get(band, 0) + 1
        assert set(merged) == set(expected)
        for band, count in expected.items():
            if count == drawn.band_edges[band]:
                assert merged[band] is drawn.bands[band]  # a whole band reuses its path
            else:
                assert merged[band].elementCount() > 0
