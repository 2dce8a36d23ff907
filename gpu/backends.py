"""Array-module backends: CuPy on an NVIDIA device, NumPy over host memory; one interface.

Everything above this module is written once against `Backend`; only allocation, views, copies
to and from the host, synchronisation, kernel clocks and the allocation guard differ.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import dataclass

import numpy as np

from slabscope.planner import PlanError

BACKEND_NAMES = ("auto", "cupy", "numpy", "torch", "torch-cuda", "onnxruntime")

# Dtypes the runner can compute in; the planner knows more (bfloat16, float8) than NumPy does.
COMPUTE_DTYPES = ("float64", "float32", "float16")

# FP32 lanes per streaming multiprocessor, by compute capability major.minor (CUDA C guide,
# "Arithmetic Instructions" table); a device not listed has no stated peak.
_FP32_LANES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128,
    (8, 9): 128, (9, 0): 128, (10, 0): 128, (12, 0): 128,
}


class SlabAllocationError(RuntimeError):
    """Something asked for device memory while the plan's slab was meant to be the only memory."""


@dataclass(frozen=True)
class DevicePeak:
    """A device's theoretical peak, derived from its reported properties (None where unknown)."""

    flops: float | None
    bytes_per_s: float | None
    precision: str
    source: str


class KernelClock:
    """Per-node timings of one execute: `start(i)` / `stop(i)` around node i, `seconds()` after."""

    def __init__(self, count: int):
        self.begun = [0.0] * count
        self.ended = [0.0] * count

    def start(self, i: int) -> None:
        """Mark the start of node `i`."""
        self.begun[i] = time.perf_counter()

    def stop(self, i: int) -> None:
        """Mark the end of node `i`."""
        self.ended[i] = time.perf_counter()

    def seconds(self) -> list[float]:
        """Each node's duration in seconds (call after the backend synchronised)."""
        return [e - b for b, e in zip(self.begun, self.ended)]


class HostExecution:
    """What every backend running on the host shares: nothing queued, wall-clock kernel timing,
    allocations that cannot be refused, and no stated peak or free device memory."""

    refuses_allocations = False
    clock_name = "time.perf_counter around each kernel"

    def synchronize(self) -> None:
        """Wait for queued work (nothing is queued on the host)."""

    def clock(self, count: int) -> KernelClock:
        """A clock for `count` kernels."""
        return KernelClock(count)

    def no_allocations(self):
        """On the host, allocations cannot be refused; the guard is a no-op here."""
        return contextlib.nullcontext()

    def peak(self) -> DevicePeak:
        """The host's peak is not known from its properties: say so rather than guess."""
        return DevicePeak(None, None, "fp32", "no stated peak for a CPU host")

    def free_bytes(self) -> int | None:
        """Free device memory, where the backend can tell."""
        return None


class NumpyBackend(HostExecution):
    """Host execution: the slab is one uint8 NumPy buffer, views are `np.ndarray` over it."""

    name = "numpy"
    xp = np
    replay_unavailable = "CUDA graph replay needs CuPy and a device; unavailable on numpy"

    def __init__(self, fallback_reason: str | None = None):
        self.fallback_reason = fallback_reason
        self.device = _host_name()

    def allocate(self, nbytes: int):
        """One uint8 buffer of `nbytes` (at least one byte, so views of empty buffers are valid)."""
        try:
            return np.empty(max(nbytes, 1), dtype=np.uint8)
        except MemoryError:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes of host memory") \
                from None

    def view(self, slab, offset: int, shape, dtype: str):
        """An array of `shape` and `dtype` over `slab`'s bytes from `offset` (no copy)."""
        return np.ndarray(shape, dtype=np.dtype(dtype), buffer=slab, offset=offset)

    def upload(self, view, host) -> None:
        """Copy host array `host` into `view`."""
        np.copyto(view, host)

    def readback(self, view, host) -> None:
        """Copy `view` into host array `host`."""
        np.copyto(host, view)

    def to_host(self, array) -> np.ndarray:
        """A host copy of `array`."""
        return np.array(array, copy=True)

    def memory_note(self) -> str:
        """How peak memory is measured on this backend."""
        return "tracemalloc high-water over prepare and one execute"



class OnnxRuntimeBackend(NumpyBackend):
    """Host memory as on NumPy; an ONNX model's nodes run in onnxruntime, reading and writing
    the slab's views through I/O bindings (no copies)."""

    name = "onnxruntime"
    replay_unavailable = "CUDA graph replay needs CuPy and a device; unavailable on onnxruntime"

    def __init__(self, onnxruntime, fallback_reason: str | None = None):
        super().__init__(fallback_reason)
        self.onnxruntime = onnxruntime
        self.device = f"onnxruntime {onnxruntime.__version__} on {_host_name()}"

    def memory_note(self) -> str:
        """How peak memory is measured on this backend."""
        return "onnxruntime's allocator is outside tracemalloc's view"


class _EventClock(KernelClock):
    """Per-node timings from CUDA events recorded on the stream (created once, in prepare)."""

    def __init__(self, cupy, count: int):
        self._cupy = cupy
        self.begun = [cupy.cuda.Event() for _ in range(count)]
        self.ended = [cupy.cuda.Event() for _ in range(count)]

    def start(self, i: int) -> None:
        self.begun[i].record()

    def stop(self, i: int) -> None:
        self.ended[i].record()

    def seconds(self) -> list[float]:
        elapsed = self._cupy.cuda.get_elapsed_time
        return [elapsed(b, e) / 1e3 for b, e in zip(self.begun, self.ended)]


class CupyBackend:
    """Device execution: the slab is one `cupy.cuda.alloc`, views are `cupy.ndarray` over it."""

    name = "cupy"
    refuses_allocations = True
    clock_name = "CUDA events around each kernel"
    replay_unavailable = None

    def __init__(self, cupy):
        self.xp = cupy
        self._cupy = cupy
        self.fallback_reason = None
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        self.properties = props
        name = props.get("name", b"CUDA device")
        self.device = name.decode() if isinstance(name, bytes) else str(name)

    def allocate(self, nbytes: int):
        """One device allocation of `nbytes` as a uint8 array; OOM names the slab and free memory."""
        cupy = self._cupy
        free = self.free_bytes()
        if free is not None and nbytes > free:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes, the device has "
                            f"{free:,} free")
        try:
            memory = cupy.cuda.alloc(max(nbytes, 1))
        except cupy.cuda.memory.OutOfMemoryError:
            raise PlanError(f"out of memory: the slab needs {nbytes:,} bytes, the device has "
                            f"{self.free_bytes():,} free") from None
        return cupy.ndarray((max(nbytes, 1),), dtype=cupy.uint8, memptr=memory)

    def view(self, slab, offset: int, shape, dtype: str):
        """A `cupy.ndarray` of `shape` and `dtype` at `offset` into the slab (no copy)."""
        return self._cupy.ndarray(tuple(shape), dtype=dtype, memptr=slab.data + offset)

    def upload(self, view, host) -> None:
        """Copy host array `host` into `view` on the current stream."""
        view.set(host)

    def readback(self, view, host) -> None:
        """Copy `view` into host array `host` (waits for the copy)."""
        view.get(out=host)

    def to_host(self, array) -> np.ndarray:
        """A host copy of `array`."""
        return self._cupy.asnumpy(array)

    def synchronize(self) -> None:
        """Wait for all queued work on the device."""
        self._cupy.cuda.get_current_stream().synchronize()

    def clock(self, count: int) -> KernelClock:
        """CUDA-event clock for `count` kernels."""
        return _EventClock(self._cupy, count)

    def no_allocations(self):
        """Make every CuPy allocation raise, so execute proves it lives inside the slab."""
        def refuse(size):
            raise SlabAllocationError(f"execute tried to allocate {size:,} bytes outside the slab")
        return self._cupy.cuda.using_allocator(refuse)

    def peak(self) -> DevicePeak:
        """FP32 (non-TF32) FLOP/s and DRAM bytes/s from the device's reported clocks and widths."""
        p = self.properties
        lanes = _FP32_LANES_PER_SM.get((p.get("major"), p.get("minor")))
        sms, clock_khz = p.get("multiProcessorCount"), p.get("clockRate")
        flops = 2.0 * lanes * sms * clock_khz * 1e3 if lanes and sms and clock_khz else None
        mem_khz, bus_bits = p.get("memoryClockRate"), p.get("memoryBusWidth")
        bandwidth = 2.0 * mem_khz * 1e3 * bus_bits / 8 if mem_khz and bus_bits else None
        capability = f"compute capability {p.get('major')}.{p.get('minor')}"
        parts = [f"2 x {lanes} FP32 lanes x {sms} SMs x {clock_khz / 1e6:.3g} GHz" if flops
                 else f"no FLOP peak ({capability} not tabulated or no clock rate reported)",
                 f"2 x {mem_khz / 1e6:.3g} GHz memory clock x {bus_bits}-bit bus" if bandwidth
                 else "no bandwidth peak (memory clock or bus width not reported)"]
        source = "getDeviceProperties: " + "; ".join(parts)
        return DevicePeak(flops, bandwidth, "fp32 non-TF32 (CuPy does not enable TF32 by default)",
                          source)

    def memory_note(self) -> str:
        """How peak memory is measured on this backend."""
        return "CuPy memory pool total after execute"

    def free_bytes(self) -> int | None:
        """Free device memory in bytes (cudaMemGetInfo)."""
        return self._cupy.cuda.runtime.memGetInfo()[0]


@functools.cache
def _host_name() -> str:
    """The CPU's model name from /proc/cpuinfo (no subprocess), with its core count."""
    import platform

    model = platform.machine() or "CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


@functools.cache
def _cupy_with_device():
    """CuPy, once a device answers; otherwise the one-line reason it cannot be used (probed once
    per process: a device does not come and go during a session)."""
    # CUB-accelerated reductions allocate temporary storage; CuPy's own kernels write into out=.
    os.environ.setdefault("CUPY_ACCELERATORS", "")
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed (pip install .[gpu])"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device: CuPy raises its CUDARuntimeError
        return None, f"no CUDA device answers ({str(exc).splitlines()[0]})"
    if count < 1:
        return None, "no CUDA device answers (device count 0)"
    return cupy, None


def memory_pool_bytes(backend) -> int | None:
    """Bytes CuPy's default pool holds, or what the backend measures itself (None on NumPy)."""
    if backend.name == "cupy":
        return backend.xp.get_default_memory_pool().total_bytes()
    measured = getattr(backend, "peak_used", None)
    return measured() if measured is not None else None
