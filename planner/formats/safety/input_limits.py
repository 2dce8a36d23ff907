"""Limits every loader applies before it trusts a file: one place, so every format refuses alike.

A file must be a regular file (not a FIFO, a device or a folder) of bounded size; JSON may nest
only so deep, and its integers have a bounded number of digits; a shape has a bounded number of
dimensions; sizes and offsets fit the unsigned 64-bit range of every runtime modelled (Luminal's
usize, CUDA's size_t). Each violation is a one-line `PlanError` naming the file or the item.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import BinaryIO

from ...model.graph import SIZE_LIMIT
from ...support.errors import PlanError

# Graph files, CSV traces and sessions are text: a gigabyte is far past any real one.
TEXT_BYTES_LIMIT = 1 << 30
# protobuf cannot parse a message of 2 GiB or more, so an ONNX model is smaller than that.
ONNX_BYTES_LIMIT = (2 << 30) - 1
# Real graph files nest about five levels deep (top level, nodes, node, attrs, a list).
NESTING_LIMIT = 64
# 2**64 has 20 digits; anything much longer is not a size, an offset or a count.
INTEGER_DIGITS_LIMIT = 40
# NumPy's limit on array dimensions.
DIMENSIONS_LIMIT = 64


def quoted(text: str, limit: int = 60) -> str:
    """`repr` of `text`, cut to about `limit` characters, for error messages that stay one line."""
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(text):,} characters)"


def one_line(text: str) -> str:
    """`text` with every character that does not print (a newline, a lone surrogate) escaped as
    `repr` would, so a message naming anything stays one printable line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def open_regular(path, limit: int = TEXT_BYTES_LIMIT) -> BinaryIO:
    """The regular file at `path` opened for binary reading, once it is known not to be a FIFO,
    a device or a folder, and to hold at most `limit` bytes; nothing is read before that."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO that has no writer must not wait for one.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # an embedded NUL in the path
        raise PlanError(f"{quoted(str(path))}: not a valid path ({exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else \
                "a FIFO" if stat.S_ISFIFO(info.st_mode) else \
                "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else \
                "a socket or other special file"
            raise PlanError(f"{path}: cannot read: {kind}, not a regular file")
        if info.st_size > limit:
            raise PlanError(f"{path}: {info.st_size:,} bytes is over the {limit:,}-byte limit "
                            f"for this kind of file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, limit: int = TEXT_BYTES_LIMIT) -> bytes:
    """The contents of the regular file at `path` (see `open_regular`), at most `limit` bytes."""
    with open_regular(path, limit) as handle:
        try:
            data = handle.read(limit + 1)  # the file may have grown since it was checked
        except OSError as exc:
            raise PlanError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise PlanError(f"{path}: over the {limit:,}-byte limit for this kind of file")
    return data


def read_text(path, limit: int = TEXT_BYTES_LIMIT) -> str:
    """The regular file at `path` as UTF-8 text (a leading byte-order mark dropped)."""
    data = read_bytes(path, limit)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise PlanError(f"{path}: UTF-16 text (it starts with a UTF-16 byte-order mark); "
                        f"save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanError(f"{path}: not a UTF-8 text file (invalid byte at offset "
                        f"{exc.start:,})") from None


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > INTEGER_DIGITS_LIMIT:
        raise PlanError(f"an integer of {len(text.lstrip('-')):,} digits is over the "
                        f"{INTEGER_DIGITS_LIMIT}-digit limit")
    return int(text)


def _constant(text: str):
    raise PlanError(f"{text} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PlanError(f"number {quoted(text)} is out of range")
    return value


def _object(pairs: list) -> dict:
    """A JSON object; a key given twice is ambiguous (JSON keeps the last, silently)."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise PlanError(f"key {quoted(twice)} appears twice in one object")
    return data


def _deepest(data) -> int:
    """How deep lists and objects nest in `data` (a scalar is depth 0), level by level without
    recursion, stopping once past `NESTING_LIMIT`."""
    level = [data] if isinstance(data, (list, dict)) else []
    depth = 0
    while level and depth <= NESTING_LIMIT:
        depth += 1
        children: list = []
        for value in level:
            children.extend(value.values() if type(value) is dict else value)
        level = [c for c in children if type(c) is dict or type(c) is list]
    return depth


def parse_json(text: str, where: str):
    """Decode JSON `text` from `where` (a file name, for messages) within the limits: nesting
    depth, integer digits, finite numbers (no NaN or Infinity), no key twice in one object."""
    try:
        data = json.loads(text, parse_int=_integer, parse_float=_float,
                          parse_constant=_constant, object_pairs_hook=_object)
    except PlanError as exc:
        raise PlanError(f"{where}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"{where}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                        f"{exc.msg}") from None
    except RecursionError:
        raise PlanError(f"{where}: JSON nests deeper than the limit of {NESTING_LIMIT}") from None
    if _deepest(data) > NESTING_LIMIT:
        raise PlanError(f"{where}: JSON nests deeper than the limit of {NESTING_LIMIT}")
    return data


def read_json(path):
    """The JSON document in the regular file at `path`, read and decoded within the limits."""
    return parse_json(read_text(path), str(path))


def check_text(name: str, what: str) -> str:
    """`name` unless it cannot be written as UTF-8 (a lone surrogate from a JSON escape)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise PlanError(f"{what} {quoted(name)} is not valid Unicode text (a lone surrogate)") \
            from None
    return name


def check_u64(value: int, what: str) -> int:
    """`value` if it is an integer in the unsigned 64-bit range, else a PlanError naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlanError(f"{what} must be an integer, got {type(value).__name__}")
    if not 0 <= value <= SIZE_LIMIT:
        raise PlanError(f"{what} {value} is out of range [0, {SIZE_LIMIT}]")
    return value


def shape_elements(shape, what: str) -> int:
    """The element count of `shape`, checking the dimension count and that every dimension and
    every partial product stays in 64 bits (so a huge shape costs linear, not quadratic, time)."""
    if len(shape) > DIMENSIONS_LIMIT:
        raise PlanError(f"{what}: {len(shape):,} dimensions is over the limit of "
                        f"{DIMENSIONS_LIMIT}")
    if any(isinstance(d, bool) or not isinstance(d, int) for d in shape):
        raise PlanError(f"{what}: shape entries must be integers")
    if any(d < 0 for d in shape):
        raise PlanError(f"{what}: shape {list(shape)} has a negative dimension")
    if any(d > SIZE_LIMIT for d in shape):  # even beside a zero, which makes the product 0
        raise PlanError(f"{what}: a dimension exceeds {SIZE_LIMIT}")
    count = 1
    for d in shape:
        count *= d
        if count > SIZE_LIMIT:
            raise PlanError(f"{what}: shape's element count exceeds {SIZE_LIMIT}")
    return count


def check_slab(slab_bytes: int, what: str = "the plan") -> int:
    """`slab_bytes` if a slab that long has 64-bit offsets, else a PlanError."""
    if slab_bytes > SIZE_LIMIT:
        raise PlanError(f"{what} needs a slab of {slab_bytes:,} bytes, past the 64-bit offset "
                        f"limit {SIZE_LIMIT:,}")
    return slab_bytes
