"""MiniMalloc CSV: `id,lower,upper,size` rows (optional `alignment`, `offset`), the serial model.

Each row is a buffer live over the half-open interval `[lower, upper)` of one execution order.
It becomes a `Graph` whose nodes are a chain of time points: only the distinct `lower` and
`upper - 1` values (at most two per buffer), so a buffer's uses are the node at `lower` and the
node at `upper - 1`. On a chain the DAG model and the serial model agree; the serial one is the
cheap one (see `conflict_model.default_conflicts`).
"""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path

import numpy as np

from ..conflicts.serial_model import serial_schedule
from ..model.graph import SIZE_LIMIT, Graph, align_up
from ..model.intervals import distinct
from ..model.plan import Plan
from ..model.timeline_graph import timeline_graph
from ..support.atomic_write import write_atomic
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from .safety.input_limits import INTEGER_DIGITS_LIMIT, quoted, read_text

REQUIRED_COLUMNS = ("id", "lower", "upper", "size")
OPTIONAL_COLUMNS = ("alignment", "offset")

# Spaces on either side of a number that the whole-array reader strips; more go row by row.
_PADDING = 4

# Per byte: an ASCII space (as str.isspace has them) or part of a wider character, which may be
# one too; fields that begin or end with none of these need no stripping.
_SPACE_OR_WIDE = np.array([chr(b).isspace() or b >= 0x80 for b in range(256)])


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
    """What `_parse` returns, for the common file (no quotes, no offset column, integers of up
    to 18 digits, nothing to report), by whole-array operations on the file's bytes: a million
    rows in about a second, without a string per field. None for any other file; `_parse` then
    reads it row by row and names the first problem."""
    text = read_text(path)
    if '"' in text or "\r" in text:
        return None
    raw = text.encode("utf-8")
    data = np.frombuffer(raw, dtype=np.uint8)
    # Rows end at "\n" only, as the csv module reads them (str.splitlines would also break at
    # "\x0b", "\u2028" and others); empty lines are skipped, as it skips them.
    breaks = np.flatnonzero(data == ord("\n"))
    line_start = np.concatenate(([0], breaks + 1))
    line_end = np.concatenate((breaks, [len(data)]))
    kept = line_end > line_start
    line_start, line_end = line_start[kept], line_end[kept]
    if not len(line_start):
        return None
    header = [c.strip().lower() for c in raw[line_start[0]:line_end[0]].decode().split(",")]
    if sorted(header) not in (sorted(REQUIRED_COLUMNS), sorted(REQUIRED_COLUMNS + ("alignment",))):
        return None
    row_start, row_end = line_start[1:], line_end[1:]
    width = len(header)
    commas = np.flatnonzero(data == ord(","))
    commas = commas[commas > line_end[0]]
    if len(commas) != len(row_start) * (width - 1):
        return None
    # As many commas as rows need: each row has its share exactly when each share lies inside it.
    commas = commas.reshape(-1, width - 1)
    if len(commas) and ((commas[:, 0] < row_start).any() or (commas[:, -1] >= row_end).any()):
        return None

    def field(k: int) -> tuple[np.ndarray, np.ndarray]:  # where column k's fields start and end
        return (row_start if k == 0 else commas[:, k - 1] + 1,
                row_end if k == width - 1 else commas[:, k])

    ids = _texts(raw, *field(header.index("id")))
    values = {}
    for k, name in enumerate(header):
        if name != "id":
            values[name] = _digits(data, *field(k))
            if values[name] is None:
                return None
    lowers, uppers, sizes = values["lower"], values["upper"], values["size"]
    alignments = distinct(values["alignment"]) if "alignment" in values else np.ones(1, np.int64)
    alignments = alignments if len(alignments) else np.ones(1, np.int64)
    if "" in ids or len(set(ids)) < len(ids) or (uppers <= lowers).any() \
            or len(alignments) > 1 or alignments[0] <= 0:
        return None
    return ids, lowers, uppers, sizes, int(alignments[0]), {}


def _texts(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """The fields raw[starts[i]:ends[i]] (no newline inside), stripped, by one decode: the
    fields and the byte after each are cut out together, that byte made a newline."""
    if not len(starts):
        return []
    data = np.frombuffer(raw + b"\n", dtype=np.uint8)  # the last field may end the file
    marks = np.zeros(len(data) + 1, dtype=np.int8)
    marks[starts] += 1  # no two fields start, or end, at one byte
    marks[ends + 1] -= 1
    cut = data[np.cumsum(marks[:-1], dtype=np.int8).astype(bool)]
    cut[np.cumsum(ends - starts + 1) - 1] = ord("\n")
    fields = cut.tobytes().decode().split("\n")[:-1]
    if _SPACE_OR_WIDE[data[starts]].any() or _SPACE_OR_WIDE[data[np.maximum(ends, 1) - 1]].any():
        fields = [field.strip() for field in fields]  # some field may begin or end in a space
    return fields


def _digits(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The values of the fields data[starts[i]:ends[i]] as int64, where each is 1 to 18 ASCII
    digits between spaces (so none overflows); None where one is not."""
    starts, ends = starts.copy(), ends.copy()
    for _ in range(_PADDING):  # spaces around a number, as int() allows them
        lead = (starts < ends) & (data[np.minimum(starts, len(data) - 1)] == ord(" "))
        trail = (starts < ends) & (data[ends - 1] == ord(" "))
        if not (lead.any() or trail.any()):
            break
        starts += lead
        ends -= trail
    lengths = ends - starts
    if len(lengths) and (lengths.min() < 1 or lengths.max() > 18):
        return None
    values = np.zeros(len(starts), dtype=np.int64)
    for place in range(int(lengths.max(initial=0))):
        active = lengths > place
        digit = data[np.where(active, starts + place, 0)].astype(np.int64) - ord("0")
        if (active & ((digit < 0) | (digit > 9))).any():
            return None
        values = np.where(active, values * 10 + digit, values)
    return values


def _parse(path: Path):
    """Validated rows: ids, lowers, uppers, sizes, the alignment, and offsets by id."""
    plain = _parse_plain(path)
    return plain if plain is not None else _parse_rows(path)


def _parse_rows(path: Path):
    """What `_parse` returns, row by row with the csv module, naming the first problem."""
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


def load_minimalloc_csv(path, *, cancel: CancelToken = NEVER) -> Graph:
    """Read a MiniMalloc CSV into a `Graph` for the serial model (alignment 1 unless a column says).

    Rows stay in file order as the request order; an `offset` column is ignored, with a warning.
    Time is compressed to the distinct `lower` and `upper - 1` values, each a node of one chain
    (`schedule` lists them all); a node's `attrs` keep its original `time`, so
    `write_minimalloc_csv` writes the same `lower`/`upper` back. The graph is a
    `TimelineGraph`: columns, with the nodes and buffers built only when something walks them;
    a plain file (see `_parse_plain`) is read by whole-column operations.
    """
    path = Path(path)
    ids, lowers, uppers, sizes, alignment, offsets = _parse(path)
    if offsets:
        # The file's offsets are another planner's answer; they are neither used nor checked.
        warnings.warn(f"{path}: the offset column ({len(offsets):,} rows) is ignored: "
                      f"Slabscope places the buffers itself and does not check those offsets",
                      stacklevel=2)
    cancel.report("load", 0.5)
    lowers, uppers, sizes = (_column(values) for values in (lowers, uppers, sizes))
    return timeline_graph(ids, lowers, uppers, sizes, alignment, path.stem)


def _column(values) -> np.ndarray:
    """Integers as int64, or as Python integers where one does not fit 64 bits."""
    if isinstance(values, np.ndarray):
        return values
    try:
        return np.asarray(values, dtype=np.int64).reshape(-1)
    except OverflowError:
        return np.asarray(values, dtype=object).reshape(-1)


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
