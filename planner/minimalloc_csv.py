"""MiniMalloc CSV: `id,lower,upper,size` rows (optional `alignment`, `offset`), the serial model.

Each row is a buffer live over the half-open interval `[lower, upper)` of one execution order.
It becomes a `Graph` whose nodes are a chain of time points: only the distinct `lower` and
`upper - 1` values (at most two per buffer), so a buffer's uses are the node at `lower` and the
node at `upper - 1`. On a chain the DAG model and the serial model agree; the serial one is the
cheap one (see `graph_file.default_conflicts`).
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .cancel import NEVER, CancelToken
from .errors import PlanError
from .graph import SIZE_LIMIT, Buffer, Graph, Node, align_up
from .atomic_write import write_atomic
from .input_limits import INTEGER_DIGITS_LIMIT, quoted, read_text
from .plan import Plan
from .serial_model import serial_schedule

REQUIRED_COLUMNS = ("id", "lower", "upper", "size")
OPTIONAL_COLUMNS = ("alignment", "offset")


def _read_rows(path: Path) -> tuple[list[str], list[list[str]], list[int]]:
    """The header (lower-cased, stripped), the data rows as text, and each row's line number."""
    text = read_text(path)  # a regular file of bounded size; a byte-order mark is dropped
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        numbered = [(reader.line_num, row) for row in reader if row]
    except csv.Error as exc:
        raise PlanError(f"{path}: not a readable CSV file: {exc}") from None
    if not numbered:
        raise PlanError(f"{path}: empty file; expected a header {','.join(REQUIRED_COLUMNS)}")
    lines, rows = [n for n, _ in numbered], [row for _, row in numbered]
    header = [c.strip().lower() for c in rows[0]]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise PlanError(f"{path}: header lacks column {missing[0]!r}; "
                        f"expected {','.join(REQUIRED_COLUMNS)}[,alignment][,offset]")
    for column in header:
        if column not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:
            raise PlanError(f"{path}: unknown column {column!r}; known: "
                            f"{', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}")
    if len(set(header)) < len(header):
        raise PlanError(f"{path}: a column appears twice in the header")
    return header, rows[1:], lines[1:]


def _integer(text: str, path: Path, line: int, column: str) -> int:
    digits = text.strip().removeprefix("-").removeprefix("+")
    if len(digits) > INTEGER_DIGITS_LIMIT:
        raise PlanError(f"{path}: line {line}: {column} has {len(digits):,} characters, over "
                        f"the {INTEGER_DIGITS_LIMIT}-digit limit")
    # int() also takes "1_000" and non-ASCII digits; MiniMalloc's integers are plain ASCII.
    if not (digits.isascii() and digits.isdigit()):
        raise PlanError(f"{path}: line {line}: {column} must be an integer, "
                        f"got {quoted(text.strip())}")
    return int(text)


def _parse_plain(path: Path):
    """What `_parse` returns, for the common file (no quotes, no offset column, integers that fit
    64 bits, nothing to report), by whole-column operations: a million rows in about a second.
    None for any other file; `_parse` then reads it row by row and names the first problem."""
    text = read_text(path)
    if '"' in text or "\r" in text:
        return None
    # Rows end at "\n" only, as the csv module reads them: str.splitlines would also break at
    # "\x0b", "\x1c", "\u2028" and others, splitting one row into two buffers.
    lines = [line for line in text.split("\n") if line]
    if not lines:
        return None
    header = [c.strip().lower() for c in lines[0].split(",")]
    if sorted(header) not in (sorted(REQUIRED_COLUMNS), sorted(REQUIRED_COLUMNS + ("alignment",))):
        return None
    rows = lines[1:]
    width = len(header)
    if any(line.count(",") != width - 1 for line in rows):
        return None
    fields = ",".join(rows).split(",")
    col = {name: fields[k::width] for k, name in enumerate(header)}
    ids = [name.strip() for name in col["id"]]
    numeric = [c for c in header if c != "id"]
    if any(max(map(len, col[c]), default=0) > INTEGER_DIGITS_LIMIT for c in numeric):
        return None
    numbers = "".join("".join(col[c]) for c in numeric)
    if "_" in numbers or not numbers.isascii():  # int() would take "1_000" and non-ASCII digits
        return None
    try:
        values = {c: np.array(list(map(int, col[c])), dtype=np.int64) for c in numeric}
    except (ValueError, OverflowError):
        return None
    lowers, uppers, sizes = values["lower"], values["upper"], values["size"]
    alignments = np.unique(values.get("alignment", np.ones(1, np.int64)))
    if "" in ids or len(set(ids)) < len(ids) or (uppers <= lowers).any() or (sizes < 0).any() \
            or len(alignments) > 1 or alignments[0] <= 0:
        return None
    return ids, lowers.tolist(), uppers.tolist(), sizes.tolist(), int(alignments[0]), {}


def _parse(path: Path):
    """Validated rows: ids, lowers, uppers, sizes, the alignment, and offsets by id."""
    plain = _parse_plain(path)
    if plain is not None:
        return plain
    header, rows, lines = _read_rows(path)
    width = len(header)
    for line, row in zip(lines, rows):
        if len(row) != width:
            raise PlanError(f"{path}: line {line}: expected {width} fields, got {len(row)}")
    columns = list(zip(*rows)) if rows else [()] * width
    col = dict(zip(header, columns))
    ids = [name.strip() for name in col["id"]]
    lowers, uppers, sizes = ([_integer(text, path, line, name) for line, text in
                              zip(lines, col[name])] for name in ("lower", "upper", "size"))
    seen: set[str] = set()
    for line, name, lower, upper, size in zip(lines, ids, lowers, uppers, sizes):
        if not name or name in seen:
            raise PlanError(f"{path}: line {line}: " + (f"duplicate id {name!r}" if name
                                                        else "empty id"))
        seen.add(name)
        if upper <= lower:
            raise PlanError(f"{path}: line {line}: buffer {name!r} has upper {upper} <= "
                            f"lower {lower}; it must be live for at least one step")
        if not 0 <= size <= SIZE_LIMIT:
            raise PlanError(f"{path}: line {line}: buffer {name!r}: size {size} is out of "
                            f"range [0, {SIZE_LIMIT}]")
    alignment = 1
    if "alignment" in col:
        alignments = {_integer(t, path, line, "alignment")
                      for line, t in zip(lines, col["alignment"])}
        if len(alignments) > 1:
            raise PlanError(f"{path}: buffers have different alignments {sorted(alignments)}; "
                            f"a slab has one alignment")
        alignment = alignments.pop() if alignments else 1
        if not 0 < alignment <= SIZE_LIMIT:
            raise PlanError(f"{path}: alignment must be in [1, {SIZE_LIMIT}], got {alignment}")
    for line, name, size in zip(lines, ids, sizes):
        try:
            align_up(size, alignment)
        except PlanError as exc:
            raise PlanError(f"{path}: line {line}: buffer {name!r}: {exc}") from None
    offsets = {}
    for line, name, text in zip(lines, ids, col.get("offset", ())):
        if text.strip():
            offsets[name] = _integer(text, path, line, "offset")
            if not 0 <= offsets[name] <= SIZE_LIMIT:
                raise PlanError(f"{path}: line {line}: offset {offsets[name]} is out of range "
                                f"[0, {SIZE_LIMIT}]")
    return ids, lowers, uppers, sizes, alignment, offsets


class TimeAttrs(Mapping):
    """A time node's `attrs`, `{"time": t}`, as one small object: files have a million nodes."""

    __slots__ = ("time",)

    def __init__(self, time: int):
        self.time = time

    def __getitem__(self, key):
        if key == "time":
            return self.time
        raise KeyError(key)

    def __iter__(self):
        return iter(("time",))

    def __len__(self) -> int:
        return 1


def load_minimalloc_csv(path, *, cancel: CancelToken = NEVER) -> Graph:
    """Read a MiniMalloc CSV into a `Graph` for the serial model (alignment 1 unless a column says).

    Rows stay in file order as the request order; an `offset` column is ignored, with a warning.
    Time is compressed to the distinct `lower` and `upper - 1` values, each a node of one chain
    (`schedule` lists them all); a node's `attrs` keep its original `time`, so
    `write_minimalloc_csv` writes the same `lower`/`upper` back. The graph is built directly,
    without a closure or per-row checks when the file is plain (see `_parse_plain`): a million
    rows load in a few seconds.
    """
    path = Path(path)
    ids, lowers, uppers, sizes, alignment, offsets = _parse(path)
    if offsets:
        # The file's offsets are another planner's answer; they are neither used nor checked.
        warnings.warn(f"{path}: the offset column ({len(offsets):,} rows) is ignored: "
                      f"Slabscope places the buffers itself and does not check those offsets",
                      stacklevel=2)
    cancel.report("load", 0.5)
    times = sorted(set(lowers).union(u - 1 for u in uppers))
    node_names = [f"t{t}" for t in times]
    by_time = dict(zip(times, node_names))
    nodes = tuple([Node(n, attrs=TimeAttrs(t)) for n, t in zip(node_names, times)])
    cancel.report("load", 0.75)
    buffers = tuple(
        Buffer(name, size, (by_time[lo],) if lo == hi - 1 else (by_time[lo], by_time[hi - 1]))
        for name, lo, hi, size in zip(ids, lowers, uppers, sizes)
    )
    names = tuple(node_names)
    return Graph(nodes=nodes, edges=tuple(zip(names, names[1:])), buffers=buffers,
                 alignment=alignment, order=tuple(ids), schedule=names, name=path.stem)


def read_minimalloc_offsets(path) -> dict[str, int]:
    """The `offset` column of a MiniMalloc CSV as buffer name -> offset (rows with none skipped)."""
    return _parse(Path(path))[5]


def _node_times(graph: Graph) -> list[int]:
    """Per node index, its time: the `time` attribute when every scheduled node has one (a
    loaded MiniMalloc file), else its position in the schedule or a topological order. A
    schedule that is not a topological order of every node is a PlanError: intervals over it
    would let buffers the plan keeps apart overlap in time."""
    sequence = serial_schedule(graph)
    times = [-1] * len(graph.nodes)
    original = [graph.nodes[i].attrs.get("time") for i in sequence]
    keep = all(isinstance(t, int) for t in original)
    for position, i in enumerate(sequence):
        times[i] = original[position] if keep else position
    return times


def write_minimalloc_csv(graph: Graph, plan: Plan, path) -> None:
    """Write `plan` on `graph` as a MiniMalloc CSV with an `offset` column, rows in request order.

    A buffer lives from its first to its last use in the graph's schedule (or a topological
    order when it has none): `lower` is its first use's time, `upper` one past its last. Any
    topological order keeps every pair the DAG model lets share bytes apart in time, so a
    DAG-model plan is also valid for the written intervals. An `alignment` column is written when
    the graph's alignment is not 1.
    """
    times = _node_times(graph)
    header = ["id", "lower", "upper", "size"]
    if graph.alignment != 1:
        header.append("alignment")
    header.append("offset")
    lines = [",".join(header)]
    for placement in plan.placements:
        index = graph.buffer_index.get(placement.name)
        if index is None:
            raise PlanError(f"plan places unknown buffer {quoted(placement.name)}")
        _check_writable_id(placement.name)
        uses = [times[u] for u in graph.use_indices[index]]
        row = [_csv_field(placement.name), str(min(uses)), str(max(uses) + 1),
               str(placement.bytes)]
        if graph.alignment != 1:
            row.append(str(graph.alignment))
        row.append(str(placement.offset))
        lines.append(",".join(row))
    write_atomic(path, "\n".join(lines) + "\n", "CSV")


def _csv_field(name: str) -> str:
    """`name` quoted where the reader needs it: a comma, a quote, or either line break (the csv
    module's writer leaves a lone "\r" bare, which its reader then takes for a row's end)."""
    if any(c in name for c in ',"\r\n'):
        return '"' + name.replace('"', '""') + '"'
    return name


def _check_writable_id(name: str) -> None:
    """A PlanError unless `name` reads back from a CSV id as itself: the reader strips the
    spaces around ids, and a file is UTF-8."""
    if not name or name != name.strip():
        raise PlanError(f"buffer name {quoted(name)} cannot be written as a CSV id: "
                        f"a CSV id has no spaces around it")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise PlanError(f"buffer name {quoted(name)} cannot be written as a CSV id: "
                        f"it is not valid Unicode text") from None
