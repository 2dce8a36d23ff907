"""Counts in words, as every message and panel writes them."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless `n` is one: "1 buffer", "2,048 buffers"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
