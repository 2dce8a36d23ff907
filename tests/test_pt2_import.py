"""torch.export archives (.pt2) read as zip + JSON, without torch: the committed fixtures under
tests/data/pt2/ (made by make_fixtures.py there), the smallest worked out by hand, and hostile
archives, each refused in one line with nothing run or written."""

from __future__ import annotations

import json
import os
import pickle
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.formats.aten_aliases import TABLE, result_aliases
from slabscope.planner.formats.safety import pt2_archive
from slabscope.planner.formats.torch_export_import import load_pt2, view_strides

FIXTURES = Path(__file__).parent / "data" / "pt2"
MLP = FIXTURES / "mlp.pt2"
NAMES = ("mlp", "convbn", "attention", "inplace", "splitcat", "mlp_dynamic", "mlp_legacy",
         "stateful", "stateful_core")


def peak_live_reserved(graph: planner.Graph) -> int:
    """The most aligned bytes live at once over the graph's schedule, each buffer live from its
    first to its last use: what the serial lower bound must equal on these graphs."""
    step = {name: i for i, name in enumerate(graph.schedule)}
    live = [0] * len(graph.schedule)
    for buffer, reserved in zip(graph.buffers, graph.reserved):
        steps = [step[u] for u in buffer.uses]
        for s in range(min(steps), max(steps) + 1):
            live[s] += reserved
    return max(live, default=0)


# --- the MLP, by hand ---------------------------------------------------------------------

def test_mlp_buffers_bytes_and_bounds_worked_out_by_hand():
    # x[4, 16] -> fc1 = Linear(16, 32) -> relu -> fc2 = Linear(32, 16), float32, eval mode.
    graph = planner.load(MLP)
    assert graph.schedule == ("upload", "linear", "relu", "linear_1", "readback")
    assert [(b.name, b.bytes, b.kind, b.uses) for b in graph.buffers] == [
        ("x", 4 * 16 * 4, "input", ("upload", "linear")),                      # 256
        ("fc1: aten.linear", 4 * 32 * 4, "intermediate", ("linear", "relu")),  # 512
        ("aten.relu", 4 * 32 * 4, "intermediate", ("relu", "linear_1")),       # 512
        ("fc2: aten.linear", 4 * 16 * 4, "output", ("linear_1", "readback")),  # 256
    ]
    # Weights (fc1.weight 2,048 B, fc1.bias 128, fc2.weight 2,048, fc2.bias 64) stay out.
    # Live over the schedule: 256, 256+512, 512+512, 512+256, 256: the peak is 1,024 at relu,
    # and on a chain the dag model agrees.
    assert planner.lower_bound(graph, "serial").bytes == 1024 == peak_live_reserved(graph)
    assert planner.lower_bound(graph).bytes == 1024
    # First fit: x at 0; fc1 at 256 (beside x); relu at 768 (beside fc1, too big for [0, 256));
    # fc2 at 0 (beside relu only).
    result = planner.plan(graph)
    assert {p.name: p.offset for p in result.placements} == {
        "x": 0, "fc1: aten.linear": 256, "aten.relu": 768, "fc2: aten.linear": 0}
    assert result.slab_bytes == 1280


def test_mlp_nodes_carry_targets_modules_shapes_and_stack():
    graph = planner.load(MLP)
    linear = graph.nodes[graph.node_index["linear"]]
    assert linear.op == "aten.linear"
    assert linear.inputs == ("x",) and linear.outputs == ("fc1: aten.linear",)
    assert linear.attrs["target"] == "torch.ops.aten.linear.default"
    assert linear.attrs["module"] == "fc1 (Linear)"
    assert linear.attrs["results"] == "linear: 4×32 float32"
    assert linear.attrs["stack"].startswith("linear.py:") and "make_fixtures.py:" in \
        linear.attrs["stack"]


def test_include_weights_uploads_parameters_by_their_names():
    graph, notes = load_pt2(MLP, include_weights=True)
    weights = {b.name: b.bytes for b in graph.buffers if b.kind == "weight"}
    assert weights == {"fc1.weight": 2048, "fc1.bias": 128, "fc2.weight": 2048, "fc2.bias": 64}
    assert notes.weights == 4 and notes.weight_bytes == 4288 and notes.weights_included
    assert all(graph.buffer(w).uses[0] == "upload" for w in weights)
    assert planner.load(MLP, include_weights=True).buffers == graph.buffers


def test_the_pre_2_8_layout_reads_as_the_same_graph():
    legacy, notes = load_pt2(FIXTURES / "mlp_legacy.pt2")
    assert notes.layout == "legacy" and load_pt2(MLP)[1].layout == "pt2"
    assert legacy.buffers == planner.load(MLP).buffers
    assert legacy.schedule == planner.load(MLP).schedule


def test_symbolic_sizes_take_their_hint_and_are_reported():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph = planner.load(FIXTURES / "mlp_dynamic.pt2")
    assert [b.bytes for b in graph.buffers] == [b.bytes for b in planner.load(MLP).buffers]
    message = " ".join(str(w.message) for w in caught)
    assert "symbolic dimensions taken at their hint in 4 tensors: x, fc1: aten.linear" in message


# --- the other fixtures ---------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:mlp_dynamic.pt2. symbolic")
@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_loads_plans_and_bounds_at_the_peak_of_live_bytes(name):
    graph = planner.load(FIXTURES / f"{name}.pt2")
    assert planner.lower_bound(graph, "serial").bytes == peak_live_reserved(graph)
    result = planner.plan(graph)
    assert planner.verify(graph, result).ok
    assert result.slab_bytes >= planner.lower_bound(graph).bytes


def test_in_place_ops_and_views_of_them_make_no_buffer():
    # clone, mul_, slice (a view), add_ on the view, relu_, sum: two new tensors only.
    graph = planner.load(FIXTURES / "inplace.pt2")
    assert [b.name for b in graph.buffers] == ["x", "aten.clone", "aten.sum"]
    clone = graph.buffer("aten.clone")
    assert clone.uses == ("clone", "mul_", "slice_1", "add_", "relu_", "sum_1")
    add = graph.nodes[graph.node_index["add_"]]
    assert add.outputs == ("aten.clone",) and "written in place" in add.attrs["aliases"]


def test_split_and_unbind_results_are_views_cat_and_stack_are_new():
    graph = planner.load(FIXTURES / "splitcat.pt2")
    assert [(b.name, b.bytes) for b in graph.buffers] == [
        ("x", 128), ("aten.cat", 128), ("aten.stack", 64), ("aten.mul", 64)]
    # x lives until the last view of it is read (by stack).
    assert graph.buffer("x").uses[-1] == "stack"


def test_a_new_tensor_with_a_slices_strides_gets_the_bytes_they_span():
    # core ATen's `copy` of a 4x3 slice keeps its strides (8, 1): 27 floats apart, not 12
    graph = planner.load(FIXTURES / "stateful_core.pt2")
    copy = graph.buffer("aten.copy")
    assert copy.shape == (4, 3) and copy.bytes == (3 * 8 + 2 + 1) * 4
    assert graph.buffer("aten.mul #2").bytes == 4 * 3 * 4  # contiguous: its elements


def test_attention_buffers_are_named_by_module_and_op():
    graph = planner.load(FIXTURES / "attention.pt2")
    names = [b.name for b in graph.buffers]
    assert "block.attn: aten.softmax" in names and "block.norm: aten.layer_norm" in names
    assert "block.attn: aten.matmul #2" in names  # the second matmul of the same module
    # chunk gives three views of qkv, transpose a view of k: none is a buffer.
    assert not any("chunk" in n or "transpose" in n for n in names)


def test_convbn_flatten_of_a_contiguous_tensor_is_a_view():
    graph = planner.load(FIXTURES / "convbn.pt2")
    assert [b.name for b in graph.buffers] == [
        "x", "conv: aten.conv2d", "bn: aten.batch_norm", "aten.relu", "head: aten.linear"]


def test_plan_command_reads_a_pt2(capsys):
    assert main(["plan", str(MLP)]) == 0
    out = capsys.readouterr().out
    assert "mlp: 4 buffers, 5 nodes" in out and "lower bound              1,024" in out


def test_the_window_opens_a_dropped_pt2_and_shows_its_nodes(qtbot):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from slabscope.app.state.session import Session
    from slabscope.app.window import GRAPH_FILTER, MainWindow

    assert "*.pt2" in GRAPH_FILTER  # File > Open offers .pt2 files
    window = MainWindow(Session())
    qtbot.addWidget(window)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(FIXTURES / "attention.pt2"))])
    window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, data,
                                Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
    qtbot.waitUntil(lambda: window.session.plan is not None and not window.planning.running,
                    timeout=20000)
    assert window.session.plan.slab_bytes == planner.plan(planner.load(
        FIXTURES / "attention.pt2")).slab_bytes
    window.session.selection_model.select_node("softmax")
    text = window.node_panel.text.toPlainText()
    for shown in ("aten.softmax", "torch.ops.aten.softmax.int", "block.attn (Attention)",
                  "block.attn: aten.softmax", "1×8×8", "make_fixtures.py:"):
        assert shown in text, shown


# --- the rules, on hand-made graphs ---------------------------------------------------------

def test_view_strides_follows_aten():
    assert view_strides((4, 8), (8, 1), (32,)) == (1,)
    assert view_strides((8, 4), (1, 8), (32,)) is None  # a transposed tensor cannot flatten
    assert view_strides((8, 4), (1, 8), (8, 2, 2)) == (1, 16, 8)  # but can split a dim
    assert view_strides((0, 3), (3, 1), (3, 0)) == (1, 1)


def test_alias_table_covers_the_ops_the_issue_names():
    for op in ("view.default", "_unsafe_view.default", "t.default", "transpose.int",
               "permute.default", "expand.default", "squeeze.dim", "unsqueeze.default",
               "slice.Tensor", "select.int", "split.Tensor", "chunk.default", "unbind.int",
               "flatten.using_ints", "alias.default", "detach.default", "add_.Tensor",
               "relu_.default"):
        assert result_aliases(f"torch.ops.aten.{op}"), op
    assert result_aliases("torch.ops.aten.add_.Tensor")[0].writes
    assert result_aliases("torch.ops.aten.add.Tensor") is None
    assert TABLE["max.dim_max"][1].argument == "max_values"


# --- hostile archives -----------------------------------------------------------------------

class _MakeFolder:
    """Unpickling this makes a folder: proof that a pickle was loaded."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return os.mkdir, (self.path,)


def _rewrite(target: Path, replace: dict | None = None, add: dict | None = None,
             drop=lambda name: False) -> Path:
    """A copy of mlp.pt2 with members replaced, added or dropped."""
    replace, add = replace or {}, add or {}
    with zipfile.ZipFile(MLP) as source, \
            zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            if drop(info.filename):
                continue
            data = next((v for k, v in replace.items() if info.filename.endswith(k)), None)
            out.writestr(info.filename, data if data is not None else source.read(info))
        for name, data in add.items():
            out.writestr(name, data)
    return target


def _model_json() -> dict:
    with zipfile.ZipFile(MLP) as archive:
        return json.loads(archive.read("mlp/models/model.json"))


def _refused(path: Path, capsys, *fragments: str) -> str:
    """Run `slabscope plan` on path: exit 2, one line on stderr naming the file and fragments."""
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and err.startswith(f"slabscope: {path}") and captured.out == ""
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_a_pickle_as_the_model_is_refused_and_never_loaded(tmp_path, capsys):
    marker = tmp_path / "unpickled"
    bad = _rewrite(tmp_path / "bad.pt2", {"models/model.json": pickle.dumps(_MakeFolder(marker))})
    _refused(bad, capsys, "models/model.json is a pickle, not JSON", "never unpickled")
    assert not marker.exists()


def test_pickles_elsewhere_are_never_opened(tmp_path):
    marker = tmp_path / "unpickled"
    payload = pickle.dumps(_MakeFolder(marker))
    archive = _rewrite(tmp_path / "weights.pt2", {"data/weights/weight_0": payload,
                                                  "data/sample_inputs/model.pt": payload})
    assert planner.load(archive).buffers == planner.load(MLP).buffers
    assert not marker.exists()


def test_torch_save_output_and_plain_pickles_are_refused(tmp_path, capsys):
    saved = tmp_path / "saved.pt2"  # what torch.save writes: a zip holding archive/data.pkl
    with zipfile.ZipFile(saved, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(_MakeFolder(tmp_path / "m")))
        archive.writestr("archive/version", "3")
    _refused(saved, capsys, "no torch.export model JSON", "archive/data.pkl", "torch.save")
    raw = tmp_path / "raw.pt2"
    raw.write_bytes(pickle.dumps(_MakeFolder(tmp_path / "m")))
    _refused(raw, capsys, "a pickle, not a torch.export archive")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("member", ["../evil.json", "mlp/../../evil", "/tmp/evil",
                                    "C:/evil", "mlp\\..\\evil"])
def test_member_names_that_escape_are_refused(tmp_path, capsys, member):
    bad = _rewrite(tmp_path / "bad.pt2", add={member: b"x"})
    _refused(bad, capsys, "absolute or parent ('..') path", "nothing is extracted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt2", "qsettings"] or \
        sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt2"]


def test_nested_archives_are_refused(tmp_path, capsys):
    inner = MLP.read_bytes()
    _refused(_rewrite(tmp_path / "a.pt2", add={"mlp/extra/inner.pt2": inner}), capsys,
             "nested archive")
    _refused(_rewrite(tmp_path / "b.pt2", {"models/model.json": inner}), capsys,
             "is a nested archive, not JSON")


def test_a_zip_bomb_is_not_inflated(tmp_path, capsys, monkeypatch):
    # The header's size is checked before reading: a member claiming 4 GiB is never opened.
    bomb = _rewrite(tmp_path / "bomb.pt2")
    data = bytearray(bomb.read_bytes())
    entry = data.find(b"PK\x01\x02", data.find(b"mlp/models/model.json") - 64)
    while not data[entry + 46:].startswith(b"mlp/models/model.json"):
        entry = data.find(b"PK\x01\x02", entry + 4)
    data[entry + 24:entry + 28] = (0xFFFF_FFF0).to_bytes(4, "little")
    bomb.write_bytes(bytes(data))
    _refused(bomb, capsys, "models/model.json holds 4,294,967,280 bytes, over the "
                           "134,217,728-byte limit")
    # Under a small limit, a member that truly inflates past it is refused too.
    monkeypatch.setattr(pt2_archive, "JSON_BYTES_LIMIT", 1 << 16)
    zeros = _rewrite(tmp_path / "zeros.pt2", {"models/model.json": b" " * (1 << 20)})
    assert zeros.stat().st_size < 40_000
    _refused(zeros, capsys, "over the 65,536-byte limit")


def test_a_header_that_lies_small_reads_no_more_than_it_claims(tmp_path, monkeypatch):
    archive = _rewrite(tmp_path / "a.pt2", {"models/model.json": b" " * 5000})
    with zipfile.ZipFile(archive) as opened, open(archive, "rb") as handle:
        info = opened.getinfo("mlp/models/model.json")
        info.file_size = 10  # the stream stops past the claimed size
        with pytest.raises(zipfile.BadZipFile, match="inflates past the 10 bytes"):
            pt2_archive._read_member(handle, info, archive)
    with zipfile.ZipFile(archive) as opened, open(archive, "rb") as handle:
        info = opened.getinfo("mlp/models/model.json")  # a header that tells the truth
        monkeypatch.setattr(pt2_archive, "_CHUNK", 100)
        monkeypatch.setattr(pt2_archive, "JSON_BYTES_LIMIT", 6000)
        assert pt2_archive._read_member(handle, info, archive) == b" " * 5000
        info.CRC ^= 1
        with pytest.raises(zipfile.BadZipFile, match="CRC"):
            pt2_archive._read_member(handle, info, archive)


def test_a_non_zip_is_refused(tmp_path, capsys):
    text = tmp_path / "notes.pt2"
    text.write_text("hello")
    _refused(text, capsys, "not a zip archive")
    truncated = tmp_path / "cut.pt2"
    truncated.write_bytes(MLP.read_bytes()[:2000])
    _refused(truncated, capsys, "damaged zip archive")


def test_sizes_whose_product_overflows_64_bits_are_refused(tmp_path, capsys):
    program = _model_json()
    meta = program["graph_module"]["graph"]["tensor_values"]["relu"]
    meta["sizes"] = [{"as_int": 2 ** 40}, {"as_int": 2 ** 40}]
    bad = _rewrite(tmp_path / "big.pt2", {"models/model.json": json.dumps(program).encode()})
    _refused(bad, capsys, "tensor 'relu'", "element count exceeds")


def test_a_missing_model_json_is_refused(tmp_path, capsys):
    bad = _rewrite(tmp_path / "empty.pt2", drop=lambda n: n.endswith("model.json"))
    _refused(bad, capsys, "only pickles such as")
    bare = tmp_path / "bare.pt2"
    with zipfile.ZipFile(bare, "w") as archive:
        archive.writestr("mlp/archive_format", "pt2")
    _refused(bare, capsys, "no torch.export model JSON", "'mlp/archive_format'")


def test_an_unknown_schema_version_is_named(tmp_path, capsys):
    program = _model_json()
    program["schema_version"] = {"major": 9, "minor": 1}
    bad = _rewrite(tmp_path / "v9.pt2", {"models/model.json": json.dumps(program).encode()})
    _refused(bad, capsys, "schema version 9.1 is not one this reader knows (it reads 8.x)")


@pytest.mark.parametrize("edit, fragment", [
    (lambda p: p["graph_module"]["graph"]["nodes"][1]["inputs"][0].update(
        {"arg": {"as_tensor": {"name": "nowhere"}}}), "reads tensor 'nowhere'"),
    (lambda p: p["graph_module"]["graph"]["tensor_values"]["relu"].update({"dtype": 99}),
     "dtype 99"),
    (lambda p: p["graph_module"]["graph"]["tensor_values"].pop("relu"), "no entry in"),
    (lambda p: p["graph_module"]["graph"].update({"nodes": {}}), "expected a list"),
])
def test_malformed_programs_are_one_line(tmp_path, capsys, edit, fragment):
    program = _model_json()
    edit(program)
    bad = _rewrite(tmp_path / "bad.pt2", {"models/model.json": json.dumps(program).encode()})
    _refused(bad, capsys, fragment)


@pytest.mark.parametrize("text, fragment", [
    (b'{"graph_module": ', "malformed JSON at line 1"),
    (b"[" * 200_000 + b"]" * 200_000, "nests too deep"),
    (b'{"graph_module": {}, "schema_version": {"major": ' + b"9" * 5000 + b"}}", "digits"),
    (b"\xff\xfe{}", "not UTF-8 JSON"),
    (b'{"schema_version": {"major": 8, "minor": 0}}', "not an exported program"),
])
def test_model_json_that_is_not_a_program_is_one_line(tmp_path, capsys, text, fragment):
    _refused(_rewrite(tmp_path / "bad.pt2", {"models/model.json": text}), capsys, fragment)


# --- fuzzing: whatever the archive holds, a graph or one PlanError line ----------------------

FUZZ = settings(max_examples=40, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
_scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(["as_tensor", "as_int", "name", "as_expr",
                                                          "as_tensors", "hint", "x"]), inner,
                                         max_size=2), max_leaves=8)


def _paths(value, prefix=()):
    """Every path to a value inside the program, as key and index tuples."""
    yield prefix
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _paths(inner, prefix + (key,))


def _load_or_one_line(path: Path) -> None:
    try:
        graph = planner.load(path)
    except planner.PlanError as exc:
        assert "\n" not in str(exc), str(exc)
        return
    planner.verify(graph, planner.plan(graph))


_PROGRAM_PATHS = [p for p in _paths(_model_json()) if p]


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(_PROGRAM_PATHS), _values), min_size=1, max_size=3))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_fuzzed_programs_load_or_fail_in_one_line(tmp_path, edits):
    program = _model_json()
    for path, value in edits:
        parent = program
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed the path
    archive = _rewrite(tmp_path / "fuzz.pt2", {"models/model.json": json.dumps(program).encode()})
    _load_or_one_line(archive)


@FUZZ
@given(st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=8))
def test_fuzzed_archive_bytes_load_or_fail_in_one_line(tmp_path, flips):
    data = bytearray(MLP.read_bytes())
    for where, value in flips:
        data[where % len(data)] = value
    archive = tmp_path / "flipped.pt2"
    archive.write_bytes(bytes(data))
    _load_or_one_line(archive)


def test_a_directory_of_too_many_members_is_refused_before_it_is_read(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.setattr(pt2_archive, "MEMBERS_LIMIT", 10)
    _refused(_rewrite(tmp_path / "many.pt2"), capsys, "members in a", "over the limit of 10 "
             "members (not read)")
