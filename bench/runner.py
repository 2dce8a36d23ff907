"""Slab execution against per-buffer allocation, and eager launches against CUDA graph replay.

From the worked example up to MLPs of several hundred MiB, then real models: the committed
`.pt2` fixtures (torch, one ATen op per node) and the light ONNX models the onnx package ships
(one onnxruntime session per node, or, without onnxruntime, one onnx.reference evaluator per
node: then only two of them, as each takes 30 s to minutes); prints one table. Every figure is measured by `gpu.run` on
this machine (the backend is chosen as `slabscope run` would: CuPy or torch-cuda when a device
answers, else NumPy or torch on the CPU).

    .venv/bin/python bench/runner.py [--backend auto|cupy|numpy] [--repeats N] [--quick]
                                     [--model-repeats N] [--no-models | --models-only]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slabscope import gpu  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.gpu.generators import mlp, transformer  # noqa: E402
from slabscope.gpu.report import seconds_text  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "assets" / "example_graphs"
PT2 = Path(__file__).resolve().parent.parent / "tests" / "data" / "pt2"
# The light ONNX models the onnx package ships, least work first (CPU seconds of one verified
# run in onnxruntime here: squeezenet 0.4 ... vgg19 7.6); --quick runs the first four.
ONNX_MODELS = ("squeezenet", "shufflenet", "bvlc_alexnet", "inception_v1", "zfnet512",
               "inception_v2", "resnet50", "densenet121", "vgg19")
# In onnx.reference alone (no onnxruntime): zfnet512 takes about 30 s, densenet121 minutes.
REFERENCE_MODELS = ("zfnet512", "densenet121")


def cases(quick: bool):
    """(label, graph) from the tiny example upwards."""
    yield "relu_unfused (example)", planner.load(EXAMPLES / "relu_unfused.json")
    yield "relu_fused (example)", planner.load(EXAMPLES / "relu_fused.json")
    yield "transformer 256 tok, w512, 8 heads", planner.graph_from_dict(transformer(256, 512, 8))
    yield "mlp 8 x 1024, batch 1024", planner.graph_from_dict(mlp(8, 1024, 1024))
    if not quick:
        yield "mlp 8 x 1024, batch 4096", planner.graph_from_dict(mlp(8, 4096, 1024))
        yield "mlp 6 x 4096, batch 256", planner.graph_from_dict(mlp(6, 256, 4096))


def model_cases(quick: bool):
    """(label, model file) of the real models that can run here: `.pt2` with torch, ONNX with
    onnx (all the light models with onnxruntime, two without; the larger only without
    `quick`)."""
    import importlib.util

    if importlib.util.find_spec("torch"):
        for name in ("attention", "convbn", "stateful_core"):
            yield f"{name}.pt2", PT2 / f"{name}.pt2"
    if importlib.util.find_spec("onnx"):
        import onnx

        light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
        names = ONNX_MODELS if importlib.util.find_spec("onnxruntime") else REFERENCE_MODELS
        for name in names[:4 if len(names) > 2 else 1] if quick else names:
            if (light / f"light_{name}.onnx").exists():
                yield name, light / f"light_{name}.onnx"


def mib(n: int | None) -> str:
    """Bytes as MiB with one decimal, or '-'."""
    return "-" if n is None else f"{n / 2**20:,.1f}"


def main(argv=None) -> int:
    """Run every case in both layouts and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto", choices=gpu.BACKEND_NAMES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="skip the two largest MLPs and the largest model")
    parser.add_argument("--model-repeats", type=int, default=1,
                        help="timed executes of each real model (default 1: without "
                             "onnxruntime, ONNX models run in the reference evaluator, tens of "
                             "seconds each)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--no-models", action="store_true", help="only the generated graphs")
    which.add_argument("--models-only", action="store_true", help="only the real models")
    args = parser.parse_args(argv)

    if args.backend in ("auto", "cupy", "numpy"):
        gpu.select_backend(args.backend)  # the one-time backend probe is not any row's prepare
    header = ("graph", "buffers", "layout", "alloc MiB", "peak MiB", "prepare", "execute",
              "replay", "verified")
    rows = [header]
    device = None
    runs = [] if args.models_only else \
        [(label, graph, args.backend, args.repeats) for label, graph in cases(args.quick)]
    if not args.no_models:
        # the model's own framework picks its backend (torch or NumPy under auto)
        model_backend = "auto" if args.backend in ("cupy", "numpy") else args.backend
        runs += [(label, path, model_backend, args.model_repeats)
                 for label, path in model_cases(args.quick)]
    backends = {}
    for label, graph, backend, repeats in runs:
        for layout in gpu.LAYOUTS:
            try:
                report = gpu.run(graph, backend=backend, repeats=repeats, layout=layout,
                                 verify=layout == "slab")
            except planner.PlanError as exc:
                rows.append((label, "-", layout) + ("-",) * 5 + (f"cannot run: {exc}"[:60],))
                continue
            backends.setdefault(report.backend, (report.device, report.backend_note))
            device = device or (report.backend, report.device, report.backend_note)
            buffers = len((graph if isinstance(graph, planner.Graph)
                           else planner.load(graph, include_weights=False)).buffers)
            replay = report.replay
            replayed = f"{seconds_text(replay.replay_seconds)}" if replay.available else "n/a"
            verified = "-" if report.verification is None else \
                ("yes" if report.verification.ok else "NO")
            rows.append((f"{label} [{report.backend}]" if report.backend not in ("numpy", "cupy")
                         else label, str(buffers), layout, mib(report.allocated_bytes),
                         mib(report.peak_used_bytes), seconds_text(report.phase("prepare").seconds),
                         seconds_text(report.execute_seconds), replayed, verified))
            print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    backend = device[0]
    for name, (where, note) in backends.items():
        print(f"backend {name} on {where}" + (f" ({note})" if note else ""))
    print(f"{args.repeats} timed executes per generated graph, {args.model_repeats} per real "
          f"model; execute = mean wall time of one; prepare includes one warm-up execute; peak = "
          f"{'CuPy pool total' if backend == 'cupy' else 'tracemalloc high-water of prepare + one execute, host staging included (numpy); not measured on torch or onnxruntime'}")
    if backend != "cupy":
        print("replay: CUDA graph replay needs CuPy and a device (n/a here)")
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    for r in rows:
        print("  ".join(cell.ljust(w) if c in (0, 2) else cell.rjust(w)
                        for c, (cell, w) in enumerate(zip(r, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
