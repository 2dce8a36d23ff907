"""A compiled pass over a pickle's bytes that proves it plain data within the reader's limits,
so that the stock C unpickler may build it.

`proves_plain(data, element_limit)` walks the opcodes without building a single object: it
models the stack, the marks and the memo as integers (a container is a node number, anything
else one atom), records which container holds which, and after STOP measures every container
as `restricted_pickle` does (itself, its atoms, and each held container's elements, so a part
shared through the memo or `DUP` counts once per reference; nesting depth; cycles). It accepts
only the opcodes `restricted_pickle` reads, memo indices up to the entries stored, lengths
within the file, integers of at most 16 bytes (under the 40-digit limit) and tuples nested
within `NESTING_LIMIT` as they are made (before one could be hashed).

Its model over-approximates the data, never under: a dict value replaced by a later SETITEM
still counts, and the C unpickler's stricter stack rules (nothing read below the last MARK) are
required. So a pickle it accepts is one the restricted reader accepts, and the stock unpickler
builds the same objects from it; whatever it cannot prove (every error, and the rare odd but
valid pickle) is left to `restricted_pickle`'s own reader, which gives the exact answer.
"""

from __future__ import annotations

import numpy as np

from ...support._numba import njit
from .input_limits import NESTING_LIMIT

# An integer of up to 16 bytes is under 2**127 < 10**40: within the 40-digit limit.
_LONG_BYTES = 16
# Protocol 0 lines longer than this are left to the reader (its own line limit).
_LINE_LIMIT = 1 << 20
_ATOM = -1  # a stack or memo entry that is not a container
_LIST, _DICT, _TUPLE = 0, 1, 2


@njit(cache=True)
def _grown(array):
    """`array`, full, copied into one twice its size (called only when full: returning an
    array costs reference counting)."""
    bigger = np.empty(2 * array.shape[0], array.dtype)
    bigger[:array.shape[0]] = array
    return bigger


@njit(cache=True)
def _uint(data, at, width):
    value = 0
    for k in range(width - 1, -1, -1):
        value = value << 8 | np.int64(data[at + k])
    return value


@njit(cache=True)
def _line_end(data, at, n):
    """The index of the newline ending the line at `at`, or -1."""
    stop = min(n, at + _LINE_LIMIT + 1)
    for k in range(at, stop):
        if data[k] == 10:
            return k
    return -1


@njit(cache=True)
def _integer_line(data, at, end, allow_l):
    """Whether `data[at:end]` is `-`? then 1 to 40 digits without a leading zero (then `L`
    for LONG)."""
    if allow_l and end > at and data[end - 1] == 76:  # "L"
        end -= 1
    if end > at and data[at] == 45:  # "-"
        at += 1
    if not 0 < end - at <= 40:
        return False
    if end - at > 1 and data[at] == 48 and not (end - at == 2 and data[at + 1] <= 49):
        return False  # the C unpickler reads INT "010" as octal; "00" and "01" are booleans
    for k in range(at, end):
        if not 48 <= data[k] <= 57:
            return False
    return True


@njit(cache=True)
def _utf8_text(data, at, end):
    """Whether data[at:end] decodes as UTF-8 with surrogates let through, as the unpicklers
    read a pickle's text ("utf-8", "surrogatepass")."""
    k = at
    while k < end:
        b = data[k]
        if b < 0x80:
            k += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, low, high = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, low, high = 2, 0xA0, 0xBF
        elif 0xE1 <= b <= 0xEF:  # ED A0-BF are surrogates, which "surrogatepass" accepts
            need, low, high = 2, 0x80, 0xBF
        elif b == 0xF0:
            need, low, high = 3, 0x90, 0xBF
        elif 0xF1 <= b <= 0xF3:
            need, low, high = 3, 0x80, 0xBF
        elif b == 0xF4:
            need, low, high = 3, 0x80, 0x8F
        else:
            return False
        if k + need >= end or not low <= data[k + 1] <= high:
            return False
        for j in range(k + 2, k + need + 1):
            if not 0x80 <= data[j] <= 0xBF:
                return False
        k += need + 1
    return True


@njit(cache=True)
def _counts(data):
    """Upper bounds on what `_scan` stores, from one pass that only decodes opcode lengths:
    opcodes (each pushes at most one entry, and adds at most one item to a container),
    containers made, memo stores and marks. Bounds wrong for a malformed pickle make `_scan`
    refuse it (it checks every store), never overflow."""
    n = data.shape[0]
    pos = 0
    ops = nodes = stores = marks = 0
    while pos < n:
        op = data[pos]
        pos += 1
        ops += 1
        if op == 0x68 or op == 0x71 or op == 0x4b or op == 0x80:  # BINGET BINPUT BININT1 PROTO
            pos += 1
            stores += op == 0x71
        elif op == 0x6a or op == 0x72 or op == 0x4a:  # LONG_BINGET, LONG_BINPUT, BININT
            pos += 4
            stores += op == 0x72
        elif op == 0x94:  # MEMOIZE
            stores += 1
        elif op == 0x28:  # MARK
            marks += 1
        elif op in (0x5d, 0x7d, 0x29, 0x85, 0x86, 0x87, 0x74, 0x6c, 0x64):
            nodes += 1
        elif op == 0x4d:  # BININT2
            pos += 2
        elif op == 0x47 or op == 0x95:  # BINFLOAT, FRAME
            pos += 8
        elif op in (0x8c, 0x43, 0x55, 0x8a):  # a one-byte length
            if pos >= n:
                break
            pos += 1 + np.int64(data[pos])
        elif op in (0x58, 0x42, 0x54, 0x8b, 0x8d, 0x8e):  # a four- or eight-byte length
            width = 8 if op in (0x8d, 0x8e) else 4
            if pos + width > n:
                break
            length = _uint(data, pos, width)
            if length < 0 or length > n:
                break
            pos += width + length
        elif op in (0x49, 0x4c, 0x46, 0x53, 0x56, 0x67, 0x70):  # protocol 0: a line
            stores += op == 0x70
            while pos < n and data[pos] != 10:
                pos += 1
            pos += 1
        elif op == 0x2e:  # STOP
            break
    return ops, nodes, stores, marks


@njit(cache=True)
def _scan(data, element_limit, nesting_limit):  # noqa: C901 - one loop over opcodes
    """True when the pickle in `data` is plain data within the limits (see the module)."""
    n = data.shape[0]
    ops, nodes, stores, nmarks_bound = _counts(data)
    if ops >= 1 << 31:  # node and memo numbers are 32-bit
        return False
    # Sized once from the counts: arrays that might be reallocated inside the loop would cost
    # reference counting on every opcode.
    stack = np.empty(ops + 1, np.int32)
    depth = 0  # entries on the stack
    marks = np.empty(nmarks_bound + 1, np.int64)
    nmarks = 0
    memo = np.empty(stores + 1, np.int32)
    nmemo = 0
    kind = np.empty(nodes + 1, np.int8)  # per node
    atoms = np.empty(nodes + 1, np.int64)  # per node: items that are not containers
    tuple_depth = np.empty(nodes + 1, np.int8)  # per tuple node, up to the limit + 1
    nnodes = 0
    parent = np.empty(ops + 1, np.int32)  # edges: parent holds child
    child = np.empty(ops + 1, np.int32)
    nedges = 0
    pos = 0
    while True:
        if pos >= n:
            return False  # no STOP: truncated
        op = data[pos]
        pos += 1
        fence = marks[nmarks - 1] if nmarks else 0
        push = -2  # -2: nothing to push; else the entry to push
        new_node = -1  # a container kind to make and push
        # The most frequent opcodes first: memo reads and stores are most of a snapshot's.
        if op == 0x68:  # BINGET
            if pos + 1 > n or data[pos] >= nmemo:
                return False
            push = memo[data[pos]]
            pos += 1
        elif op == 0x6a:  # LONG_BINGET
            if pos + 4 > n:
                return False
            index = _uint(data, pos, 4)
            pos += 4
            if index >= nmemo:
                return False
            push = memo[index]
        elif op == 0x80:  # PROTO
            if pos >= n or data[pos] > 5:
                return False
            pos += 1
        elif op == 0x95:  # FRAME
            if pos + 8 > n:
                return False
            length = _uint(data, pos, 8)
            pos += 8
            if length < 0 or length > n - pos:
                return False
        elif op == 0x2e:  # STOP
            if depth <= fence:
                return False
            break
        elif op == 0x28:  # MARK
            if nmarks == marks.shape[0]:
                return False  # past the counted bound: a malformed pickle
            marks[nmarks] = depth
            nmarks += 1
        elif op == 0x30:  # POP
            if nmarks and marks[nmarks - 1] == depth:
                nmarks -= 1
            elif depth <= fence:
                return False
            else:
                depth -= 1
        elif op == 0x31:  # POP_MARK
            if not nmarks:
                return False
            nmarks -= 1
            depth = marks[nmarks]
        elif op == 0x32:  # DUP
            if depth <= fence:
                return False
            push = stack[depth - 1]
        elif op in (0x4e, 0x88, 0x89):  # NONE, NEWTRUE, NEWFALSE
            push = _ATOM
        elif op in (0x4b, 0x4d, 0x4a, 0x47):  # BININT1, BININT2, BININT, BINFLOAT
            width = 1 if op == 0x4b else 2 if op == 0x4d else 4 if op == 0x4a else 8
            if pos + width > n:
                return False
            pos += width
            push = _ATOM
        elif op in (0x8a, 0x8b):  # LONG1, LONG4
            width = 1 if op == 0x8a else 4
            if pos + width > n:
                return False
            length = _uint(data, pos, width)
            pos += width
            if length > _LONG_BYTES or length > n - pos:
                return False
            pos += length
            push = _ATOM
        elif op in (0x8c, 0x58, 0x8d, 0x43, 0x42, 0x8e, 0x55, 0x54):
            # SHORT_BINUNICODE, BINUNICODE, BINUNICODE8, SHORT_BINBYTES, BINBYTES, BINBYTES8,
            # SHORT_BINSTRING, BINSTRING: a length, then that many bytes.
            width = 1 if op in (0x8c, 0x43, 0x55) else 8 if op in (0x8d, 0x8e) else 4
            if pos + width > n:
                return False
            length = _uint(data, pos, width)
            pos += width
            if length < 0 or length > n - pos or (op == 0x54 and length >= 1 << 31):
                return False
            if op in (0x8c, 0x58, 0x8d) and not _utf8_text(data, pos, pos + length):
                return False  # text the unpicklers refuse: left to the reader, which says so
            pos += length
            push = _ATOM
        elif op in (0x49, 0x4c, 0x46, 0x53, 0x56, 0x67, 0x70):
            # Protocol 0: INT, LONG, FLOAT, STRING, UNICODE, GET, PUT: a line each.
            end = _line_end(data, pos, n)
            if end < 0:
                return False
            start = pos
            pos = end + 1
            if op in (0x49, 0x4c):
                if not _integer_line(data, start, end, op == 0x4c):
                    return False
                push = _ATOM
            elif op in (0x67, 0x70):
                if not 0 < end - start <= 10:
                    return False
                index = 0
                for k in range(start, end):
                    if not 48 <= data[k] <= 57:
                        return False
                    index = index * 10 + np.int64(data[k] - 48)
                if op == 0x67:
                    if index >= nmemo:
                        return False
                    push = memo[index]
                else:
                    if depth <= fence or index > nmemo:
                        return False
                    if nmemo == memo.shape[0]:
                        return False  # past the counted bound: a malformed pickle
                    memo[index] = stack[depth - 1]
                    nmemo = max(nmemo, index + 1)
            else:
                push = _ATOM
        elif op in (0x71, 0x72, 0x94):  # BINPUT, LONG_BINPUT, MEMOIZE
            if op == 0x94:
                index = nmemo
            else:
                width = 1 if op == 0x71 else 4
                if pos + width > n:
                    return False
                index = _uint(data, pos, width)
                pos += width
            if depth <= fence or index > nmemo:
                return False
            if nmemo == memo.shape[0]:
                return False  # past the counted bound: a malformed pickle
            memo[index] = stack[depth - 1]
            nmemo = max(nmemo, index + 1)
        elif op == 0x5d:  # EMPTY_LIST
            new_node = _LIST
        elif op == 0x7d:  # EMPTY_DICT
            new_node = _DICT
        elif op in (0x29, 0x85, 0x86, 0x87, 0x74, 0x6c, 0x64):
            # EMPTY_TUPLE, TUPLE1-3, TUPLE, LIST, DICT: a container of the top items.
            if op in (0x74, 0x6c, 0x64):
                if not nmarks:
                    return False
                nmarks -= 1
                first = marks[nmarks]
            else:
                first = depth - (0 if op == 0x29 else op - 0x84)
                if first < fence:
                    return False
            if op == 0x64 and (depth - first) % 2:
                return False
            made = _TUPLE if op in (0x29, 0x85, 0x86, 0x87, 0x74) else _LIST if op == 0x6c \
                else _DICT
            if nnodes == kind.shape[0]:
                return False  # past the counted bound: a malformed pickle
            if nnodes == atoms.shape[0]:
                return False  # past the counted bound: a malformed pickle
            if nnodes == tuple_depth.shape[0]:
                return False  # past the counted bound: a malformed pickle
            node = nnodes
            nnodes += 1
            kind[node] = made
            atoms[node] = 0
            deepest = 0
            for k in range(first, depth):
                item = stack[k]
                if item == _ATOM:
                    atoms[node] += 1
                    continue
                if made == _DICT and (k - first) % 2 == 0 and kind[item] != _TUPLE:
                    return False  # an unhashable key
                if kind[item] == _TUPLE:
                    deepest = max(deepest, tuple_depth[item])
                if nedges == parent.shape[0]:
                    return False  # past the counted bound: a malformed pickle
                if nedges == child.shape[0]:
                    return False  # past the counted bound: a malformed pickle
                parent[nedges] = node
                child[nedges] = item
                nedges += 1
            tuple_depth[node] = 1 + deepest
            if made == _TUPLE and tuple_depth[node] > nesting_limit:
                return False  # refused before a dict could hash it
            depth = first
            push = node
        elif op in (0x61, 0x65, 0x73, 0x75):  # APPEND, APPENDS, SETITEM, SETITEMS
            if op == 0x61 or op == 0x73:
                first = depth - (1 if op == 0x61 else 2)
                if first - 1 < fence:
                    return False
            else:
                if not nmarks:
                    return False
                nmarks -= 1
                first = marks[nmarks]
                fence = marks[nmarks - 1] if nmarks else 0
                if first - 1 < fence:
                    return False
            target = stack[first - 1]
            want = _LIST if op in (0x61, 0x65) else _DICT
            if target == _ATOM or kind[target] != want or (want == _DICT and (depth - first) % 2):
                return False
            for k in range(first, depth):
                item = stack[k]
                if item == _ATOM:
                    atoms[target] += 1
                    continue
                if want == _DICT and (k - first) % 2 == 0 and kind[item] != _TUPLE:
                    return False  # an unhashable key
                if nedges == parent.shape[0]:
                    return False  # past the counted bound: a malformed pickle
                if nedges == child.shape[0]:
                    return False  # past the counted bound: a malformed pickle
                parent[nedges] = target
                child[nedges] = item
                nedges += 1
            depth = first
        else:
            return False  # objects, sets, buffers, or not an opcode: the reader says which
        if new_node >= 0:
            if nnodes == kind.shape[0]:
                return False  # past the counted bound: a malformed pickle
            if nnodes == atoms.shape[0]:
                return False  # past the counted bound: a malformed pickle
            if nnodes == tuple_depth.shape[0]:
                return False  # past the counted bound: a malformed pickle
            kind[nnodes] = new_node
            atoms[nnodes] = 0
            tuple_depth[nnodes] = 1
            push = nnodes
            nnodes += 1
        if push != -2:
            if depth == stack.shape[0]:
                return False  # past the counted bound: a malformed pickle
            stack[depth] = push
            depth += 1
    return _measure(nnodes, atoms, parent[:nedges], child[:nedges], element_limit, nesting_limit)


@njit(cache=True)
def _measure(nnodes, atoms, parent, child, element_limit, nesting_limit):
    """Whether every container's elements and depth are within the limits, with no cycle."""
    nedges = parent.shape[0]
    first = np.zeros(nnodes + 1, np.int64)  # the edges of node i: held[first[i]:first[i+1]]
    for e in range(nedges):
        first[parent[e] + 1] += 1
    for i in range(nnodes):
        first[i + 1] += first[i]
    held = np.empty(nedges, np.int64)
    fill = first[:nnodes].copy()
    for e in range(nedges):
        held[fill[parent[e]]] = child[e]
        fill[parent[e]] += 1
    total = np.zeros(nnodes, np.int64)
    depth = np.zeros(nnodes, np.int64)
    state = np.zeros(nnodes, np.int8)  # 0 not reached, 1 on the walk, 2 measured
    todo = np.empty(64, np.int64)
    cursor = np.empty(64, np.int64)
    for start in range(nnodes):
        if state[start]:
            continue
        todo[0] = start
        cursor[0] = first[start]
        state[start] = 1
        top = 1
        while top:
            node = todo[top - 1]
            e = cursor[top - 1]
            if e < first[node + 1]:
                cursor[top - 1] = e + 1
                item = held[e]
                if state[item] == 1:
                    return False  # a cycle
                if state[item] == 0:
                    if top >= nesting_limit + 1:
                        return False  # deeper than the limit, whatever lies below
                    if top == todo.shape[0]:
                        todo = _grown(todo)
                    if top == cursor.shape[0]:
                        cursor = _grown(cursor)
                    todo[top] = item
                    cursor[top] = first[item]
                    state[item] = 1
                    top += 1
                continue
            count = 1 + atoms[node]
            deepest = 0
            for k in range(first[node], first[node + 1]):
                count += total[held[k]]
                deepest = max(deepest, depth[held[k]])
                if count > element_limit:
                    return False
            if deepest + 1 > nesting_limit:
                return False
            total[node] = count
            depth[node] = deepest + 1
            state[node] = 2
            top -= 1
    return True


def proves_plain(data, element_limit: int) -> bool:
    """Whether the pickle in `data` (a bytes-like object) is plain data that the restricted
    reader accepts, with at most `element_limit` elements and nesting within `NESTING_LIMIT`."""
    return bool(_scan(np.frombuffer(data, np.uint8), element_limit, NESTING_LIMIT))
