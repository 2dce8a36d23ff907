"""A `torch.export` archive (`.pt2`) read as zip + JSON: the model's JSON is the one member read.

`torch.export.save` writes a zip. Since torch 2.8 its layout is `<root>/models/<model>.json` (the
ExportedProgram, in the schema of `torch/_export/serde/schema.py`) beside `<root>/data/weights/*`,
`<root>/data/constants/*` and `<root>/data/sample_inputs/*.pt` (raw blobs and `torch.save`
pickles); before 2.8 it was `serialized_exported_program.json` beside `serialized_state_dict.pt`.
Planning needs no weight's value, so no member but the model's JSON is ever opened: nothing in an
archive is unpickled, executed or extracted to disk. What is read is capped (the JSON member at
the text limit, streamed, whatever its header claims), and every refusal is one `PlanError` line.
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from ...support.errors import PlanError
from .input_limits import TEXT_BYTES_LIMIT, open_regular, quoted

# Weights make archives large, and are never read: only the size of the central directory counts.
ARCHIVE_BYTES_LIMIT = 1 << 44
# The model JSON is text like any graph file: read at most this much of it, whatever it claims.
JSON_BYTES_LIMIT = TEXT_BYTES_LIMIT
# A model with a weight per member has thousands of members, not millions.
MEMBERS_LIMIT = 1_000_000
# The serialization schema's major version this reader follows (torch bumps it on a break).
SCHEMA_MAJOR = 8
# Members that are archives of their own; torch.export never writes one under these names.
ARCHIVE_SUFFIXES = (".zip", ".pt2", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".jar", ".whl")

LEGACY_JSON = "serialized_exported_program.json"
_MODEL_JSON = re.compile(r"(?:[^/]+/)?models/([^/]+)\.json")
_CHUNK = 1 << 20
# What a damaged or hostile zip can make `zipfile` raise while reading.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
               OverflowError, struct.error, NotImplementedError, RuntimeError, zlib.error)


@dataclass(frozen=True)
class ExportArchive:
    """The ExportedProgram JSON of an archive (`program`), the member it came from, the
    archive's layout ("pt2" since torch 2.8, "legacy" before) and the schema version."""

    program: dict
    member: str
    layout: str
    schema_version: str


def read_export_archive(path) -> ExportArchive:
    """The exported program in the `.pt2` archive at `path`, read without unpickling or
    extracting anything; any problem is a one-line `PlanError` naming the file and the culprit."""
    path = Path(path)
    with open_regular(path, ARCHIVE_BYTES_LIMIT) as handle:
        head = handle.read(4)
        if head[:1] == b"\x80":
            raise PlanError(f"{path}: a pickle, not a torch.export archive (it is never "
                            f"unpickled; save the model with torch.export.save)")
        if head not in (b"PK\x03\x04", b"PK\x05\x06"):
            raise PlanError(f"{path}: not a zip archive, so not a torch.export .pt2 file")
        handle.seek(0)
        try:
            _check_directory(handle, path)
            with zipfile.ZipFile(handle) as archive:
                member, layout = _model_member(archive, path)
                data = _read_member(archive, member, path)
        except PlanError:
            raise
        except _ZIP_ERRORS as exc:
            raise PlanError(f"{path}: a damaged zip archive ({type(exc).__name__}: "
                            f"{_first_line(exc)})") from None
    where = f"{path}: {member}"
    if data[:1] == b"\x80":
        raise PlanError(f"{where} is a pickle, not JSON (it is never unpickled)")
    if data[:2] == b"PK":
        raise PlanError(f"{where} is a nested archive, not JSON (nested archives are not opened)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanError(f"{where}: not UTF-8 JSON (invalid byte at offset {exc.start:,})") from None
    program = _parse_program(text, where)
    if not isinstance(program, dict) or "graph_module" not in program:
        raise PlanError(f"{where}: not an exported program (no 'graph_module')")
    return ExportArchive(program, member, layout, _schema_version(program, where))


def _parse_program(text: str, where: str):
    """The model's JSON decoded. Not through `parse_json`: its per-object checks (nesting depth,
    digits, keys given twice) would triple the time a 10,000-node program takes, and here the
    decoder's own guards suffice: nesting deep enough to exhaust the stack is a RecursionError,
    an integer over 4,300 digits a ValueError, and every size is checked to fit 64 bits."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{where}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                        f"{exc.msg}") from None
    except RecursionError:
        raise PlanError(f"{where}: JSON nests too deep") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise PlanError(f"{where}: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"


def _check_directory(handle, path: Path) -> None:
    """Refuse a central directory with too many members before `zipfile` reads it all into
    memory (its end record says how many there are and how long it is)."""
    # zipfile's own parser of the end record (private, but the one that ZipFile then trusts).
    end = zipfile._EndRecData(handle)
    handle.seek(0)
    if end is None:
        return  # ZipFile raises BadZipFile for it, in the words of the caller
    entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
    if entries > MEMBERS_LIMIT or size > MEMBERS_LIMIT * 1024:
        raise PlanError(f"{path}: {entries:,} members in a {size:,}-byte directory is over the "
                        f"limit of {MEMBERS_LIMIT:,} members (not read)")


def _check_name(name: str, path: Path) -> None:
    """A PlanError for a member name that would escape a folder it were extracted to."""
    parts = re.split(r"[/\\]", name)
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts \
            or "\x00" in name:
        raise PlanError(f"{path}: member {quoted(name)} has an absolute or parent ('..') path; "
                        f"torch.export never writes one (nothing is extracted)")
    if name.lower().endswith(ARCHIVE_SUFFIXES):
        raise PlanError(f"{path}: member {quoted(name)} is a nested archive; torch.export never "
                        f"writes one (nested archives are not opened)")


def _model_member(archive: zipfile.ZipFile, path: Path) -> tuple[str, str]:
    """The member holding the model's JSON and the layout it belongs to, after every member's
    name has been checked."""
    infos = archive.infolist()
    if len(infos) > MEMBERS_LIMIT:
        raise PlanError(f"{path}: {len(infos):,} members is over the limit of {MEMBERS_LIMIT:,}")
    names = [info.filename for info in infos]
    for name in names:
        _check_name(name, path)
    models = {}
    for name in names:
        match = _MODEL_JSON.fullmatch(name)
        if match:
            models.setdefault(match.group(1), name)
    if models:  # torch >= 2.8; `torch.export.load` reads the program called "model"
        return models.get("model", models[min(models)]), "pt2"
    legacy = [n for n in names if n == LEGACY_JSON or n.endswith("/" + LEGACY_JSON)]
    if legacy:
        return min(legacy, key=len), "legacy"
    pickles = [n for n in names if n.endswith((".pkl", ".pt", ".pth", ".bin"))]
    if pickles:
        raise PlanError(f"{path}: no torch.export model JSON, only pickles such as "
                        f"{quoted(pickles[0])} (torch.save output? save with torch.export.save; "
                        f"pickles are never unpickled)")
    shown = ", ".join(quoted(n, 40) for n in names[:5]) or "none"
    raise PlanError(f"{path}: no torch.export model JSON (models/<model>.json or {LEGACY_JSON}); "
                    f"members: {shown}{' ...' if len(names) > 5 else ''}")


def _read_member(archive: zipfile.ZipFile, member: str, path: Path) -> bytes:
    """The member's bytes, streamed and capped at `JSON_BYTES_LIMIT` whatever its header says."""
    info = archive.getinfo(member)
    if info.file_size > JSON_BYTES_LIMIT:
        raise PlanError(f"{path}: {member} holds {info.file_size:,} bytes, over the "
                        f"{JSON_BYTES_LIMIT:,}-byte limit for a model's JSON (not read)")
    if info.flag_bits & 0x1:
        raise PlanError(f"{path}: {member} is encrypted")
    chunks, total = [], 0
    with archive.open(info) as stream:
        while chunk := stream.read(_CHUNK):
            total += len(chunk)
            if total > JSON_BYTES_LIMIT:
                raise PlanError(f"{path}: {member} inflates past the {JSON_BYTES_LIMIT:,}-byte "
                                f"limit for a model's JSON (a zip bomb?); stopped reading")
            chunks.append(chunk)
    return b"".join(chunks)


def _schema_version(program: dict, where: str) -> str:
    """`major.minor` of the program's serialization schema; a major other than `SCHEMA_MAJOR`
    is a PlanError naming it."""
    version = program.get("schema_version")
    if not isinstance(version, dict) or not all(isinstance(version.get(k), int)
                                                for k in ("major", "minor")):
        raise PlanError(f"{where}: no schema_version {{major, minor}}")
    text = f"{version['major']}.{version['minor']}"
    if version["major"] != SCHEMA_MAJOR:
        raise PlanError(f"{where}: schema version {text} is not one this reader knows "
                        f"(it reads {SCHEMA_MAJOR}.x)")
    return text
