"""What a run measured, as plain data: phases, kernels, device, memory, verification, replay."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

PHASES = ("graph_compile", "search", "prepare", "execute")


@dataclass(frozen=True)
class PhaseTime:
    """One phase of a run: `seconds` measured around it, `share` of the phases' total."""

    name: str
    seconds: float
    share: float
    detail: str = ""


@dataclass(frozen=True)
class KernelTime:
    """One node's mean time per execute, and what that achieves against the device's peak;
    `samples` holds its time in each execute (empty in reports made before they were kept)."""

    node: str
    op: str
    seconds: float
    flops: int
    bytes: int
    flops_per_s: float
    bytes_per_s: float
    flops_share_of_peak: float | None
    bytes_share_of_peak: float | None
    samples: tuple[float, ...] = ()


@dataclass(frozen=True)
class Clobbered:
    """A buffer whose contents, when `read_by` read it, differed from the reference run's."""

    buffer: str
    read_by: str
    max_abs_diff: float


def tolerance_text(tolerances) -> str:
    """`float32 1e-04, int64 exact`: each dtype's relative tolerance, as the reports print it."""
    return ", ".join(f"{dtype} {'exact' if tol == 0 else f'{tol:.0e}'}"
                     for dtype, tol in tolerances)


@dataclass(frozen=True)
class ModelCheck:
    """The slab run's outputs against the model's own reference (torch eager, or the whole ONNX
    model in the reference evaluator) on the same inputs.

    `tolerances`: (dtype, relative tolerance) of the outputs compared: an output passes when
    its largest difference is at most tolerance x (1 + its largest magnitude); `differing`:
    the outputs that did not pass.
    """

    reference: str
    ok: bool
    max_abs_diff: float
    tolerances: tuple[tuple[str, float], ...]
    differing: tuple[str, ...]
    outputs: int
    seconds: float

    def summary(self) -> str:
        """One line: the reference, the verdict, and the tolerance per dtype."""
        verdict = "match" if self.ok else "DIFFER from"
        line = (f"{self.outputs} output(s) {verdict} {self.reference} (max abs diff "
                f"{self.max_abs_diff:.3g}; relative tolerance {tolerance_text(self.tolerances)})")
        return line + ("" if self.ok else "; differing: " + ", ".join(self.differing))


@dataclass(frozen=True)
class RunVerification:
    """Outputs against a run where every buffer has its own allocation.

    `differing`: read-back buffers beyond `tolerance`; `clobbered`: buffers overwritten before a
    reader read them (found in a checked pass that restores each to the reference's contents,
    so only the culprits are named); `unsafe_pairs`: buffers sharing bytes that the dag model
    says may be live together (why they got clobbered).
    """

    ok: bool
    max_abs_diff: float
    tolerance: float
    differing: tuple[str, ...]
    clobbered: tuple[Clobbered, ...]
    unsafe_pairs: tuple[tuple[str, str], ...]
    seconds: float
    tolerances: tuple[tuple[str, float], ...] = ()  # (dtype, relative tolerance) compared
    model: ModelCheck | None = None  # against the model's own reference, for real models

    def summary(self) -> str:
        """One line: passed, or which buffers differ and which were clobbered."""
        per_dtype = f"; relative {tolerance_text(self.tolerances)}" if self.tolerances else ""
        model = f"; {self.model.summary()}" if self.model is not None else ""
        if self.ok:
            return (f"outputs match the per-buffer reference (max abs diff "
                    f"{self.max_abs_diff:.3g}, tolerance {self.tolerance:.3g}{per_dtype})"
                    f"{model}")
        parts = [f"outputs differ from the per-buffer reference (max abs diff "
                 f"{self.max_abs_diff:.3g}{per_dtype})"] if self.differing or self.clobbered \
            else [f"outputs match the per-buffer reference (max abs diff "
                  f"{self.max_abs_diff:.3g})"]
        if self.differing:
            parts.append("differing: " + ", ".join(self.differing))
        if self.clobbered:
            parts.append("clobbered: " + ", ".join(
                f"{c.buffer} (read by {c.read_by}, off by {c.max_abs_diff:.3g})"
                for c in self.clobbered))
        if self.unsafe_pairs:
            parts.append("sharing bytes though unordered in the DAG: " + ", ".join(
                f"{a}/{b}" for a, b in self.unsafe_pairs))
        if self.model is not None:
            parts.append(self.model.summary())
        return "; ".join(parts)


@dataclass(frozen=True)
class Replay:
    """CUDA graph replay against eager launches: what was captured, and the time per execute."""

    available: bool
    reason: str
    captured: tuple[str, ...] = ()
    eager: tuple[str, ...] = ()
    eager_seconds: float | None = None
    replay_seconds: float | None = None


@dataclass(frozen=True)
class RunReport:
    """Everything one run measured; every figure comes from a clock or a device query."""

    graph: str
    backend: str
    device: str
    backend_note: str | None
    layout: str
    conflicts: str
    algorithm: str
    execute_order: tuple[str, ...]
    repeats: int
    phases: tuple[PhaseTime, ...]
    wall_seconds: float
    kernels: tuple[KernelTime, ...]
    kernel_clock: str
    peak_flops: float | None
    peak_bytes_per_s: float | None
    peak_precision: str
    peak_source: str
    slab_bytes: int
    no_reuse_bytes: int
    allocated_bytes: int
    peak_used_bytes: int | None
    peak_used_source: str
    verification: RunVerification | None
    replay: Replay
    execute_samples: tuple[float, ...] = ()  # wall seconds of each execute, in run order
    program: str = "built-in ops"  # what executed the nodes

    def phase(self, name: str) -> PhaseTime:
        """The phase called `name`."""
        return next(p for p in self.phases if p.name == name)

    @property
    def phases_seconds(self) -> float:
        """The phases' durations added up (compare with `wall_seconds`)."""
        return sum(p.seconds for p in self.phases)

    @property
    def execute_seconds(self) -> float:
        """Mean wall time of one execute."""
        return self.phase("execute").seconds / self.repeats

    @property
    def one_time_seconds(self) -> float:
        """graph_compile + search + prepare: paid once, however many executes follow."""
        return sum(p.seconds for p in self.phases if p.name != "execute")

    @property
    def amortised_seconds(self) -> float:
        """The one-time phases spread over the run's executes: their cost per execute."""
        return self.one_time_seconds / self.repeats

    def to_dict(self) -> dict:
        """The report as JSON-ready data, with the derived figures included; a NaN or infinite
        figure (a difference against a NaN output) becomes None, since JSON has no such number."""
        data = asdict(self)
        data.update(phases_seconds=self.phases_seconds, execute_seconds=self.execute_seconds,
                    one_time_seconds=self.one_time_seconds,
                    amortised_seconds=self.amortised_seconds)
        return _finite(data)


def _finite(value):
    """`value` with every NaN or infinite float, however deeply nested, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def spread(samples) -> tuple[float, float, float] | None:
    """(median, least, most) of `samples`; None when there are none."""
    if not samples:
        return None
    ordered = sorted(samples)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return median, ordered[0], ordered[-1]


def seconds_text(seconds: float) -> str:
    """A duration with a unit that keeps three significant digits: 412 µs, 3.10 ms, 1.20 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def rate_text(per_second: float, unit: str) -> str:
    """A rate with an SI prefix: 64.3 MFLOP/s, 4.52 GB/s."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if per_second >= scale:
            return f"{per_second / scale:.3g} {prefix}{unit}/s"
    return f"{per_second:.3g} {unit}/s"
