"""A pickle reader for plain data only, bounded by the bytes it reads rather than what they claim.

It reads the opcodes of pickle protocols 0 to 5 that build dicts, lists, tuples, strings,
bytes, integers, floats, booleans and None, and refuses every other: class and function
references, object construction, persistent IDs, sets and out-of-band buffers. Nothing in the
file is executed, and every limit is its own, not the stock unpickler's:

- Elements: the result is measured once it is built, children before parents and without
  recursion. Each container counts itself and each item's elements, so a part shared through
  the memo (or `DUP`) counts once for every reference to it: the expanded size a walk of the
  data would see. More than `ELEMENTS_BASE + ELEMENTS_PER_BYTE * file bytes` is refused, so a
  memo "billion laughs" of a few hundred bytes costs its size, not its expansion.
- Nesting: containers may nest `NESTING_LIMIT` deep. Tuples are checked as they are made,
  before one can be hashed as a dict key (hashing recurses in C); a container holding itself
  is refused.
- Integers: at most `INTEGER_DIGITS_LIMIT` decimal digits.
- Claimed lengths: a string, bytes or frame longer than the rest of the file is refused before
  anything is allocated. The memo is a list that grows one entry per store: an index past its
  end (a 9-byte pickle storing at index 500,000,000) is refused, never allocated.

Every failure is a one-line `PlanError` naming the limit or the opcode and its byte offset.

Speed: where numba compiles (and caches, or the file is large), `pickle_prescan` first proves
the file plain data within these limits in one compiled pass over its bytes (memory-mapped, not
read into Python), and the stock C unpickler, refusing every class, then builds it, several
times faster than the opcode loop here. Whatever the pass cannot prove (every error, and rare
odd but valid pickles) is read by the loop here, which gives the exact result or message.
The pass and the build read the file twice: a file rewritten between them by another process
is not guarded against.
"""

from __future__ import annotations

import codecs
import gc
import io
import mmap
import pickle
import struct
from itertools import chain, compress, repeat
from operator import and_, is_, rshift
from typing import BinaryIO

from ...support._numba import COMPILED, numba_can_cache
from ...support.errors import PlanError
from .input_limits import INTEGER_DIGITS_LIMIT, NESTING_LIMIT
from .pickle_prescan import proves_plain

# A real snapshot expands to about two elements per byte (frames shared through the memo); a
# pickle that repeats shared parts far more than that is a bomb, not a snapshot.
ELEMENTS_PER_BYTE = 64
ELEMENTS_BASE = 1 << 20
# The longest fixed-size opcode argument (a BINFLOAT, a FRAME's length) is 8 bytes.
LOOKAHEAD = 9
# Bytes read from the file at a time: snapshots reach gigabytes and are never held whole.
CHUNK_BYTES = 1 << 20
# Where numba can keep no cache, the pre-scan compiles in each process (about 17 s on 2 busy
# cores): worth it only for files the opcode loop (about 27 MB/s) takes longer over.
UNCACHED_SCAN_BYTES = 512 << 20
_SCAN_CACHED = COMPILED and numba_can_cache()
# Protocol 0 puts values on lines; no value of plain data needs a longer one.
LINE_LIMIT = 1 << 20
# The largest integer of `INTEGER_DIGITS_LIMIT` digits fits in this many signed bytes.
INTEGER_BYTES_LIMIT = (INTEGER_DIGITS_LIMIT * 3322 // 1000 + 8) // 8 + 1
INTEGER_BOUND = 10 ** INTEGER_DIGITS_LIMIT

_CONTAINERS = frozenset({list, dict, tuple})
_DEPTH_BITS = NESTING_LIMIT.bit_length() + 1  # a depth up to NESTING_LIMIT + 1 fits
_DEPTH_MASK = (1 << _DEPTH_BITS) - 1
_UNPACK_I = struct.Struct("<i").unpack_from
_UNPACK_U32 = struct.Struct("<I").unpack_from
_UNPACK_D = struct.Struct(">d").unpack_from

# Opcodes that build objects from classes or callables, by name for the error message.
_OBJECT_OPCODES = {
    ord("R"): "REDUCE", ord("b"): "BUILD", ord("o"): "OBJ", 0x81: "NEWOBJ", 0x92: "NEWOBJ_EX",
    0x82: "EXT1", 0x83: "EXT2", 0x84: "EXT4", ord("P"): "PERSID", ord("Q"): "BINPERSID",
}
_UNSUPPORTED_OPCODES = {0x8f: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET",
                        0x96: "BYTEARRAY8", 0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER"}


class _Truncated(Exception):
    """The file ended inside the pickle."""


def load_plain_data(handle: BinaryIO, file_bytes: int):
    """The object pickled in `handle` (a binary stream of `file_bytes` bytes), built only from
    dicts, lists, tuples, strings, bytes, integers, floats, booleans and None, within the
    module's limits. Every failure is a one-line `PlanError` (without the file's name)."""
    start = handle.tell()
    worth_compiling = _SCAN_CACHED or file_bytes - start >= UNCACHED_SCAN_BYTES
    if COMPILED and file_bytes > start and worth_compiling:
        built = _load_proven(handle, start, file_bytes)
        if built is not _UNPROVEN:
            return built
        handle.seek(start)
    reader = _Reader(handle, file_bytes)
    try:
        return reader.run()
    except _Truncated:
        raise PlanError("truncated snapshot: the file ends before the pickle does") from None
    except PlanError:
        raise
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError,
            struct.error) as exc:
        if isinstance(exc, (IndexError, struct.error)) and reader.at_end():
            raise PlanError("truncated snapshot: the file ends before the pickle does") from None
        raise PlanError(f"not a memory snapshot: not a readable pickle ({type(exc).__name__} "
                        f"near byte {reader.offset():,}: {str(exc)[:100]})") from None


_UNPROVEN = object()  # what `_load_proven` returns when the reader must decide


class _ClassRefusing(pickle.Unpickler):
    """The stock C unpickler, refusing every class (the pre-scan already refused their opcodes)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it contains objects ({module}.{name})")


def _load_proven(handle: BinaryIO, start: int, file_bytes: int):
    """The object pickled in `handle` from `start`, built by the stock unpickler once
    `pickle_prescan` proves it within the limits; else `_UNPROVEN`."""
    limit = ELEMENTS_BASE + ELEMENTS_PER_BYTE * file_bytes
    try:
        fileno = handle.fileno()
    except (AttributeError, OSError, ValueError):  # not a file: a BytesIO, say
        fileno = None
    if fileno is None:
        data = handle.read(file_bytes - start)
        if not proves_plain(data, limit):
            return _UNPROVEN
        source = io.BytesIO(data)
    else:
        try:
            mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # emptied since it was measured, say: the reader decides
            return _UNPROVEN
        view = memoryview(mapped)
        part = view[start:file_bytes]
        try:
            proven = proves_plain(part, limit)
        finally:
            _release(part, view, mapped)
        if not proven:
            return _UNPROVEN
        handle.seek(start)
        source = handle
    try:
        return _ClassRefusing(source).load()
    except Exception:  # noqa: BLE001 - any refusal by the C unpickler: the reader decides
        return _UNPROVEN


def _release(*buffers) -> None:
    """Release memoryviews and close an mmap, in order. numba's first compilation of the scan
    can keep the array it was given alive in a reference cycle, which holds an export of the
    mapping: collect it and retry once; failing that, the mapping closes when it is collected."""
    for buffer in buffers:
        close = buffer.close if isinstance(buffer, mmap.mmap) else buffer.release
        try:
            close()
        except BufferError:
            gc.collect()
            try:
                close()
            except BufferError:
                pass


class _Reader:
    """The state of one read: the buffered bytes, the stack, the memo and the counts."""

    def __init__(self, handle: BinaryIO, file_bytes: int):
        self.handle = handle
        self.file_bytes = file_bytes
        self.element_limit = ELEMENTS_BASE + ELEMENTS_PER_BYTE * file_bytes
        self.buf = b""
        self.pos = 0

    def offset(self) -> int:
        """The file offset of the byte at `pos` (for messages)."""
        try:
            return self.handle.tell() - len(self.buf) + self.pos
        except (OSError, ValueError):
            return self.pos

    def fill(self, buf: bytes, pos: int, need: int) -> bytes:
        """`buf[pos:]` extended from the file to at least `need` bytes (`pos` becomes 0)."""
        rest = buf[pos:]
        want = need - len(rest)
        left = self.file_bytes - self.handle.tell()
        if want > left:
            # The file cannot hold what the opcode claims: refuse before reading it.
            raise _Truncated
        chunk = self.handle.read(max(want, min(CHUNK_BYTES, left)))
        buf = rest + chunk if rest else chunk
        if len(buf) < need:
            raise _Truncated
        self.buf, self.pos = buf, 0
        return buf

    def put(self, memo: list, index: int, value, pos: int) -> None:
        """Store `value` at memo `index`: the next one, or one already stored."""
        if index == len(memo):
            memo.append(value)
        elif 0 <= index < len(memo):
            memo[index] = value
        else:
            self.pos = pos
            raise self.fail(f"memo index {index:,} skips past the {len(memo):,} entries "
                            f"stored (a pickle writer stores at the next one)")

    def top_up(self, buf: bytes, pos: int) -> bytes:
        """`buf[pos:]` extended from the file to `LOOKAHEAD` bytes or more, or to the end of
        the file (`pos` becomes 0): near the end, an argument cut short raises IndexError or
        struct.error, reported as truncation."""
        left = self.file_bytes - self.handle.tell()
        rest = buf[pos:]
        buf = rest + self.handle.read(min(CHUNK_BYTES, left)) if left > 0 else rest
        self.buf, self.pos = buf, 0
        return buf

    def at_end(self) -> bool:
        """Whether the bytes left to read are fewer than an opcode and its argument."""
        try:
            return self.file_bytes - self.offset() < LOOKAHEAD + 1
        except (OSError, ValueError):
            return False

    def fail(self, message: str) -> PlanError:
        return PlanError(f"not a memory snapshot: {message} (at byte {self.offset():,})")

    def run(self):  # noqa: C901 - one loop over opcodes, kept flat for speed
        """Execute the opcodes up to STOP and return the object on top of the stack."""
        stack: list = []
        marks: list[int] = []
        # The memo, in order: a pickle writer stores at the next index (or over an old one),
        # so an index past the end is refused, and the memo never outgrows the file.
        memo: list = []
        remember = memo.append
        fill = self.fill
        push = stack.append
        # Lists and dicts in the order they were made: measured in reverse, most containers'
        # items are measured before them (a pickle fills a container after making it).
        made: list = []
        keep = made.append
        # Nesting depth of each tuple with tuples inside: hashing one (as a dict key) recurses
        # in C, so a deep one must be refused before it is hashed, not after.
        tuple_depth: dict[int, int] = {}
        unpack_u32 = _UNPACK_U32
        buf, pos, end = self.buf, 0, 0

        while True:
            if pos + LOOKAHEAD > end:  # then an opcode's fixed-size argument needs no check
                buf = self.top_up(buf, pos)
                pos, end = 0, len(buf)
                if not end:
                    raise _Truncated
            op = buf[pos]
            pos += 1
            if op == 0x68:  # BINGET
                obj = memo[buf[pos]]
                pos += 1
                push(obj)
            elif op == 0x6a:  # LONG_BINGET
                obj = memo[unpack_u32(buf, pos)[0]]
                pos += 4
                push(obj)
            elif op == 0x94:  # MEMOIZE
                remember(stack[-1])
            elif op == 0x8c:  # SHORT_BINUNICODE
                n = buf[pos]
                if pos + 1 + n > end:
                    buf = fill(buf, pos, 1 + n)
                    pos, end = 0, len(buf)
                push(str(buf[pos + 1:pos + 1 + n], "utf-8", "surrogatepass"))
                pos += 1 + n
            elif op == 0x28:  # MARK
                marks.append(len(stack))
            elif op == 0x75:  # SETITEMS
                mark = marks.pop()
                items = stack[mark:]
                del stack[mark:]
                target = stack[-1]
                if type(target) is not dict:
                    self.pos = pos
                    raise self.changed(target)
                if len(items) % 2:
                    raise IndexError("SETITEMS with a key and no value")
                target.update(zip(items[::2], items[1::2]))
            elif op == 0x7d:  # EMPTY_DICT
                obj = {}
                keep(obj)
                push(obj)
            elif op == 0x5d:  # EMPTY_LIST
                obj = []
                keep(obj)
                push(obj)
            elif op == 0x65:  # APPENDS
                mark = marks.pop()
                items = stack[mark:]
                del stack[mark:]
                target = stack[-1]
                if type(target) is not list:
                    self.pos = pos
                    raise self.changed(target)
                target.extend(items)
            elif op == 0x4b:  # BININT1
                push(buf[pos])
                pos += 1
            elif op == 0x4a:  # BININT
                push(_UNPACK_I(buf, pos)[0])
                pos += 4
            elif op == 0x8a:  # LONG1
                n = buf[pos]
                if pos + 1 + n > end:
                    buf = fill(buf, pos, 1 + n)
                    pos, end = 0, len(buf)
                self.pos = pos
                push(self.long(buf[pos + 1:pos + 1 + n]))
                pos += 1 + n
            elif op == 0x4d:  # BININT2
                push(buf[pos] | buf[pos + 1] << 8)
                pos += 2
            elif op == 0x71:  # BINPUT
                self.put(memo, buf[pos], stack[-1], pos)
                pos += 1
            elif op == 0x72:  # LONG_BINPUT
                self.put(memo, unpack_u32(buf, pos)[0], stack[-1], pos)
                pos += 4
            elif op == 0x61:  # APPEND
                item = stack.pop()
                target = stack[-1]
                if type(target) is not list:
                    self.pos = pos
                    raise self.changed(target)
                target.append(item)
            elif op == 0x73:  # SETITEM
                value = stack.pop()
                key = stack.pop()
                target = stack[-1]
                if type(target) is not dict:
                    self.pos = pos
                    raise self.changed(target)
                target[key] = value
            elif op in (0x85, 0x86, 0x87, 0x74, 0x29):  # TUPLE1, TUPLE2, TUPLE3, TUPLE, EMPTY_TUPLE
                if op == 0x74:
                    mark = marks.pop()
                else:
                    mark = len(stack) - (op - 0x84 if op != 0x29 else 0)
                    if mark < 0:
                        raise IndexError("stack underflow")
                items = stack[mark:]
                del stack[mark:]
                obj = tuple(items)
                depth = 1 + max([tuple_depth.get(id(x), 1) for x in items if type(x) is tuple],
                                default=0)
                if depth > 1:
                    if depth > NESTING_LIMIT:
                        self.pos = pos
                        raise self.fail(f"containers nest deeper than the limit of "
                                        f"{NESTING_LIMIT}")
                    tuple_depth[id(obj)] = depth
                elif tuple_depth:  # a tuple freed by POP may have left its id behind
                    tuple_depth.pop(id(obj), None)
                push(obj)
            elif op == 0x89:  # NEWFALSE
                push(False)
            elif op == 0x88:  # NEWTRUE
                push(True)
            elif op == 0x4e:  # NONE
                push(None)
            elif op in (0x58, 0x8d, 0x42, 0x43, 0x8e, 0x54, 0x55):
                # BINUNICODE, BINUNICODE8, BINBYTES, SHORT_BINBYTES, BINBYTES8, BINSTRING,
                # SHORT_BINSTRING: a length, then that many bytes.
                width = {0x58: 4, 0x8d: 8, 0x42: 4, 0x43: 1, 0x8e: 8, 0x54: 4, 0x55: 1}[op]
                n = int.from_bytes(buf[pos:pos + width], "little", signed=op == 0x54)
                if n < 0:
                    raise ValueError("negative length")
                pos += width
                if pos + n > end:
                    self.pos = pos
                    buf = fill(buf, pos, n)
                    pos, end = 0, len(buf)
                raw = buf[pos:pos + n]
                pos += n
                if op in (0x58, 0x8d):
                    push(str(raw, "utf-8", "surrogatepass"))
                elif op in (0x54, 0x55):
                    push(raw.decode("ascii"))  # Python 2 strings, as the stock unpickler reads
                else:
                    push(raw)
            elif op == 0x47:  # BINFLOAT
                push(_UNPACK_D(buf, pos)[0])
                pos += 8
            elif op == 0x8b:  # LONG4
                n = _UNPACK_I(buf, pos)[0]
                if n < 0:
                    raise ValueError("negative length")
                self.pos = pos
                if n > INTEGER_BYTES_LIMIT:
                    raise self.fail(f"an integer of {n:,} bytes is over the "
                                    f"{INTEGER_DIGITS_LIMIT}-digit limit")
                pos += 4
                if pos + n > end:
                    buf = fill(buf, pos, n)
                    pos, end = 0, len(buf)
                push(self.long(buf[pos:pos + n]))
                pos += n
            elif op == 0x32:  # DUP
                obj = stack[-1]
                push(obj)
            elif op == 0x30:  # POP
                if marks and marks[-1] == len(stack):
                    marks.pop()  # POP of a bare MARK, as the stock unpickler allows
                else:
                    stack.pop()
            elif op == 0x31:  # POP_MARK
                del stack[marks.pop():]
            elif op == 0x2e:  # STOP
                if not stack:
                    raise IndexError("STOP with an empty stack")
                self.pos = pos
                self.measure(stack[-1], made)
                return stack[-1]
            elif op == 0x95:  # FRAME: a length for framing; the bytes follow as opcodes
                pos += 8
            elif op == 0x80:  # PROTO
                if buf[pos] > 5:
                    self.pos = pos
                    raise self.fail(f"pickle protocol {buf[pos]} is newer than 5")
                pos += 1
            elif op in (0x6c, 0x64):  # LIST, DICT (protocol 0): from the items to a mark
                mark = marks.pop()
                items = stack[mark:]
                del stack[mark:]
                if op == 0x64 and len(items) % 2:
                    raise IndexError("DICT with a key and no value")
                push(items if op == 0x6c else dict(zip(items[::2], items[1::2])))
            elif op in (0x49, 0x4c, 0x46, 0x53, 0x56, 0x67, 0x70, 0x63, 0x69):
                # Protocol 0: INT, LONG, FLOAT, STRING, UNICODE, GET, PUT, GLOBAL, INST.
                self.pos = pos
                line = self.line()
                buf, pos, end = self.buf, self.pos, len(self.buf)
                if op in (0x63, 0x69):  # GLOBAL, INST: module and name on two lines
                    name = self.line()
                    raise self.fail(f"it contains objects ({_text(line)}.{_text(name)})")
                if op == 0x67:
                    index = int(line)
                    if index < 0:
                        raise IndexError(f"memo index {index}")
                    obj = memo[index]
                    push(obj)
                elif op == 0x70:
                    self.put(memo, int(line), stack[-1], pos)
                else:
                    push(self.text_value(op, line))
            elif op == 0x93:  # STACK_GLOBAL
                name, module = stack.pop(), stack.pop()
                self.pos = pos
                if isinstance(module, str) and isinstance(name, str):
                    raise self.fail(f"it contains objects ({module[:100]}.{name[:100]})")
                raise self.fail("it contains objects (a class reference)")
            elif op in _OBJECT_OPCODES:
                self.pos = pos - 1
                raise self.fail(f"it contains objects (opcode {_OBJECT_OPCODES[op]})")
            elif op in _UNSUPPORTED_OPCODES:
                self.pos = pos - 1
                raise self.fail(f"opcode {_UNSUPPORTED_OPCODES[op]} builds something a "
                                f"snapshot never holds")
            else:
                self.pos = pos - 1
                raise self.fail(f"not a readable pickle (invalid opcode {op:#04x})")

    def changed(self, target) -> PlanError:
        """The error for an APPEND or SETITEM onto `target`, which is not a list or dict."""
        return self.fail(f"items are added to a {type(target).__name__}")

    def measure(self, root, made: list) -> None:
        """Refuse `root` if it expands to more elements, or nests deeper, than the limits, or
        holds itself; `made` lists the lists and dicts the pickle made, in order.

        Each container is measured once, children before parents (an explicit stack holds
        those whose items are not measured yet): its elements (itself, and each item's
        elements, so every repeat of a shared part counts) and its depth. A memo "billion
        laughs" costs its size in the file, not its expansion."""
        # By id, for measured containers (all kept alive): elements << DEPTH_BITS | depth, one
        # dict rather than two, as a snapshot has millions of containers.
        measured: dict[int, int] = {}
        started: set[int] = set()  # containers whose measuring began
        for start in chain(reversed(made), (root,)):
            if type(start) in _CONTAINERS and id(start) not in measured:
                self._measure_from(start, measured, started)

    def _measure_from(self, start, measured: dict, started: set) -> None:
        """Measure `start` and every container below it not measured yet (see `measure`)."""
        limit, measure_of = self.element_limit, measured.get
        is_container = _CONTAINERS.__contains__
        todo = [start]
        while todo:
            node = todo[-1]
            key = id(node)
            if key in measured:
                todo.pop()
                continue
            items = [*node, *node.values()] if type(node) is dict else node
            # Built-in maps keep these passes at C speed: a snapshot has millions of items.
            children = [*compress(items, map(is_container, map(type, items)))]
            if not children:  # most dicts of a snapshot: a frame, say
                todo.pop()
                measured[key] = (1 + len(items)) << _DEPTH_BITS | 1
                continue
            ids = [*map(id, children)]
            known = [*map(measure_of, ids)]
            if None in known:  # children not measured yet: measure them first
                pending = [*compress(children, map(is_, known, repeat(None)))]
                if not started.isdisjoint(map(id, pending)):  # begun, and not finished
                    raise self.fail("a container holds itself (a cycle)")
                started.add(key)
                todo.extend(pending)
                continue
            todo.pop()
            total = 1 + len(items) - len(children) + sum(map(rshift, known, repeat(_DEPTH_BITS)))
            depth = 1 + max(map(and_, known, repeat(_DEPTH_MASK)))
            if depth > NESTING_LIMIT:
                raise self.fail(f"containers nest deeper than the limit of {NESTING_LIMIT}")
            if total > limit:
                raise self.fail(f"it expands to more than {limit:,} elements, the limit for a "
                                f"file of {self.file_bytes:,} bytes (memo references count "
                                f"every element they repeat)")
            measured[key] = total << _DEPTH_BITS | depth

    def long(self, raw: bytes) -> int:
        """A little-endian two's-complement integer within the digit limit."""
        if len(raw) > INTEGER_BYTES_LIMIT:
            raise self.fail(f"an integer of {len(raw):,} bytes is over the "
                            f"{INTEGER_DIGITS_LIMIT}-digit limit")
        value = int.from_bytes(raw, "little", signed=True)
        if not -INTEGER_BOUND < value < INTEGER_BOUND:
            raise self.fail(f"an integer of over {INTEGER_DIGITS_LIMIT} digits")
        return value

    def line(self) -> bytes:
        """The bytes up to the next newline (protocol 0), which is consumed."""
        buf, pos = self.buf, self.pos
        newline = buf.find(b"\n", pos)
        while newline < 0:
            if len(buf) - pos > LINE_LIMIT:
                raise self.fail(f"a protocol 0 line is longer than {LINE_LIMIT:,} bytes")
            buf, pos = self.fill(buf, pos, len(buf) - pos + 1), 0
            newline = buf.find(b"\n", pos)
        self.buf, self.pos = buf, newline + 1
        return buf[pos:newline]

    def text_value(self, op: int, line: bytes):
        """The value of a protocol 0 INT, LONG, FLOAT, STRING or UNICODE line."""
        if op in (0x49, 0x4c):
            digits = line.rstrip(b"L").lstrip(b"-")
            if len(digits) > INTEGER_DIGITS_LIMIT:
                raise self.fail(f"an integer of {len(digits):,} digits is over the "
                                f"{INTEGER_DIGITS_LIMIT}-digit limit")
            if op == 0x49 and line in (b"00", b"01"):
                return line == b"01"
            return int(line.rstrip(b"L"))
        if op == 0x46:
            return float(line)
        if op == 0x53:
            if len(line) < 2 or line[0] != line[-1] or line[:1] not in (b"'", b'"'):
                raise ValueError("the STRING opcode argument must be quoted")
            return codecs.escape_decode(line[1:-1])[0].decode("ascii")
        return line.decode("raw-unicode-escape")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")[:100]
