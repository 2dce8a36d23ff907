"""Write the small `torch.export` archives tests/test_pt2_import.py reads without torch.

Run from the repository root with torch 2.13 installed: `python tests/data/pt2/make_fixtures.py
[NAME ...]` (all of them, or only those named).
Each model is tiny (weights of a few hundred bytes; the reader never opens them anyway) and is
exported in eval mode on the CPU. `mlp_legacy.pt2` repacks `mlp.pt2` in the layout torch.export
wrote before 2.8 (`serialized_exported_program.json` beside `serialized_state_dict.pt`, a
`torch.save` pickle, and `version`), as `torch.export.load` still reads it.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


class MLP(nn.Module):
    """4×16 float32 in; Linear(16, 32), ReLU, Linear(32, 16): every tensor a multiple of 256 B."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvBN(nn.Module):
    """Conv2d, BatchNorm2d, ReLU, then a flatten (a view) and a Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))).flatten(1))


class Attention(nn.Module):
    """Single-head scaled dot-product attention written out: views, a transpose, softmax."""

    def __init__(self, dim: int = 16):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        return self.out(weights @ v)


class Block(nn.Module):
    """A pre-norm transformer block: `block.attn: aten.softmax` names its softmax's buffer."""

    def __init__(self, dim: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(x)


class AttentionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)


class InPlace(nn.Module):
    """In-place ops on a fresh tensor and on a view of it: one buffer for the whole chain."""

    def forward(self, x):
        y = x.clone()
        y.mul_(2)
        y[:, :2].add_(1)
        y.relu_()
        return y.sum(dim=1)


class SplitCat(nn.Module):
    """split and unbind give views; cat and stack make new tensors."""

    def forward(self, x):
        a, b = x.split(4, dim=1)
        rows = x.unbind(0)
        return torch.cat([b, a], dim=1), torch.stack(rows[:2]) * 2


class Branches(nn.Module):
    """Token ids through an embedding, then two branches (relu then *2, sigmoid then *3) whose
    temporaries a serial plan lets share bytes: run in another order, the plan is unsafe."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 64)

    def forward(self, ids):
        x = self.emb(ids)
        return torch.relu(x) * 2 + torch.sigmoid(x) * 3


class Stateful(nn.Module):
    """What a runner must not let leak from one execute into the next: a buffer updated in place
    (`seen.add_`), an input written in place; and a lifted constant (`detach_` of a fresh copy),
    a keyword input and a None argument, a slice assigned into a clone (in core ATen, a new
    tensor with the slice's strides: `aten.copy`)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(8))

    def forward(self, x, *, scale, bias=None):
        self.seen.add_(x.mean(0))
        x.mul_(scale)
        y = x.clone()
        y[:, 2:5] = x[:, :3] * torch.tensor([1.0, 2.0, 3.0])
        return y * self.seen if bias is None else y + bias


FIXTURES = {
    "mlp": (MLP, (torch.randn(4, 16),)),
    "convbn": (ConvBN, (torch.randn(1, 3, 8, 8),)),
    "attention": (AttentionBlock, (torch.randn(1, 8, 16),)),
    "inplace": (InPlace, (torch.randn(4, 8),)),
    "splitcat": (SplitCat, (torch.randn(4, 8),)),
    "branches": (Branches, (torch.zeros(4, 16, dtype=torch.int64),)),
    "stateful": (Stateful, (torch.randn(4, 8),), {"scale": torch.randn(8), "bias": None}),
}


def export(name: str, dynamic: bool = False):
    """The exported program of fixture `name` (its batch dimension symbolic with `dynamic`)."""
    cls, inputs, *keywords = FIXTURES[name]
    torch.manual_seed(0)
    model = cls().eval()
    shapes = ({"x": {0: torch.export.Dim("batch", min=2, max=64)}},) if dynamic else None
    return torch.export.export(model, inputs, *keywords,
                               dynamic_shapes=shapes[0] if shapes else None)


def legacy_copy(source: Path, target: Path) -> None:
    """Repack a torch >= 2.8 archive in the layout torch.export.save wrote before 2.8."""
    with zipfile.ZipFile(source) as archive:
        program = next(archive.read(n) for n in archive.namelist() if n.endswith("models/model.json"))
    version = json.loads(program)["schema_version"]
    state = io.BytesIO()
    torch.save(dict(export("mlp").state_dict), state)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("version", f"{version['major']}.{version['minor']}")
        archive.writestr("serialized_exported_program.json", program)
        archive.writestr("serialized_state_dict.pt", state.getvalue())
        archive.writestr("serialized_constants.pt", state.getvalue())
        archive.writestr("serialized_example_inputs.pt", state.getvalue())


def main(names=()) -> None:
    """Write every fixture, or only those in `names` (stems, e.g. stateful_core)."""
    archives = {name: (lambda name=name: export(name)) for name in FIXTURES}
    archives["mlp_dynamic"] = lambda: export("mlp", dynamic=True)
    # the same program decomposed to core ATen: functional, its in-place writes made outputs
    archives["stateful_core"] = lambda: export("stateful").run_decompositions()
    for name, make in archives.items():
        if not names or name in names:
            torch.export.save(make(), HERE / f"{name}.pt2")
    if not names or "mlp_legacy" in names:
        legacy_copy(HERE / "mlp.pt2", HERE / "mlp_legacy.pt2")
    for path in sorted(HERE.glob("*.pt2")):
        print(f"{path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
