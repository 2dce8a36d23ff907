"""How fast `planner.load` reads a large torch.export archive, beside torch's own loader.

Exports a generated decoder-only transformer (`--layers` pre-norm blocks of multi-head attention
and an MLP, 10,000+ graph nodes by default) once with torch on the CPU, saves it, then times
reading it back: `planner.load` (zip + JSON, no torch) against `torch.export.load` (which
unpickles and rebuilds every weight). Also checks that the serial lower bound equals the peak of
live bytes over the graph's order. Needs torch: `pip install -e '.[torch]'`.

    python bench/pt2_load.py [--layers 440] [--repeat 5] [--keep /tmp/transformer.pt2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from slabscope import planner  # noqa: E402


class Block(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(batch, tokens, 3, self.heads, -1) \
            .permute(2, 0, 3, 1, 4).unbind(0)
        scores = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        mask = torch.ones(tokens, tokens, dtype=torch.bool).tril()
        attn = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(batch, tokens, dim))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, layers: int, dim: int = 32, heads: int = 4, vocab: int = 256):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of `repeat` calls of fn, and its last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def peak_live(graph: planner.Graph) -> int:
    """The most aligned bytes live at once over the graph's schedule."""
    step = {name: i for i, name in enumerate(graph.schedule)}
    delta = [0] * (len(graph.schedule) + 1)
    for buffer, reserved in zip(graph.buffers, graph.reserved):
        steps = [step[u] for u in buffer.uses]
        delta[min(steps)] += reserved
        delta[max(steps) + 1] -= reserved
    live = best = 0
    for d in delta:
        live += d
        best = max(best, live)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=440)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--torch-repeat", type=int, default=1,
                        help="runs of torch.export.load (slow: it rebuilds every weight)")
    parser.add_argument("--keep", type=Path, help="save the archive here (reused if present)")
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    path = args.keep or Path(folder.name) / "transformer.pt2"
    if not path.exists():
        start = time.perf_counter()
        model = Transformer(args.layers).eval()
        program = torch.export.export(model, (torch.zeros(2, 128, dtype=torch.long),))
        torch.export.save(program, path)
        print(f"exported {args.layers} layers in {time.perf_counter() - start:.1f} s")
    with zipfile.ZipFile(path) as archive:
        json_bytes = max(i.file_size for i in archive.infolist() if i.filename.endswith(".json"))

    ours, ours_cpu, graph = timed(lambda: planner.load(path), args.repeat)
    theirs, theirs_cpu, program = timed(lambda: torch.export.load(path), args.torch_repeat)
    graph_nodes = sum(1 for n in program.graph.nodes if n.op == "call_function")
    bound = planner.lower_bound(graph, "serial").bytes
    print(f"\n{path.name}: {path.stat().st_size / 1e6:.1f} MB archive, model JSON "
          f"{json_bytes / 1e6:.1f} MB, {graph_nodes:,} call nodes in ep.graph")
    print(f"{'reader':<30} {'wall s':>7} {'CPU s':>7}  {'nodes':>7}  {'buffers':>7}")
    print(f"{'slabscope.planner.load (zip + JSON)':<30} {ours:>7.2f} {ours_cpu:>7.2f}  "
          f"{len(graph.nodes):>7,}  {len(graph.buffers):>7,}")
    print(f"{'torch.export.load (baseline)':<30} {theirs:>7.2f} {theirs_cpu:>7.2f}  "
          f"{graph_nodes:>7,}  {'-':>7}")
    print(f"ratio torch / planner: {theirs / ours:.1f}x wall, {theirs_cpu / ours_cpu:.1f}x CPU "
          f"(medians of {args.repeat} and {args.torch_repeat} runs; load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"serial lower bound {bound:,} B; peak of live bytes over the graph's order "
          f"{peak_live(graph):,} B: {'equal' if bound == peak_live(graph) else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
