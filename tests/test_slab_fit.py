"""The slab bar shows every new plan whole unless the user zoomed since (then a Fit button), and a
bar that planned while hidden starts at byte 0 when it shows."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.slab.slab_view import FIT_MARGIN, SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402

K = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "minimalloc" / "K.1048576.csv"


def shown_bytes(view) -> tuple[float, float]:
    return tuple(view.view_box.viewRange()[0])


def fits(view, slab: int) -> bool:
    x0, x1 = shown_bytes(view)
    return x0 == pytest.approx(0.0, abs=1.0) and x1 == pytest.approx(slab * (1 + FIT_MARGIN))


def make_view(qtbot, path, show=True):
    session = Session()
    session.set_graph(planner.load(path), path)
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(900, 320)
    if show:
        view.show()
        qtbot.waitExposed(view)
    return session, view


@pytest.mark.parametrize("which", ["relu", "K"])
def test_each_new_plan_is_shown_whole_and_undo_restores_the_bigger_one(qtbot, which):
    if which == "K" and not K.exists():
        pytest.skip("no MiniMalloc benchmarks in ../shared")
    session, view = make_view(qtbot, RELU_UNFUSED if which == "relu" else K)
    first = session.plan.slab_bytes
    assert fits(view, first)
    # On relu, placing t1 and t0 first grows the slab; on K, largest first shrinks it (2.61 to
    # 1.29 MiB).
    session.set_order(["t1", "t0"]) if which == "relu" else session.sort_by_size()
    second = session.plan.slab_bytes
    assert second != first
    view.tween.finish()
    assert fits(view, second)
    session.undo_stack.undo()
    view.tween.finish()
    assert session.plan.slab_bytes == first and fits(view, first)
    assert not view.fit_button.isVisible()


def test_a_zoom_is_kept_across_plans_with_a_fit_button(qtbot):
    session, view = make_view(qtbot, RELU_UNFUSED)
    assert view.handle_key(Qt.Key.Key_Plus)
    zoomed = shown_bytes(view)
    assert view.zoomed and view.fit_button.isVisible()
    session.set_order(["t1", "t0"])
    view.tween.finish()
    assert shown_bytes(view) == pytest.approx(zoomed)
    view.fit_button.click()
    assert fits(view, session.plan.slab_bytes) and not view.fit_button.isVisible()
    view.enter_export()
    assert not view.fit_button.isVisible()


def test_a_bar_planned_while_hidden_starts_at_zero(qtbot):
    session, view = make_view(qtbot, RELU_UNFUSED, show=False)
    view.show()
    qtbot.waitExposed(view)
    assert fits(view, session.plan.slab_bytes)
