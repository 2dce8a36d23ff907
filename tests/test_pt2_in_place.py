"""The in-place rule on `.pt2` files: the importer marks pointwise nodes (ATen's tag, from the
committed table) and the arguments laid out as their output, so `plan --inplace` merges without
torch; with torch, fresh exports give the merges the runner reads from the program itself and the
serial bound of a reading of `ep.graph` under the same rule, and the in-place plan runs and
verifies."""

from __future__ import annotations

import json
import operator
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.conflicts.in_place import in_place

FIXTURES = Path(__file__).parent / "data" / "pt2"
# Each has a pointwise op over an intermediate that dies there (relu, sigmoid, gelu, an add).
MERGING = ("attention", "branches", "convbn", "mlp", "mlp_dynamic", "mlp_legacy")


@pytest.mark.filterwarnings("ignore:.*symbolic dimensions taken at their hint")
@pytest.mark.parametrize("name", MERGING)
def test_the_importer_marks_pointwise_nodes_so_plans_in_place_merge_and_verify(name):
    graph = planner.load(FIXTURES / f"{name}.pt2")
    shared = in_place(graph)
    assert shared.merged
    for output, host in shared.merged.items():
        assert graph.buffer(host).kind == "intermediate" and \
            graph.buffer(host).bytes == graph.buffer(output).bytes
    result = planner.plan(shared.graph)
    assert planner.verify(shared.graph, result).ok
    assert planner.lower_bound(shared.graph, "serial").bytes <= \
        planner.lower_bound(graph, "serial").bytes


def test_cli_plan_inplace_on_a_pt2_says_what_it_merged(capsys):
    path = FIXTURES / "branches.pt2"
    assert main(["plan", str(path), "--inplace", "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)["in_place"]
    assert merged == in_place(planner.load(path)).merged and merged


def test_only_tagged_nodes_carry_the_attributes():
    graph = planner.load(FIXTURES / "attention.pt2")
    marked = {n.op for n in graph.nodes if "pointwise" in n.attrs}
    assert marked and not marked & {"aten.linear", "aten.softmax", "aten.matmul", "aten.view",
                                    "aten.transpose"}


# --- with torch: fresh exports against the program's own reading and ep.graph ----------------

def _torch():
    return pytest.importorskip("torch")


def _models():
    torch = _torch()
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 8)

        def forward(self, x):
            return self.c(nn.functional.gelu(self.b(torch.relu(self.a(x)))))

    class ConvBNReLU(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x))).sum((2, 3))

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.out = nn.Linear(16, 48), nn.Linear(16, 16)
            self.up, self.down = nn.Linear(16, 32), nn.Linear(32, 16)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            h = x + self.out(torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v)
            return h + self.down(torch.relu(self.up(h))) * 0.5

    class Transposed(nn.Module):
        """relu and an add over transposed views of a square product: never written over."""

        def __init__(self):
            super().__init__()
            self.w = nn.Linear(16, 16)

        def forward(self, x):
            y = self.w(x)
            return torch.relu(y.t()) @ x, (y.t() + 1).sum(0)

    return {"mlp": (MLP, (16, 16)), "convbn": (ConvBNReLU, (2, 3, 8, 8)),
            "residual": (Residual, (8, 16)), "transposed": (Transposed, (16, 16))}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """name -> (program, saved archive) for each model, in eval mode."""
    torch = _torch()
    folder = tmp_path_factory.mktemp("pt2")
    out = {}
    for name, (cls, shape) in _models().items():
        torch.manual_seed(0)
        program = torch.export.export(cls().eval(), (torch.randn(*shape),))
        torch.export.save(program, folder / f"{name}.pt2")
        out[name] = (program, folder / f"{name}.pt2")
    return out


def reading(program) -> tuple[set[tuple[str, str]], int]:
    """From ep.graph alone, the in-place rule applied to its storages: the merges as (output's
    node, host's first node) and the serial live peak (256-byte alignment). A storage is one no
    earlier value had; a pointwise node's new dense result goes into its first argument whose
    storage is an intermediate, when that argument is dense with the result's sizes and dtype,
    the storage was made with that shape and size, and its life (merges so far included) ends
    at this node."""
    torch = _torch()
    from torch.multiprocessing.reductions import StorageWeakRef

    getitem = operator.getitem
    nodes = [n for n in program.graph.nodes if n.op == "call_function" and n.target is not getitem]
    step = {n.name: i + 1 for i, n in enumerate(nodes)}
    readback = len(nodes) + 1
    signature = program.graph_signature
    weights = {*signature.inputs_to_parameters, *signature.inputs_to_buffers,
               *signature.inputs_to_lifted_tensor_constants}
    made: dict = {}  # storage -> [first node, bytes, first step, last step, kept, shape, dtype]
    keys: dict = {}  # fx node -> its values' storages
    values: dict = {}
    for node in program.graph.nodes:
        vals = _tensors(node.meta.get("val"))
        values[node] = vals
        keys[node] = [StorageWeakRef(v.untyped_storage()) for v in vals]
        owner = node.args[0] if node.target is getitem else node
        at = 0 if node.op == "placeholder" else step.get(owner.name, readback)
        for key, value in zip(keys[node], vals):
            if key not in made and value.numel() and node.name not in weights:
                made[key] = [owner.name if node.op != "placeholder" else "upload",
                             value.untyped_storage().nbytes(), at, at, node.op == "placeholder",
                             tuple(value.shape), value.dtype]
            if key in made:
                made[key][3] = max(made[key][3], at)
        for arg in node.all_input_nodes:
            for key in keys[arg]:
                if key in made:
                    made[key][3] = max(made[key][3], at)
                    made[key][4] |= node.op == "output"
    host: dict = {}
    merges = set()

    def root(key):
        while key in host:
            key = host[key]
        return key

    for node in nodes:
        if torch.Tag.pointwise not in getattr(node.target, "tags", ()) or \
                len(values[node]) != 1 or not _dense(values[node][0]):
            continue
        out, result = keys[node][0], values[node][0]
        if out not in made or made[out][0] != node.name or made[out][4]:
            continue
        args = [(k, v) for a in node.all_input_nodes for k, v in zip(keys[a], values[a])]
        first = next(((k, v) for k, v in args if k in made and not made[k][4]), None)
        if first is None:
            continue
        key, value = first
        candidate = root(key)
        if not _dense(value) or (tuple(value.shape), value.dtype) != (tuple(result.shape),
                                                                     result.dtype) or \
                made[key][5:] != made[out][5:] or made[candidate][3] != step[node.name] or \
                _aligned(made[candidate][1]) != _aligned(made[out][1]):
            continue
        host[out] = candidate
        made[candidate][3] = made[out][3]
        merges.add((node.name, made[candidate][0]))
    live: dict[int, int] = {}
    for key, (_, size, first, last, *_rest) in made.items():
        if key not in host:
            for s in range(first, last + 1):
                live[s] = live.get(s, 0) + _aligned(size)
    return merges, max(live.values(), default=0)


def _aligned(size: int) -> int:
    return max(-(-size // 256) * 256, 256)


def _tensors(value) -> list:
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _dense(tensor) -> bool:
    return tensor.storage_offset() == 0 and tensor.is_contiguous()


@pytest.mark.parametrize("name", ["mlp", "convbn", "residual", "transposed"])
def test_fresh_exports_merge_as_the_program_and_ep_graph_read_the_rule(name, exported):
    from slabscope.gpu.torch_program import TorchProgram

    program, path = exported[name]
    graph = planner.load(path)
    ours = in_place(graph)
    runner = TorchProgram(path)
    theirs = in_place(runner.graph, runner.in_place_arguments())
    assert ours.merged == theirs.merged
    merges, bound = reading(program)
    first = {b.name: b.uses[0] for b in graph.buffers}
    assert {(first[o], first[h]) for o, h in ours.merged.items()} == merges
    assert planner.lower_bound(ours.graph, "serial").bytes == bound
    if name == "transposed":  # relu and add read y.t(): a view, never written over
        assert not ours.merged
    else:
        assert ours.merged


@pytest.mark.parametrize("name", ["mlp", "residual"])
def test_the_in_place_plan_of_a_fresh_export_runs_and_verifies(name, exported):
    from slabscope import gpu

    _, path = exported[name]
    report = gpu.run(path, repeats=1, measure_memory=False, replay=False, backend="torch",
                     inplace=True)
    assert report.verification.ok, report.verification.summary()
    assert report.verification.model is not None and report.verification.model.ok
    assert report.slab_bytes == planner.plan(in_place(planner.load(path)).graph).slab_bytes
