"""Torch backends for real models: the slab as torch memory on the CPU, or CuPy memory that
torch shares through DLPack on a CUDA device. Same interface as `backends.NumpyBackend`.

Torch is imported only when one of these backends is made; host staging stays NumPy (dtypes
NumPy lacks, such as bfloat16, are staged as float32 and cast on upload and readback).
"""

from __future__ import annotations

import functools

import numpy as np

from slabscope.planner import PlanError

from .backends import DevicePeak, HostExecution, KernelClock, _host_name

# Slab sizes are rounded up to this, so one allocation can be seen as any dtype (largest 16 B).
_SLAB_ROUNDING = 64


def require_torch():
    """The torch module, or a one-line `PlanError` saying how to install it."""
    try:
        import torch
    except ImportError:
        raise PlanError("running .pt2 models needs torch: pip install 'slabscope[torch]'") \
            from None
    return torch


def torch_dtype(torch, name: str):
    """The torch dtype called `name` (the planner's names are torch's)."""
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise PlanError(f"dtype {name!r} has no torch equivalent")
    return dtype


def host_dtype(name: str) -> np.dtype:
    """The NumPy dtype that stages a buffer of dtype `name` on the host: itself where NumPy has
    it, else float32 (exact for bfloat16 and the float8 kinds), complex64 for complex32."""
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype("complex64" if name.startswith("complex") else "float32")


def _rounded(nbytes: int) -> int:
    return -(-max(nbytes, 1) // _SLAB_ROUNDING) * _SLAB_ROUNDING


class TorchBackend(HostExecution):
    """Host execution with torch: the slab is one uint8 tensor, views are tensors over it."""

    name = "torch"
    xp = None  # model programs call torch themselves
    replay_unavailable = "CUDA graph replay needs a CUDA device; unavailable on torch (CPU)"

    def __init__(self, fallback_reason: str | None = None):
        self.torch = require_torch()
        self.target = self.torch.device("cpu")
        self.fallback_reason = fallback_reason
        self.device = f"torch {self.torch.__version__} on {_host_name()}"

    def allocate(self, nbytes: int):
        """One uint8 tensor of at least `nbytes` (rounded so any dtype can view all of it)."""
        try:
            return self.torch.empty(_rounded(nbytes), dtype=self.torch.uint8, device=self.target)
        except RuntimeError as exc:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes "
                            f"({str(exc).splitlines()[0]})") from None

    def view(self, slab, offset: int, shape, dtype: str):
        """A contiguous tensor of `shape` and `dtype` over `slab`'s bytes from `offset`."""
        torch = self.torch
        dt = torch_dtype(torch, dtype)
        itemsize = torch.empty((), dtype=dt).element_size()
        count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
        if offset % itemsize:
            raise PlanError(f"offset {offset} is not a multiple of {dtype}'s {itemsize} bytes")
        flat = slab.view(dt)
        return flat[offset // itemsize: offset // itemsize + count].view(tuple(shape))

    def upload(self, view, host) -> None:
        """Copy host array (or tensor) `host` into `view`, casting to its dtype."""
        source = host if isinstance(host, self.torch.Tensor) else \
            self.torch.from_numpy(np.ascontiguousarray(host))
        view.copy_(source.reshape(view.shape))

    def readback(self, view, host) -> None:
        """Copy `view` into host NumPy array `host` (cast to its dtype)."""
        self.torch.from_numpy(host).copy_(view)

    def to_host(self, array) -> np.ndarray:
        """A host NumPy copy of `array` (float32 for dtypes NumPy lacks)."""
        tensor = array.detach()
        if not _numpy_has(tensor.dtype):
            tensor = tensor.to(self.torch.complex64 if tensor.is_complex() else self.torch.float32)
        return tensor.cpu().numpy().copy()

    def memory_note(self) -> str:
        """How peak memory is measured on this backend."""
        return "torch's CPU allocator is outside tracemalloc's view"

    def peak_used(self) -> int | None:
        """Peak memory the run used beyond its buffers, where the backend can tell."""
        return None


def _numpy_has(dtype) -> bool:
    try:
        np.dtype(str(dtype).removeprefix("torch."))
        return True
    except TypeError:
        return False


class _CudaEventClock(KernelClock):
    """Per-node timings from torch CUDA events on the current stream (made once, in prepare)."""

    def __init__(self, torch, count: int):
        self._torch = torch
        self.begun = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        self.ended = [torch.cuda.Event(enable_timing=True) for _ in range(count)]

    def start(self, i: int) -> None:
        self.begun[i].record()

    def stop(self, i: int) -> None:
        self.ended[i].record()

    def seconds(self) -> list[float]:
        return [b.elapsed_time(e) / 1e3 for b, e in zip(self.begun, self.ended)]


class TorchCudaBackend(TorchBackend):
    """Device execution: CuPy allocates the slab, torch sees it through DLPack (no copy) and runs
    the kernels on the current stream; CUDA events time each node.

    Allocations are not refused: a node without an `out=` overload computes its result in
    torch's allocator before the copy into the slab, and torch's peak is reported instead."""

    name = "torch-cuda"
    clock_name = "CUDA events around each kernel"
    replay_unavailable = "CUDA graph replay is measured for the built-in ops only"

    def __init__(self, cupy):
        self.torch = require_torch()
        self._cupy = cupy
        self.target = self.torch.device("cuda", cupy.cuda.Device().id)
        self.fallback_reason = None
        self.device = f"{self.torch.cuda.get_device_name(self.target)} (torch "\
                      f"{self.torch.__version__}, slab by CuPy)"

    def allocate(self, nbytes: int):
        """One CuPy device allocation, seen by torch as a uint8 tensor through DLPack."""
        cupy = self._cupy
        size = _rounded(nbytes)
        free = cupy.cuda.runtime.memGetInfo()[0]
        if size > free:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes, the device has "
                            f"{free:,} free")
        try:
            memory = cupy.empty(size, dtype=cupy.uint8)
        except cupy.cuda.memory.OutOfMemoryError:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes, the device has "
                            f"{self.free_bytes():,} free") from None
        tensor = self.torch.from_dlpack(memory)
        if tensor.data_ptr() != memory.data.ptr:
            raise PlanError("DLPack gave torch a copy of the slab, not the slab itself")
        return tensor

    def synchronize(self) -> None:
        """Wait for all queued work on the device."""
        self.torch.cuda.synchronize(self.target)

    def clock(self, count: int) -> KernelClock:
        """CUDA-event clock for `count` kernels."""
        return _CudaEventClock(self.torch, count)

    def peak(self) -> DevicePeak:
        """No tabulated peak for torch kernels (they may use TF32 or tensor cores)."""
        return DevicePeak(None, None, "as torch chose", "no stated peak for torch's kernels")

    def memory_note(self) -> str:
        """How peak memory is measured on this backend."""
        return ("CuPy pool total plus torch's peak allocated bytes (weights outside the slab, "
                "results of nodes without out= before their copy)")

    def peak_used(self) -> int | None:
        """CuPy's pool (the slab, per-buffer arrays) plus torch's peak allocations."""
        return (self._cupy.get_default_memory_pool().total_bytes()
                + self.torch.cuda.max_memory_allocated(self.target))

    def free_bytes(self) -> int | None:
        """Free device memory in bytes (cudaMemGetInfo)."""
        return self._cupy.cuda.runtime.memGetInfo()[0]


@functools.cache
def torch_cuda_reason() -> str | None:
    """Why torch cannot run on a CUDA device here, or None when it can (probed once)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA device"
    return None
