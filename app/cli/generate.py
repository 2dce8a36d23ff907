"""`slabscope generate mlp|transformer`: write a larger executable graph file."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `slabscope generate`."""
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    mlp = kinds.add_parser("mlp", help="dense layers with ReLU between them")
    mlp.add_argument("--layers", type=int, default=4)
    mlp.add_argument("--batch", type=int, default=64)
    mlp.add_argument("--width", type=int, default=256)
    mlp.add_argument("--fused", action="store_true", help="one matmul_bias_relu per layer")
    block = kinds.add_parser("transformer", help="pre-norm blocks: multi-head attention + MLP")
    block.add_argument("--seq", type=int, default=128, help="tokens")
    block.add_argument("--width", type=int, default=256, help="model width")
    block.add_argument("--heads", type=int, default=4)
    block.add_argument("--ffn", type=int, help="MLP hidden width (default 4 x width)")
    block.add_argument("--layers", type=int, default=1, help="blocks")
    for sub in (mlp, block):
        sub.add_argument("--dtype", default="float32", choices=("float32", "float64", "float16"))
        sub.add_argument("-o", "--output", help="file to write (default: standard output)")


def run(args) -> int:
    """Generate the graph and write it; bad sizes are a PlanError for the dispatcher."""
    from slabscope.gpu.generators import mlp, transformer, write_graph
    from slabscope.planner.support.atomic_write import check_outputs

    check_outputs([], [("output", args.output)])  # a FIFO or a folder, before generating
    if args.kind == "mlp":
        data = mlp(args.layers, args.batch, args.width, fused=args.fused, dtype=args.dtype)
    else:
        data = transformer(args.seq, args.width, args.heads, ffn=args.ffn, layers=args.layers,
                           dtype=args.dtype)
    if args.output:
        write_graph(data, args.output)
        print(f"wrote {args.output}: {len(data['nodes'])} nodes, {len(data['buffers'])} buffers")
    else:
        print(json.dumps(data, indent=1))
    return 0
