"""Counts and lists in words, as every message and panel writes them."""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless `n` is one: "1 buffer", "2,048 buffers"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def listed(items: Sequence[str]) -> str:
    """`items` (at least one) as a sentence lists them: "a", "a and b", "a, b and c"."""
    return items[-1] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
