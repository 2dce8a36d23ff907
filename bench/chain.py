"""Generated serial traces for benchmarks: a chain of steps with a schedule, and MiniMalloc rows."""

from __future__ import annotations

import random

SIZES = (256, 1024, 4096, 65536, 1 << 20)


def chain_graph_data(nodes: int, seed: int = 0) -> dict:
    """Graph-file data: `nodes` steps in one chain (edges and `schedule` in step order) and as many
    buffers, each written at one step and read 1-8 steps later (one in fifty lives 100-1000
    steps, like a skip connection)."""
    rng = random.Random(seed)
    names = [f"s{i}" for i in range(nodes)]
    buffers = []
    for b in range(nodes):
        span = rng.randint(100, 1000) if rng.random() < 0.02 else rng.randint(1, 8)
        uses = [names[b]] if b + 1 >= nodes else [names[b], names[min(b + span, nodes - 1)]]
        buffers.append({"name": f"b{b}", "bytes": rng.choice(SIZES), "uses": uses})
    return {"nodes": names, "edges": [[a, b] for a, b in zip(names, names[1:])],
            "buffers": buffers, "schedule": names}


def minimalloc_rows(rows: int, seed: int = 0) -> str:
    """A MiniMalloc CSV (`id,lower,upper,size`) of `rows` buffers over about `rows` time steps,
    each live 1-8 steps (one in fifty 100-1000)."""
    rng = random.Random(seed)
    lines = ["id,lower,upper,size"]
    for b in range(rows):
        span = rng.randint(100, 1000) if rng.random() < 0.02 else rng.randint(1, 8)
        lines.append(f"{b},{b},{b + span},{rng.choice(SIZES)}")
    return "\n".join(lines) + "\n"
