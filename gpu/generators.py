"""Executable graphs larger than the worked example: an MLP and transformer blocks.

Each generator returns graph-file data (see docs/formats.md): nodes with ops and operands,
buffers with shapes and kinds, and the generation order as the serial `schedule`. Pure Python.
"""

from __future__ import annotations

import json
import math

from slabscope.planner import PlanError

from .binding import scratch_bytes


class _GraphData:
    """Nodes and buffers collected in generation order."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.nodes: list[dict] = []
        self.buffers: dict[str, dict] = {}

    def buffer(self, name: str, shape, kind: str) -> str:
        self.buffers[name] = {"name": name, "shape": list(shape), "dtype": self.dtype,
                              "kind": kind}
        return name

    def workspace(self, name: str, op: str, in_shapes) -> str:
        self.buffers[name] = {"name": name, "bytes": scratch_bytes(op, in_shapes, self.dtype),
                              "kind": "workspace"}
        return name

    def node(self, name: str, op: str, inputs=(), outputs=(), workspace=(), **attrs) -> None:
        entry = {"name": name, "op": op, "inputs": list(inputs), "outputs": list(outputs)}
        if workspace:
            entry["workspace"] = list(workspace)
        if attrs:
            entry["attrs"] = attrs
        self.nodes.append(entry)

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.buffers[name]["shape"])

    def to_dict(self, description: str) -> dict:
        return {"description": description, "alignment": 256, "nodes": self.nodes,
                "schedule": [n["name"] for n in self.nodes],
                "buffers": list(self.buffers.values())}


# Past these, a generated file takes minutes to write and more memory than a machine has: the
# node count grows with layers and heads, every buffer's bytes with the product of its dimensions.
LIMITS = {"layers": 10_000, "heads": 1_024}
MAX_DIMENSION = 1 << 24


def _positive(**values) -> None:
    for name, value in values.items():
        if not isinstance(value, int) or value < 1:
            raise PlanError(f"{name} must be a positive integer, got {value!r}")
        limit = LIMITS.get(name, MAX_DIMENSION)
        if value > limit:
            raise PlanError(f"{name} must be at most {limit:,}, got {value:,}")


def mlp(layers: int, batch: int, width: int, fused: bool = False,
        dtype: str = "float32") -> dict:
    """`layers` dense layers of `width` x `width` on a `batch` x `width` input, ReLU between.

    Unfused: matmul, add_bias, relu per layer (the last without relu); fused: one
    matmul_bias_relu per layer.
    """
    _positive(layers=layers, batch=batch, width=width)
    g = _GraphData(dtype)
    h = g.buffer("x", (batch, width), "input")
    weights = [g.buffer(f"w{i}", (width, width), "weight") for i in range(layers)]
    biases = [g.buffer(f"b{i}", (width,), "weight") for i in range(layers)]
    g.node("upload", "upload", outputs=[h, *weights, *biases])
    for i in range(layers):
        last = i == layers - 1
        out = g.buffer("y" if last else f"h{i + 1}", (batch, width),
                       "output" if last else "intermediate")
        if fused:
            g.node(f"layer{i}", "matmul_bias_relu", [h, weights[i], biases[i]], [out])
        else:
            t = g.buffer(f"t{i}", (batch, width), "intermediate")
            g.node(f"matmul{i}", "matmul", [h, weights[i]], [t])
            s = out if last else g.buffer(f"s{i}", (batch, width), "intermediate")
            g.node(f"add_bias{i}", "add_bias", [t, biases[i]], [s])
            if not last:
                g.node(f"relu{i}", "relu", [s], [out])
        h = out
    g.node("readback", "readback", inputs=[h])
    kind = "fused" if fused else "unfused"
    return g.to_dict(f"MLP, {layers} layers of {width} x {width}, batch {batch}, {dtype}, {kind}")


def _block(g: _GraphData, index: int, x: str, seq: int, width: int, heads: int, ffn: int,
           last: bool) -> tuple[str, list[str]]:
    """One pre-norm block: x + attention(layernorm(x)), then + MLP(layernorm(.)).

    Returns the block's output buffer and the weights it needs uploaded. Heads are separate
    branches (unordered in the DAG), summed through their output projections.
    """
    p = f"l{index}."
    dh = width // heads
    weights = []

    def weight(name, shape):
        weights.append(g.buffer(p + name, shape, "weight"))
        return weights[-1]

    def act(name, shape, kind="intermediate"):
        return g.buffer(p + name, shape, kind)

    def norm(name, source):
        gain, shift = weight(f"{name}.gain", (width,)), weight(f"{name}.shift", (width,))
        out = act(name, (seq, width))
        ws = g.workspace(p + f"{name}.ws", "layernorm", [g.shape(source)])
        g.node(p + name, "layernorm", [source, gain, shift], [out], [ws], eps=1e-5)
        return out

    h1 = norm("ln1", x)
    projections = []
    for head in range(heads):
        hp = f"h{head}."
        q, k, v = (act(hp + n, (seq, dh)) for n in "qkv")
        for name, out in (("wq", q), ("wk", k), ("wv", v)):
            g.node(p + hp + name[1], "matmul", [h1, weight(hp + name, (width, dh))], [out])
        scores = act(hp + "scores", (seq, seq))
        g.node(p + hp + "scores", "matmul", [q, k], [scores], transpose_b=True,
               scale=1.0 / math.sqrt(dh))
        probs = act(hp + "probs", (seq, seq))
        ws = g.workspace(p + hp + "softmax.ws", "softmax", [(seq, seq)])
        g.node(p + hp + "softmax", "softmax", [scores], [probs], [ws])
        ctx = act(hp + "ctx", (seq, dh))
        g.node(p + hp + "ctx", "matmul", [probs, v], [ctx])
        proj = act(hp + "proj", (seq, width))
        g.node(p + hp + "proj", "matmul", [ctx, weight(hp + "wo", (dh, width))], [proj])
        projections.append(proj)
    attn = projections[0]
    for head, proj in enumerate(projections[1:], start=1):
        total = act(f"attn{head}", (seq, width))
        g.node(p + f"attn_sum{head}", "add", [attn, proj], [total])
        attn = total
    res1 = act("res1", (seq, width))
    g.node(p + "residual1", "add", [x, attn], [res1])
    h2 = norm("ln2", res1)
    f1 = act("ffn1", (seq, ffn))
    g.node(p + "ffn1", "matmul", [h2, weight("w1", (width, ffn))], [f1])
    f1b = act("ffn1_bias", (seq, ffn))
    g.node(p + "ffn1_bias", "add_bias", [f1, weight("b1", (ffn,))], [f1b])
    act_out = act("gelu", (seq, ffn))
    g.node(p + "gelu", "gelu", [f1b], [act_out])
    f2 = act("ffn2", (seq, width))
    g.node(p + "ffn2", "matmul", [act_out, weight("w2", (ffn, width))], [f2])
    f2b = act("ffn2_bias", (seq, width))
    g.node(p + "ffn2_bias", "add_bias", [f2, weight("b2", (width,))], [f2b])
    out = g.buffer("y", (seq, width), "output") if last else act("out", (seq, width))
    g.node(p + "residual2", "add", [res1, f2b], [out])
    return out, weights


def transformer(seq: int, width: int, heads: int, ffn: int | None = None, layers: int = 1,
                dtype: str = "float32") -> dict:
    """`layers` pre-norm transformer blocks (multi-head attention, then a GELU MLP) on `seq`
    tokens of `width`; `ffn` defaults to 4 x width. No causal mask."""
    ffn = 4 * width if ffn is None else ffn
    _positive(seq=seq, width=width, heads=heads, ffn=ffn, layers=layers)
    if layers * heads > LIMITS["layers"]:
        raise PlanError(f"layers x heads must be at most {LIMITS['layers']:,} (a few nodes per "
                        f"head per layer), got {layers * heads:,}")
    if width % heads:
        raise PlanError(f"width {width} must be a multiple of heads {heads}")
    g = _GraphData(dtype)
    x = g.buffer("x", (seq, width), "input")
    g.node("upload", "upload", outputs=[x])
    uploaded = [x]
    h = x
    for index in range(layers):
        h, weights = _block(g, index, h, seq, width, heads, ffn, index == layers - 1)
        uploaded += weights
    g.nodes[0]["outputs"] = uploaded
    g.node("readback", "readback", inputs=[h])
    return g.to_dict(f"transformer, {layers} block(s): {seq} tokens, width {width}, {heads} "
                     f"heads, ffn {ffn}, {dtype}")


def write_graph(data: dict, path) -> None:
    """Write graph-file data as JSON to `path` (through a temporary file renamed into place)."""
    from slabscope.planner.support.atomic_write import write_atomic

    write_atomic(path, json.dumps(data, indent=1) + "\n", "output")
