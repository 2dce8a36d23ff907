"""The ops an executable graph may name: shape checks, scratch needs, kernels, FLOP counts.

Every kernel writes into `out=` views it is given and takes its scratch from the node's
workspace buffer, so an execute never asks the array module for memory. Kernels are written
once against the array module `xp` (NumPy or CuPy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from slabscope.planner import PlanError

Shape = tuple[int, ...]


@dataclass(frozen=True)
class OpSpec:
    """One op: operand counts, a shape check, the scratch it needs, its kernel and its cost.

    `check(node, ins, outs)` raises `PlanError` on bad shapes; `scratch(ins)` lists the shapes
    (in the first input's dtype) it carves from its workspace buffer; `kernel(xp, ins, outs,
    scratch, attrs)` computes; `flops(ins, outs, attrs)` counts arithmetic as implemented.
    """

    name: str
    inputs: tuple[int, int]
    outputs: tuple[int, int]
    check: Callable
    kernel: Callable | None
    flops: Callable
    scratch: Callable = lambda ins: ()


def _elements(shape: Shape) -> int:
    return math.prod(shape)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# Each op's attributes and what their values must be; any other attribute is refused.
ATTRIBUTES: dict[str, dict[str, tuple[Callable[[object], bool], str]]] = {
    "matmul": {"scale": (_is_number, "a finite number"),
               "transpose_b": (lambda v: isinstance(v, bool), "true or false")},
    "layernorm": {"eps": (lambda v: _is_number(v) and v > 0, "a positive finite number")},
}


def check_attributes(node) -> None:
    """Raise `PlanError` naming an attribute `node`'s op does not take or a value of the wrong
    kind (a string `scale` would reach the kernel as text)."""
    known = ATTRIBUTES.get(node.op, {})
    for key, value in node.attrs.items():
        if key not in known:
            takes = ", ".join(known) or "none"
            raise PlanError(f"node {node.name!r} ({node.op}): unknown attribute {key!r} "
                            f"(takes: {takes})")
        valid, want = known[key]
        if not valid(value):
            raise PlanError(f"node {node.name!r} ({node.op}): attribute {key!r} must be {want}, "
                            f"got {value!r:.60}")


def _rows_nonempty(node, shape: Shape) -> None:
    """Ops that reduce over the last axis need one, and it must not be empty."""
    if len(shape) == 0 or shape[-1] == 0:
        raise PlanError(f"node {node.name!r} ({node.op}): needs at least one dimension and a "
                        f"non-empty last one, got shape {list(shape)}")


def _same_shape(node, ins, outs):
    shapes = {tuple(s) for s in ins} | {tuple(s) for s in outs}
    if len(shapes) > 1:
        raise PlanError(f"node {node.name!r} ({node.op}): operand shapes differ: "
                        f"{', '.join(str(list(s)) for s in ins + outs)}")


def _matmul_shapes(node, a, b, attrs) -> Shape:
    if len(a) != 2 or len(b) != 2:
        raise PlanError(f"node {node.name!r} ({node.op}): matmul needs 2-D operands, got "
                        f"{list(a)} and {list(b)}")
    k_b, n = (b[1], b[0]) if attrs.get("transpose_b") else (b[0], b[1])
    if a[1] != k_b:
        raise PlanError(f"node {node.name!r} ({node.op}): inner dimensions differ: "
                        f"{list(a)} @ {list(b)}{'ᵀ' if attrs.get('transpose_b') else ''}")
    return (a[0], n)


def _check_matmul(node, ins, outs):
    want = _matmul_shapes(node, ins[0], ins[1], node.attrs)
    if tuple(outs[0]) != want:
        raise PlanError(f"node {node.name!r} ({node.op}): output {list(outs[0])} should be "
                        f"{list(want)}")


def _check_bias(node, ins, outs, at: int = 1):
    if len(outs[0]) == 0:
        raise PlanError(f"node {node.name!r} ({node.op}): a bias needs an output of at least "
                        f"one dimension, got shape []")
    if len(ins[at]) != 1 or ins[at][0] != outs[0][-1]:
        raise PlanError(f"node {node.name!r} ({node.op}): bias {list(ins[at])} should be "
                        f"[{outs[0][-1]}]")


def _check_add_bias(node, ins, outs):
    _same_shape(node, ins[:1], outs)
    _check_bias(node, ins, outs)


def _check_fused(node, ins, outs):
    _check_matmul(node, ins[:2], outs)
    _check_bias(node, ins, outs, at=2)


def _check_softmax(node, ins, outs):
    _same_shape(node, ins, outs)
    _rows_nonempty(node, outs[0])


def _check_layernorm(node, ins, outs):
    _same_shape(node, ins[:1], outs)
    _rows_nonempty(node, outs[0])
    for extra in ins[1:]:
        if tuple(extra) != (outs[0][-1],):
            raise PlanError(f"node {node.name!r} (layernorm): scale/shift {list(extra)} should "
                            f"be [{outs[0][-1]}]")
    if len(ins) == 2:
        raise PlanError(f"node {node.name!r} (layernorm): give both scale and shift, or neither")


def _check_nothing(node, ins, outs):
    return None


def _rows(shape: Shape) -> Shape:
    return tuple(shape[:-1]) + (1,)


def _matmul(xp, ins, outs, scratch, attrs):
    a, b = ins
    xp.matmul(a, b.T if attrs.get("transpose_b") else b, out=outs[0])
    if "scale" in attrs:
        xp.multiply(outs[0], attrs["scale"], out=outs[0])


def _add_bias(xp, ins, outs, scratch, attrs):
    xp.add(ins[0], ins[1], out=outs[0])


def _add(xp, ins, outs, scratch, attrs):
    xp.add(ins[0], ins[1], out=outs[0])


def _relu(xp, ins, outs, scratch, attrs):
    xp.maximum(ins[0], 0, out=outs[0])


# sqrt(2/pi) of the tanh approximation of GELU (Hendrycks and Gimpel).
_GELU_C = math.sqrt(2.0 / math.pi)


def _gelu(xp, ins, outs, scratch, attrs):
    x, y = ins[0], outs[0]
    # 0.5 x (1 + tanh(c (x + 0.044715 x^3))), built in place in y so nothing is allocated.
    xp.multiply(x, x, out=y)
    xp.multiply(y, x, out=y)
    xp.multiply(y, 0.044715, out=y)
    xp.add(y, x, out=y)
    xp.multiply(y, _GELU_C, out=y)
    xp.tanh(y, out=y)
    xp.add(y, 1.0, out=y)
    xp.multiply(y, x, out=y)
    xp.multiply(y, 0.5, out=y)


def _softmax(xp, ins, outs, scratch, attrs):
    x, y, (row,) = ins[0], outs[0], scratch
    xp.max(x, axis=-1, keepdims=True, out=row)
    xp.subtract(x, row, out=y)
    xp.exp(y, out=y)
    xp.sum(y, axis=-1, keepdims=True, out=row)
    xp.divide(y, row, out=y)


def _layernorm(xp, ins, outs, scratch, attrs):
    x, y = ins[0], outs[0]
    centered, mean, spread = scratch
    xp.mean(x, axis=-1, keepdims=True, out=mean)
    xp.subtract(x, mean, out=centered)
    xp.multiply(centered, centered, out=y)
    xp.mean(y, axis=-1, keepdims=True, out=spread)
    xp.add(spread, attrs.get("eps", 1e-5), out=spread)
    xp.sqrt(spread, out=spread)
    xp.divide(centered, spread, out=y)
    if len(ins) == 3:
        xp.multiply(y, ins[1], out=y)
        xp.add(y, ins[2], out=y)


def _matmul_bias_relu(xp, ins, outs, scratch, attrs):
    x, w, b = ins
    y = outs[0]
    xp.matmul(x, w, out=y)
    xp.add(y, b, out=y)
    xp.maximum(y, 0, out=y)


def _matmul_flops(ins, outs, attrs):
    m, n = outs[0]
    k = ins[0][1]
    return 2 * m * n * k + (m * n if "scale" in attrs else 0)


def _per_element(count: int):
    return lambda ins, outs, attrs: count * _elements(outs[0])


def _layernorm_flops(ins, outs, attrs):
    # mean, subtract, square, mean, divide per element (+ scale and shift); eps and sqrt per row
    per_element = 5 + (2 if len(ins) == 3 else 0)
    return per_element * _elements(outs[0]) + 2 * _elements(_rows(outs[0]))


def _no_flops(ins, outs, attrs):
    return 0


OPS: dict[str, OpSpec] = {spec.name: spec for spec in (
    OpSpec("upload", (0, 0), (1, 99), _check_nothing, None, _no_flops),
    OpSpec("readback", (1, 99), (0, 0), _check_nothing, None, _no_flops),
    OpSpec("matmul", (2, 2), (1, 1), _check_matmul, _matmul, _matmul_flops),
    OpSpec("add_bias", (2, 2), (1, 1), _check_add_bias, _add_bias, _per_element(1)),
    OpSpec("add", (2, 2), (1, 1), _same_shape, _add, _per_element(1)),
    OpSpec("relu", (1, 1), (1, 1), _same_shape, _relu, _per_element(1)),
    # 9 arithmetic steps per element, tanh counted as one
    OpSpec("gelu", (1, 1), (1, 1), _same_shape, _gelu, _per_element(9)),
    OpSpec("softmax", (1, 1), (1, 1), _check_softmax, _softmax, _per_element(5),
           scratch=lambda ins: (_rows(ins[0]),)),
    OpSpec("layernorm", (1, 3), (1, 1), _check_layernorm, _layernorm, _layernorm_flops,
           scratch=lambda ins: (tuple(ins[0]), _rows(ins[0]), _rows(ins[0]))),
    OpSpec("matmul_bias_relu", (3, 3), (1, 1), _check_fused, _matmul_bias_relu,
           lambda ins, outs, attrs: _matmul_flops(ins, outs, attrs) + 2 * _elements(outs[0])),
)}


def op_spec(node) -> OpSpec:
    """The spec of `node`'s op; a node without a known op is a `PlanError` naming it."""
    if node.op is None:
        raise PlanError(f"node {node.name!r} has no op, so the graph cannot be executed "
                        f"(known ops: {', '.join(OPS)})")
    if node.op not in OPS:
        raise PlanError(f"node {node.name!r}: unsupported op {node.op!r} "
                        f"(known ops: {', '.join(OPS)})")
    return OPS[node.op]
