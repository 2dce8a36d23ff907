"""The inspector's compare boxes hold their names only once opened or searched: opening a file
of 60,000 buffers does not add 120,000 combo items on the GUI thread."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.lazy_combo import LazyNameCombo  # noqa: E402
from slabscope.app.views.panels.inspector import Inspector  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def test_names_are_added_on_first_use_and_a_shown_name_survives(qtbot):
    combo = LazyNameCombo("—")
    qtbot.addWidget(combo)
    combo.set_names(["a", "b", "c"])
    assert combo.count() == 1 and not combo.filled
    combo.show_name("b")
    assert combo.currentText() == "b" and combo.count() == 1
    assert combo.findText("c") == 3 and combo.filled
    assert combo.currentText() == "b" and combo.currentIndex() == 2


def test_opening_a_graph_leaves_the_compare_boxes_empty_until_used(qtbot):
    session = Session()
    inspector = Inspector(session)
    qtbot.addWidget(inspector)
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert inspector.first.count() == inspector.second.count() == 1
    session.select_buffers(["t1", "y"])  # shown without filling
    assert inspector.first.count() == 1 and inspector.first.currentText() == "t1"
    assert "conflict" in inspector.verdict.text()
