"""Generated MiniMalloc traces at a chosen density: how many buffers are live at once on average.

idealloc's Y_1 (62,185 buffers) has 2,525 live on average over 92,494 steps; most buffers live
a few steps (median 4) and one in four lives long (up to most of the trace); its sizes take 62
values, a quarter of the buffers the same one. `dense_rows` draws traces of any size with that
shape: about 1.5 steps per buffer, three in four lifetimes of 1-8 steps and the rest log-normal
with the mean that gives the density asked for, sizes from a palette of 64 values (5 bytes to
1 GiB, the smaller more common), and rows mostly in start order (seven in ten, like Y_1's).
"""

from __future__ import annotations

import numpy as np

# idealloc Y_1: buffers live at once on average.
Y1_LIVE = 2_525

# Steps per buffer, the share of short-lived buffers, and the spread of long log lifetimes.
_STEPS_PER_ROW = 1.5
_SHORT = 0.75
_SIGMA = 1.2


def dense_arrays(rows: int, live: float = Y1_LIVE, seed: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower, upper, size) of `rows` buffers, `live` of them live at once on average; a
    buffer lives over [lower, upper)."""
    rng = np.random.default_rng(seed)
    steps = max(int(rows * _STEPS_PER_ROW), 2)
    short = rng.random(rows) < _SHORT
    # Long lifetimes carry the density (short ones add about 4.5 steps each); clipping to the
    # trace trims their mean a little, so ask a little more.
    mean = 1.1 * max(live * steps / max(rows, 1) - _SHORT * 4.5, 1.0) / (1 - _SHORT)
    mu = np.log(mean) - _SIGMA**2 / 2
    length = np.where(short, rng.integers(1, 9, rows), np.rint(rng.lognormal(mu, _SIGMA, rows)))
    length = np.clip(length, 1, steps - 1).astype(np.int64)
    lower = np.sort(rng.integers(0, steps - 1, rows))
    upper = np.minimum(lower + length, steps)
    palette = np.unique(np.rint(2.0 ** np.linspace(2.3, 30, 64))).astype(np.int64)
    weights = 1.0 / np.arange(1, len(palette) + 1)
    size = palette[rng.choice(len(palette), rows, p=weights / weights.sum())]
    swapped = np.flatnonzero(rng.random(rows) < 0.3)  # three rows in ten out of start order
    target = rng.permutation(swapped)
    for column in (lower, upper, size):
        column[swapped] = column[target]
    return lower, upper, size


def dense_rows(rows: int, live: float = Y1_LIVE, seed: int = 0) -> str:
    """A MiniMalloc CSV (`id,lower,upper,size`) from `dense_arrays`."""
    lower, upper, size = dense_arrays(rows, live, seed)
    lines = ["id,lower,upper,size"]
    lines += [f"{b},{lo},{hi},{s}" for b, (lo, hi, s) in
              enumerate(zip(lower.tolist(), upper.tolist(), size.tolist()))]
    return "\n".join(lines) + "\n"
