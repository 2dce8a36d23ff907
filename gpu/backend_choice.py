"""Choosing a backend: a named one, or `auto`, the best of those a program runs on that is
available here, with the reason the better ones were passed over."""

from __future__ import annotations

from slabscope.planner import PlanError

from .backends import (BACKEND_NAMES, CupyBackend, NumpyBackend, OnnxRuntimeBackend,
                       _cupy_with_device)
from .torch_backend import TorchBackend, TorchCudaBackend, torch_cuda_reason


def _available(name: str):
    """(backend, None) when backend `name` can be made here, else (None, one-line reason)."""
    if name == "numpy":
        return NumpyBackend(), None
    if name == "onnxruntime":
        try:
            import onnxruntime
        except ImportError:
            return None, "onnxruntime is not installed (pip install 'slabscope[onnxruntime]')"
        return OnnxRuntimeBackend(onnxruntime), None
    cupy, reason = _cupy_with_device()
    if name == "cupy":
        return (CupyBackend(cupy), None) if cupy is not None else (None, reason)
    if name == "torch":
        try:
            return TorchBackend(), None
        except PlanError as exc:
            return None, str(exc)
    reason = reason or torch_cuda_reason()
    return (TorchCudaBackend(cupy), None) if reason is None else (None, reason)


def select_backend(name: str = "auto", supported=("cupy", "numpy"), what: str = "built-in ops"):
    """The backend called `name`, one of `supported` (what the program, `what`, runs on).

    `auto` takes the first of `supported` available here and, when that is not the first,
    says in `fallback_reason` which it chose and why the better ones were passed over. A named
    backend that is unavailable, or that cannot run `what`, is a `PlanError` saying why.
    """
    if name not in BACKEND_NAMES:
        raise PlanError(f"unknown backend {name!r}; choose from {', '.join(BACKEND_NAMES)}")
    if name != "auto":
        if name not in supported:
            raise PlanError(f"backend {name} cannot run {what}; choose from "
                            f"{', '.join(('auto',) + tuple(supported))}")
        backend, reason = _available(name)
        if backend is None:
            raise PlanError(f"backend {name} unavailable: {reason}")
        return backend
    passed = []
    for candidate in supported:
        backend, reason = _available(candidate)
        if backend is not None:
            if passed:
                backend.fallback_reason = f"using {candidate}: " + "; ".join(passed)
            return backend
        passed.append(reason if len(supported) == 2 and candidate == "cupy"
                      else f"{candidate}: {reason}")
    raise PlanError(f"no backend can run {what} here: " + "; ".join(passed))
