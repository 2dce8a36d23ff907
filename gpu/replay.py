"""CUDA graph replay: capture what CuPy can capture, replay it, and time it against eager launches.

Host transfers (upload, readback from pageable memory) stay eager; each maximal run of compute
nodes between them is captured as one graph. A run whose capture fails (cuBLAS calls may refuse
to be captured) is split so that its matmuls stay eager and the rest is captured; whatever still
fails stays eager, and the report says which nodes were captured.
"""

from __future__ import annotations

import time

from .report import Replay

_TRANSFERS = ("upload", "readback")
_CUBLAS_OPS = ("matmul", "matmul_bias_relu")


def _runs(steps, keep_eager):
    """Consecutive steps grouped: maximal runs of capturable steps, and single eager steps."""
    groups, current = [], []
    for step in steps:
        if keep_eager(step):
            if current:
                groups.append(("capture", current))
                current = []
            groups.append(("eager", [step]))
        else:
            current.append(step)
    if current:
        groups.append(("capture", current))
    return groups


def _capture(backend, stream, steps):
    """A CuPy graph of `steps` launched on `stream`, or None when capture fails."""
    try:
        with stream, backend.no_allocations():
            stream.begin_capture()
            try:
                for step in steps:
                    step.launch()
            finally:
                graph = stream.end_capture()
        return graph
    except Exception:  # any refusal by the driver, cuBLAS or the allocator means: stay eager
        return None


def _segments(backend, stream, steps):
    segments = []
    for kind, group in _runs(steps, lambda s: s.node.op in _TRANSFERS):
        graph = _capture(backend, stream, group) if kind == "capture" else None
        if graph is not None:
            segments.append((graph, group))
            continue
        if kind == "eager":
            segments.extend((None, [s]) for s in group)
            continue
        for inner_kind, inner in _runs(group, lambda s: s.node.op in _CUBLAS_OPS):
            inner_graph = _capture(backend, stream, inner) if inner_kind == "capture" else None
            if inner_graph is not None:
                segments.append((inner_graph, inner))
            else:
                segments.extend((None, [s]) for s in inner)
    return segments


def _time(backend, stream, launch_all, repeats: int) -> float:
    cupy = backend.xp
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    with stream, backend.no_allocations():
        launch_all()
        stream.synchronize()
        began = time.perf_counter()
        start.record(stream)
        for _ in range(repeats):
            launch_all()
        stop.record(stream)
        stop.synchronize()
        host_seconds = time.perf_counter() - began
    device_seconds = cupy.cuda.get_elapsed_time(start, stop) / 1e3
    return max(device_seconds, host_seconds) / repeats


def measure_replay(backend, steps, repeats: int) -> Replay:
    """Eager against graph replay, per execute, on CuPy; on NumPy, say it is unavailable."""
    if backend.name != "cupy":
        return Replay(False, backend.replay_unavailable)
    stream = backend.xp.cuda.Stream(non_blocking=True)
    segments = _segments(backend, stream, steps)
    captured = tuple(s.node.name for graph, group in segments if graph is not None
                     for s in group)
    eager = tuple(s.node.name for graph, group in segments if graph is None for s in group)
    if not captured:
        return Replay(False, "CuPy captured no node of this graph into a CUDA graph",
                      captured, eager)

    def eager_all():
        for step in steps:
            step.launch()

    def replay_all():
        for graph, group in segments:
            if graph is None:
                group[0].launch()
            else:
                graph.launch(stream)

    eager_seconds = _time(backend, stream, eager_all, repeats)
    replay_seconds = _time(backend, stream, replay_all, repeats)
    transfers = {s.node.name for s in steps if s.node.op in _TRANSFERS}
    left_out = [n for n in eager if n not in transfers]
    graphs = sum(graph is not None for graph, _ in segments)
    what = "every compute node" if not left_out else \
        f"{len(captured)} nodes; not capturable, so eager: {', '.join(left_out)}"
    return Replay(True, f"captured {what} into {graphs} CUDA graph(s); host transfers stay eager",
                  captured, eager, eager_seconds, replay_seconds)
