"""Snapshot blocks are named after the user's own code, keep their full paths for hover, and are
coloured by what they hold (parameter, optimizer state, activation, other) with a legend."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.buffer_details import describe_buffer  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import LifetimeView  # noqa: E402
from slabscope.planner.formats.snapshot_names import (ACTIVATION, OPTIMIZER_STATE, OTHER,  # noqa: E402
                                                      PARAMETER, category, is_user_file, user_site)
from tests.snapshot_builder import SnapshotBuilder, cpp_frame, py_frame  # noqa: E402

INDUCTOR = "/tmp/torchinductor_brian/qo/cqobccgv4lplk2yyxslc4ry7xucnffl6ldkytapddm5am7y5yrhz.py"
TORCH = "/env/lib/python3.10/site-packages/torch/_functorch/_aot_autograd/runtime_wrappers.py"
REAL = Path(__file__).resolve().parents[2] / "shared" / "snapshots" / "cs336_a2_bcrafton.pickle"


def test_user_files_are_told_from_torch_packages_and_generated_files():
    assert is_user_file("/home/me/proj/model.py")
    assert is_user_file("C:\\src\\train.py")
    for path in (INDUCTOR, TORCH, "/opt/torch/nn/modules/module.py", "<frozen runpy>",
                 "/env/lib/python3.10/site-packages/einx/traceback_util.py",
                 "/home/me/.cache/c3uxhj5q2ablsqp5lrlrkd2ig2tub4do54ysdazmtvawnjje2knd.py"):
        assert not is_user_file(path), path
    stack = (f"{INDUCTOR}:354 call", "/home/me/model.py:146 forward", f"{TORCH}:729 inner_fn")
    assert user_site(stack) == "model.py:146 forward"
    assert user_site((f"{INDUCTOR}:354 call",)) is None


def test_categories_come_from_the_stack_and_the_lifetime():
    step = ("/home/me/optimizer.py:71 step", "/env/site-packages/torch/optim/optimizer.py:5 wrapper")
    assert category(step, False, freed=False) == OPTIMIZER_STATE
    assert category(step, False, freed=True) == OTHER  # a temporary of the step
    assert category(("/home/me/model.py:20 __init__",), False, freed=False) == PARAMETER
    assert category((), True, freed=False) == PARAMETER
    assert category(("/home/me/model.py:146 forward",), False, freed=True) == ACTIVATION
    assert category(("/home/me/train.py:9 <module>",), False, freed=True) == OTHER


@pytest.fixture
def inductor_snapshot(tmp_path):
    builder = SnapshotBuilder()
    builder.segment(0x10000, 8192)
    frames = [py_frame(INDUCTOR, 354, "call"), cpp_frame("at::empty"),
              py_frame("/home/me/proj/model.py", 146, "forward"), py_frame(TORCH, 729, "inner_fn")]
    builder.alloc(0x10000, 1024, frames)
    builder.alloc(0x10400, 1024, [py_frame("/home/me/proj/model.py", 20, "__init__")])
    builder.free(0x10000)
    return builder.write(tmp_path / "inductor.pickle")


def test_a_block_is_named_after_its_first_user_frame_and_hover_keeps_full_paths(inductor_snapshot):
    graph = planner.load(inductor_snapshot)
    names = [b.name for b in graph.buffers]
    assert names == ["model.py:146 forward #1", "model.py:20 __init__ #1"]
    assert [b.kind for b in graph.buffers] == [ACTIVATION, PARAMETER]
    # The stack still lists every frame by file name; the hover adds the full paths.
    assert graph.allocator.stacks["model.py:146 forward #1"][0] == \
        "cqobccgv4lplk2yyxslc4ry7xucnffl6ldkytapddm5am7y5yrhz.py:354 call"
    session = Session()
    session.set_graph(graph, inductor_snapshot)
    text = describe_buffer(session, "model.py:146 forward #1")
    assert f"  {INDUCTOR}" in text and "  /home/me/proj/model.py" in text


def test_the_legend_names_the_categories(qtbot, inductor_snapshot):
    session = Session()
    session.set_graph(planner.load(inductor_snapshot), inductor_snapshot)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    assert view.legend.kinds == (PARAMETER, ACTIVATION)


def test_a_real_snapshot_has_no_block_named_after_a_generated_file():
    if not REAL.exists():
        pytest.skip("no snapshot in ../shared/snapshots")
    graph = planner.load(REAL)
    assert not any("torchinductor" in b.name or b.name.startswith("c") and ".py:" in b.name
                   and len(b.name.split(".py")[0]) > 20 for b in graph.buffers)
    kinds = Counter(b.kind for b in graph.buffers)
    assert set(kinds) == {PARAMETER, OPTIMIZER_STATE, ACTIVATION, OTHER}
