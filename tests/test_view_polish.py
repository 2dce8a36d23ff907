"""Polish of the window's panels: the step axis fits the data, the request list says what it
waits for, busy badges cover no text, the slab bar's lanes stay readable."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.session import Session  # noqa: E402
from slabscope.app.views.lifetime_view import STEP_FIT_PIXELS, LifetimeView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


@pytest.mark.parametrize("width", [420, 1400])
def test_the_step_axis_ends_at_the_data_within_a_few_pixels(qtbot, width):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    view.resize(width, 400)
    view.show()
    qtbot.waitExposed(view)
    view.view_box.autoRange()
    (x0, x1), _ = view.view_box.viewRange()
    bounds = view.layer.boundingRect()
    left, right = bounds.left(), bounds.right()
    per_pixel = (x1 - x0) / view.view_box.width()
    assert 0 <= (left - x0) / per_pixel <= STEP_FIT_PIXELS + 1
    assert 0 <= (x1 - right) / per_pixel <= STEP_FIT_PIXELS + 1
