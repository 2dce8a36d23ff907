"""With torch: a recorded training step against PyTorch's own MemTracker on the same step (the
recorded order's live peak within 2%, weights equal to the parameters' bytes), views and in-place
results sharing their base's buffer, names from module paths, and the shell entry end to end."""

from __future__ import annotations

import json
import sys

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch.distributed._tools.mem_tracker import MemTracker  # noqa: E402

from bench.training_models import Block  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.planner import torch_trace  # noqa: E402
from slabscope.planner.analysis.peak import group, live_peak  # noqa: E402
from slabscope.planner.recording.training_step import make_optimizer, training_step  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.GELU(),
                                    nn.Linear(128, 8))

    def forward(self, x):
        return self.layers(x)


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(16, 32)
        self.layers = nn.ModuleList(Block(width=32) for _ in range(2))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def _warm_step(model, x, optimizer_name):
    optimizer = make_optimizer(optimizer_name, model.parameters())
    step = training_step(model, [x], optimizer)
    step()
    return step, optimizer


def _memtracker_peak(model, x, optimizer, step) -> int:
    with MemTracker() as tracker:
        tracker.track_external(model, optimizer, x)
        step()
    return tracker.get_tracker_snapshot("peak")[torch.device("cpu")]["Total"]


@pytest.mark.parametrize("make, shape, optimizer_name", [
    (MLP, (16, 32), "adam"), (MLP, (16, 32), "sgd"),
    (Transformer, (2, 8, 16), "adam")])
def test_recorded_peak_matches_memtracker_and_weights_match_parameters(make, shape,
                                                                       optimizer_name):
    torch.manual_seed(0)
    model, x = make(), torch.randn(shape)
    step, optimizer = _warm_step(model, x, optimizer_name)
    graph = torch_trace.trace_step(step, module=model, optimizer=optimizer)
    expected = _memtracker_peak(model, x, optimizer, step)
    peak = live_peak(graph)
    assert abs(peak.bytes - expected) <= 0.02 * expected, (peak.bytes, expected)
    weights = sum(b.bytes for b in graph.buffers if b.kind == "weight")
    assert weights == sum(p.numel() * p.element_size() for p in model.parameters())
    kinds = {g.key for g in group(graph, peak, "kind")}
    assert {"weight", "optimizer_state", "input"} <= kinds
    assert {b.kind for b in graph.buffers} >= {"weight", "gradient", "optimizer_state", "input",
                                               "activation", "temporary"}
    # Weights and optimizer state live across the whole step.
    ends = {graph.schedule[0], graph.schedule[-1]}
    assert all(ends <= set(b.uses) for b in graph.buffers
               if b.kind in ("weight", "optimizer_state"))
    assert len(graph.schedule) == len(graph.nodes)
    # Planned by default in the recorded order: its lower bound is that order's live peak.
    assert planner.default_conflicts(graph) == "serial"
    assert planner.lower_bound(graph, planner.default_conflicts(graph)).bytes == peak.bytes


def test_names_follow_module_paths_in_forward_backward_and_optimizer():
    torch.manual_seed(0)
    model, x = Transformer(), torch.randn(2, 8, 16)
    step, optimizer = _warm_step(model, x, "sgd")
    graph = torch_trace.trace_step(step, module=model, optimizer=optimizer)
    names = set(graph.schedule)
    assert "layers.1 · _softmax" in names
    assert "layers.1 · _softmax_backward_data (backward)" in names
    assert any(n.startswith("optimizer · layers.0.qkv.weight · ") for n in names)
    modules = {node.attrs.get("module") for node in graph.nodes}
    assert {"layers.0.mlp.1", "layers.1.qkv", "head"} <= modules
    assert {"layers.0.qkv.weight · grad", "layers.0.qkv.weight · momentum_buffer"} <= \
        set(graph.buffer_names)


def test_views_and_in_place_results_share_their_base_buffer():
    weight = nn.Parameter(torch.ones(64))

    def step():
        x = torch.ones(64) * 2          # one storage
        y = x.view(8, 8)[1:]            # views of it
        y.add_(1)                       # written in place
        (x.sum() * weight.sum()).backward()

    graph = torch_trace.trace_step(step)
    made = [b for b in graph.buffers if b.name == "mul"]
    assert len(made) == 1 and made[0].bytes == 64 * 4
    users = {graph.nodes[i].op for i in graph.use_indices[graph.buffer_index["mul"]]}
    assert {"mul", "view", "slice", "add_", "sum"} <= users
    adds = [n for n in graph.nodes if n.op == "add_"]
    assert adds[0].outputs == () and "mul" in adds[0].inputs


def test_shell_records_a_steady_state_step_that_every_command_reads(tmp_path, monkeypatch, capsys):
    (tmp_path / "tiny_net.py").write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(8, 4)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x).relu()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "tiny_net", raising=False)
    assert torch_trace.main(["tiny_net:Net", "--input-shape", "2,8", "--step", "adam",
                             "-o", "step.json"]) == 0
    assert "wrote step.json" in capsys.readouterr().out
    graph = planner.load(tmp_path / "step.json")
    written = json.loads((tmp_path / "step.json").read_text())
    assert written["schedule"] == list(graph.schedule)
    assert written["conflicts"] == graph.conflicts == planner.default_conflicts(graph) == "serial"
    state = [b for b in graph.buffers if b.kind == "optimizer_state"]
    assert len(state) == 6  # exp_avg, exp_avg_sq and step per parameter: made in the warm-up
    planned = planner.plan(graph, conflicts="serial")
    assert planner.verify(graph, planned).ok
    # Fake tensors (shapes only) record the same step: the same live peak, no memory behind it.
    assert torch_trace.main(["tiny_net:Net", "--input-shape", "2,8", "--step", "adam", "--fake",
                             "-o", "fake.json"]) == 0
    assert live_peak(planner.load(tmp_path / "fake.json")).bytes == live_peak(graph).bytes
    # Freed at last use, the step is still one recorded order: serial too.
    assert torch_trace.main(["tiny_net:Net", "--input-shape", "2,8", "--step", "adam",
                             "--lifetimes", "last-use", "-o", "last_use.json"]) == 0
    assert planner.default_conflicts(planner.load(tmp_path / "last_use.json")) == "serial"
    capsys.readouterr()
    for argv, message in ((["tiny_net:Net", "--input-shape", "2,9", "--step", "sgd"],
                           "training step failed"),
                          (["tiny_net:Net", "--input-shape", "2,8", "--step", "sgd",
                            "--alignment", "0"], "--alignment")):
        assert torch_trace.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    sys.modules.pop("tiny_net", None)


def test_a_closure_optimizer_records_forward_backward_and_its_state_lists():
    # LBFGS runs the closure (forward and backward) inside its step, and keeps its history of
    # directions in lists: the ops are named and kinded as forward and backward, the lists'
    # tensors as optimizer state.
    torch.manual_seed(0)
    model, x = MLP(), torch.randn(16, 32)
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=3)

    def closure():
        optimizer.zero_grad()
        loss = model(x).square().mean()  # a loss with curvature: LBFGS keeps a history
        loss.backward()
        return loss

    def step():
        optimizer.step(closure)

    step()
    graph = torch_trace.trace_step(step, module=model, optimizer=optimizer)
    phases = {node.attrs["phase"] for node in graph.nodes}
    assert phases == {"forward", "backward", "optimizer"}
    assert "layers.0 · addmm" in graph.schedule and "layers.1 · relu" in graph.schedule
    kinds = {b.name: b.kind for b in graph.buffers}
    assert kinds["layers.0.weight · old_dirs[0]"] == "optimizer_state"
    assert "activation" in kinds.values()  # MemTracker refuses a step of several forwards


def test_gradient_accumulation_saves_activations_in_every_micro_batch():
    torch.manual_seed(0)
    model, batches = MLP(), [torch.randn(16, 32) for _ in range(2)]
    optimizer = make_optimizer("adam", model.parameters())

    def step():
        for x in batches:
            model(x).float().sum().backward()
        optimizer.step()
        optimizer.zero_grad()

    step()
    graph = torch_trace.trace_step(step, module=model, optimizer=optimizer)
    activations = {b.name for b in graph.buffers if b.kind == "activation"}
    assert {"layers.1 · relu", "layers.1 · relu #2"} <= activations
