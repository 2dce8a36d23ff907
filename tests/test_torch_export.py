"""With torch: the alias and pointwise tables against ATen's schemas and tags, and fresh exports
checked against a reading of `ep.graph` in which a buffer is a storage that no earlier value had
(fake tensors keep aliasing: a view's storage is its base's)."""

from __future__ import annotations

import operator
import re
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.planner import torch_trace  # noqa: E402
from slabscope.planner.formats import aten_aliases, aten_pointwise  # noqa: E402
from slabscope.planner.formats.torch_export_import import SCALAR_TYPES, view_strides  # noqa: E402
from slabscope.planner.torch_trace import trace  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "data" / "pt2"))
import make_fixtures  # noqa: E402

_RESULT = re.compile(r"Tensor\(([\w|]+)(!?)[^)]*\)(\[\])?")


def schema_table() -> dict[str, str]:
    """What `aten_aliases.TABLE` must say, rebuilt from every torch.ops.aten overload's schema."""
    rows = {}
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        name, overload = schema.name[len("aten::"):], schema.overload_name or "default"
        packet = getattr(torch.ops.aten, name, None)
        if packet is None or overload not in packet.overloads():
            continue
        returns = str(schema).split(") -> ", 1)[1]
        if returns.startswith("("):
            returns = returns[1:-1]
        results = []
        for text in (r.strip() for r in returns.split(", ")) if returns else ():
            match = _RESULT.match(text)
            if match is None:
                results.append("-")
                continue
            sets = set(match.group(1).split("|"))
            args = [a.name for a in schema.arguments
                    if a.alias_info is not None and sets & a.alias_info.before_set]
            assert len(args) == 1, schema
            results.append(args[0] + match.group(2) + ("?" if len(sets) > 1 else ""))
        if any(r != "-" for r in results):
            rows[f"{name}.{overload}"] = " ".join(results)
    return rows


def test_alias_table_matches_the_aten_schemas():
    expected = schema_table()
    ours = {op: " ".join("-" if r.argument is None else r.argument + "!" * r.writes + "?" * r.maybe
                         for r in results) for op, results in aten_aliases.TABLE.items()}
    missing = sorted(set(expected) - set(ours))
    extra = sorted(set(ours) - set(expected))
    wrong = sorted(op for op in set(ours) & set(expected) if ours[op] != expected[op])
    assert not (missing or extra or wrong), (
        f"planner/aten_aliases.py differs from torch {torch.__version__}: add "
        f"{[f'{op} {expected[op]}' for op in missing]}, drop {extra}, change "
        f"{[f'{op} {expected[op]}' for op in wrong]}")
    for op in aten_aliases.UNMARKED_VIEWS:  # still a view ATen leaves unmarked
        name, overload = op.rsplit(".", 1)
        assert all(r.alias_info is None
                   for r in getattr(getattr(torch.ops.aten, name), overload)._schema.returns)
    assert aten_aliases.RESHAPES | aten_aliases.SAME_OR_COPY <= set(aten_aliases.TABLE)


def test_scalar_types_match_torch_serialization():
    from torch._export.serde.serialize import _TORCH_TO_SERIALIZE_DTYPE

    for dtype, code in _TORCH_TO_SERIALIZE_DTYPE.items():
        if code.value == 0:
            continue
        name, itemsize = SCALAR_TYPES[code.value]
        assert itemsize == dtype.itemsize and name == str(dtype).removeprefix("torch."), dtype


@pytest.mark.parametrize("sizes, permutation, new_sizes", [
    ((4, 8), (0, 1), (32,)), ((4, 8), (1, 0), (32,)), ((4, 8), (1, 0), (2, 2, 8)),
    ((2, 3, 4), (2, 0, 1), (4, 6)), ((2, 3, 4), (0, 2, 1), (6, 4)), ((2, 1, 4), (1, 0, 2), (8,)),
    ((3, 1, 5), (2, 1, 0), (5, 3)), ((6,), (0,), (2, 1, 3)), ((0, 4), (1, 0), (2, 0, 2)),
])
def test_view_strides_agree_with_torch(sizes, permutation, new_sizes):
    x = torch.empty(sizes).permute(permutation)
    try:
        expected = tuple(x.view(new_sizes).stride())
    except RuntimeError:
        expected = None
    assert view_strides(tuple(x.shape), tuple(x.stride()), new_sizes) == expected


# --- a reading of ep.graph --------------------------------------------------------------------

def oracle(program, include_weights: bool = False):
    """From ep.graph alone: the schedule, and per buffer (first node, bytes, first step, last
    step) over it. A buffer is a storage no earlier value had; getitem is no node of the
    archive (it only names a result), so its users count as users of the node it reads."""
    getitem = operator.getitem
    nodes = [n for n in program.graph.nodes if n.op == "call_function" and n.target is not getitem]
    schedule = ["upload"] + [n.name for n in nodes] + ["readback"]
    step = {name: i for i, name in enumerate(schedule)}
    signature = program.graph_signature
    weights = {*signature.inputs_to_parameters, *signature.inputs_to_buffers,
               *signature.inputs_to_lifted_tensor_constants}
    buffers: dict = {}  # storage -> [first node, bytes, first step, last step]
    seen: set = set()
    storages: dict = {}  # fx node -> its values' storages
    # A fake `lift_fresh_copy` shares its constant's storage, where eager makes a fresh copy.
    fresh: dict = {}  # the constant's storage -> the copy's own key, from that node on

    def touch(keys, at: int):
        for key in keys:
            if key in buffers:
                buffers[key][3] = max(buffers[key][3], at)

    for node in program.graph.nodes:
        values = _tensors(node.meta.get("val"))
        keys = [StorageWeakRef(v.untyped_storage()) for v in values]
        if node.target is torch.ops.aten.lift_fresh_copy.default:
            fresh.update((key, ("copy", node.name)) for key in keys)
        keys = [fresh.get(key, key) for key in keys]
        storages[node] = keys
        if node.op == "placeholder":
            for key, value in zip(keys, values):
                if value.numel() and (include_weights or node.name not in weights):
                    buffers[key] = ["upload", value.numel() * value.element_size(), 0, 0]
            seen.update(keys)
        elif node.op == "call_function" and node.target is not getitem:
            at = step[node.name]
            for key, value in zip(keys, values):
                if key not in seen and value.numel():
                    buffers[key] = [node.name, value.numel() * value.element_size(), at, at]
                seen.add(key)
            touch(keys, at)
            for arg in node.all_input_nodes:
                touch(storages[arg], at)
        elif node.op == "output":
            for arg in node.all_input_nodes:
                touch(storages[arg], step["readback"])
    return schedule, list(buffers.values())


def _tensors(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def peak(intervals, alignment: int = 256) -> int:
    live: dict[int, int] = {}
    for _, size, first, last in intervals:
        for s in range(first, last + 1):
            live[s] = live.get(s, 0) + max(-(-size // alignment) * alignment, alignment)
    return max(live.values(), default=0)


def check_against_oracle(program, tmp_path: Path, include_weights: bool = False):
    path = tmp_path / "model.pt2"
    torch.export.save(program, path)
    graph = planner.load(path, include_weights=include_weights)
    schedule, intervals = oracle(program, include_weights)
    assert [n for n in graph.schedule if n in schedule] == \
        [n for n in schedule if n in graph.schedule]
    assert sorted((first, size) for first, size, _, _ in intervals) == \
        sorted((b.uses[0], b.bytes) for b in graph.buffers)
    assert planner.lower_bound(graph, "serial").bytes == peak(intervals)
    assert planner.verify(graph, planner.plan(graph)).ok
    return graph


class ResidualConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return self.pool(torch.relu(self.conv2(y) + x)).flatten(1)


class Copies(nn.Module):
    """reshape of a transposed tensor copies, of a contiguous one views; `to` its own dtype is
    the tensor itself, to another a copy; an out= op writes its `out`."""

    def forward(self, x):
        t = x.transpose(0, 1)
        out = torch.empty_like(x)
        torch.add(x, 1, out=out)
        return (t.reshape(-1), x.reshape(2, -1), t.contiguous(), x.contiguous() * 2,
                x.to(torch.float16), x.to(torch.float32) + 1, out * 3,
                x.to(torch.float32, copy=True))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), 2,
            enable_nested_tensor=False)

    def forward(self, x):
        return self.layers(x)


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 8, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


MODELS = {
    "residual": (ResidualConv, (torch.randn(1, 4, 8, 8),)),
    "copies": (Copies, (torch.randn(4, 6),)),
    "encoder": (Encoder, (torch.randn(2, 5, 16),)),
    "gru": (Recurrent, (torch.randn(2, 3, 8),)),
}


@pytest.mark.parametrize("name", sorted(make_fixtures.FIXTURES))
def test_fresh_exports_of_the_fixtures_match_the_reading_and_the_committed_archives(name,
                                                                                    tmp_path):
    graph = check_against_oracle(make_fixtures.export(name), tmp_path)
    committed = planner.load(Path(make_fixtures.HERE) / f"{name}.pt2")
    assert [(b.name, b.bytes, b.uses) for b in graph.buffers] == \
        [(b.name, b.bytes, b.uses) for b in committed.buffers]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("decompose", [False, True])
def test_fresh_exports_match_a_reading_of_ep_graph(name, decompose, tmp_path):
    cls, inputs = MODELS[name]
    torch.manual_seed(0)
    program = torch.export.export(cls().eval(), inputs)
    if decompose:
        program = program.run_decompositions()
    check_against_oracle(program, tmp_path)


def test_copies_tell_views_from_copies(tmp_path):
    graph = check_against_oracle(torch.export.export(Copies(), MODELS["copies"][1]), tmp_path)
    made = [b.uses[0] for b in graph.buffers]
    assert "reshape" in made and "reshape_1" not in made  # a copy, then a view
    assert "contiguous" in made and "contiguous_1" not in made
    assert "to" in made and "to_1" not in made and "to_2" in made  # to_2 asked for a copy


def test_weights_included_match_the_reading(tmp_path):
    cls, inputs = MODELS["residual"]
    check_against_oracle(torch.export.export(cls().eval(), inputs), tmp_path,
                         include_weights=True)


def test_trace_reads_a_live_model_like_its_saved_archive(tmp_path):
    model, inputs = make_fixtures.MLP().eval(), (torch.randn(4, 16),)
    graph = trace(model, *inputs)
    saved = tmp_path / "mlp.pt2"
    torch.export.save(torch.export.export(model, inputs), saved)
    assert graph.buffers == planner.load(saved).buffers and graph.name == "MLP"


def test_the_trace_command_writes_an_archive_the_planner_reads(tmp_path, monkeypatch, capsys):
    (tmp_path / "tiny_model.py").write_text(
        "import torch\n"
        "class Tiny(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.emb = torch.nn.Embedding(10, 8)\n"
        "    def forward(self, ids, x):\n"
        "        return self.emb(ids).sum(1) + x\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "tiny_model", raising=False)
    assert torch_trace.main(["tiny_model:Tiny", "--input-shape", "2,5:int64",
                             "--input-shape", "2,8", "-o", "tiny.pt2"]) == 0
    assert "wrote tiny.pt2" in capsys.readouterr().out
    graph = planner.load(tmp_path / "tiny.pt2")
    assert [b.bytes for b in graph.buffers if b.kind == "input"] == [2 * 5 * 8, 2 * 8 * 4]
    for argv, message in ((["tiny_model:Nope", "--input-shape", "2"], "Nope"),
                          (["tiny_model:Tiny", "--input-shape", "2,x"], "must be integers"),
                          (["tiny_model:Tiny", "--input-shape", "2,5:int64"], "export failed")):
        assert torch_trace.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    sys.modules.pop("tiny_model", None)


def test_pointwise_table_matches_the_aten_tags():
    expected = set()
    for schema in torch._C._jit_get_all_schemas():
        if not schema.name.startswith("aten::"):
            continue
        name, overload = schema.name[len("aten::"):], schema.overload_name or "default"
        packet = getattr(torch.ops.aten, name, None)
        if packet is not None and overload in packet.overloads() and \
                torch.Tag.pointwise in getattr(packet, overload).tags:
            expected.add(f"{name}.{overload}")
    assert aten_pointwise.POINTWISE == expected, (
        f"planner/formats/aten_pointwise.py differs from torch {torch.__version__}: add "
        f"{sorted(expected - aten_pointwise.POINTWISE)}, drop "
        f"{sorted(aten_pointwise.POINTWISE - expected)}")
