"""Comparing results: a relative tolerance per dtype, differences that see NaN and infinity,
and the check of a run's outputs against a model's own reference."""

from __future__ import annotations

import time

import numpy as np

from .report import ModelCheck

# Relative tolerance by element size of floating dtypes: the same kernels on differently aligned
# data (or another backend's kernels) may round differently; 8-bit floats keep 3 mantissa bits.
_FLOAT_TOLERANCE = {1: 0.125, 2: 1e-2}
_DEFAULT_FLOAT_TOLERANCE = 1e-4
_HALF_WIDTH = ("float16", "bfloat16", "complex32")


def tolerance_for(dtype) -> float:
    """Relative tolerance for comparing results of dtype `dtype` (a NumPy dtype or a dtype
    name such as "bfloat16"): integers and booleans compare exactly."""
    name = str(dtype)
    if name == "bool" or name.startswith(("int", "uint")):
        return 0.0
    if name.startswith("float8"):
        return _FLOAT_TOLERANCE[1]
    if name in _HALF_WIDTH:
        return _FLOAT_TOLERANCE[2]
    return _FLOAT_TOLERANCE.get(np.dtype(name).itemsize, _DEFAULT_FLOAT_TOLERANCE)


def max_abs_diff(actual: np.ndarray, expected: np.ndarray) -> float:
    """The largest absolute difference; infinite where one side is NaN or infinite and the
    other is not the same value (NaN - x is NaN, which no comparison with a tolerance catches)."""
    if actual.size == 0:
        return 0.0
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(a) & np.isfinite(e)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    if not np.all(finite | same):
        return float("inf")
    with np.errstate(invalid="ignore"):  # inf - inf where both sides agree; masked out below
        return float(np.max(np.abs(np.where(finite, a - e, 0.0))))


def limit_for(expected: np.ndarray, dtype=None) -> float:
    """The largest difference allowed against `expected`, whose dtype in the graph is `dtype`
    (default: its own; bfloat16 is staged as float32 but keeps bfloat16's tolerance)."""
    values = expected.astype(np.float64) if expected.dtype.kind in "biu" else expected
    finite = values[np.isfinite(values)]  # an infinite scale would excuse any difference
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return tolerance_for(expected.dtype if dtype is None else dtype) * (1.0 + scale)


def compare_outputs(produced: dict, expected: dict, dtypes: dict
                    ) -> tuple[float, list[str], tuple[tuple[str, float], ...]]:
    """(largest difference, names beyond their limit, (dtype, tolerance) of the dtypes seen)
    of `produced` against `expected` host arrays, by name; `dtypes` gives each one's dtype."""
    worst, differing, seen = 0.0, [], {}
    for name, want in expected.items():
        dtype = dtypes.get(name) or str(want.dtype)
        seen.setdefault(dtype, tolerance_for(dtype))
        have = produced[name]
        if have.shape != want.shape:
            worst = float("inf")
            differing.append(name)
            continue
        diff = output_diff(have, want)
        worst = max(worst, diff)
        if diff > limit_for(want, dtype):
            differing.append(name)
    return worst, differing, tuple(sorted(seen.items()))


def model_check(reference: str, produced: dict, expected: dict, dtypes: dict,
                started: float) -> ModelCheck:
    """A `ModelCheck` of `produced` against `expected` (outputs by name), timed from `started`."""
    worst, differing, tolerances = compare_outputs(produced, expected, dtypes)
    return ModelCheck(reference, not differing, worst, tolerances, tuple(differing),
                      len(expected), time.perf_counter() - started)


def output_diff(produced: np.ndarray, expected: np.ndarray) -> float:
    """`max_abs_diff` of a read-back output, infinite when either side holds any NaN or
    infinity: such a result cannot be checked, even where the reference shows the same."""
    if not (np.all(np.isfinite(produced)) and np.all(np.isfinite(expected))):
        return float("inf")
    return max_abs_diff(produced, expected)
