"""A `torch.export` archive (`.pt2`) read as zip + JSON: the model's JSON is the one member read.

`torch.export.save` writes a zip. Since torch 2.8 its layout is `<root>/models/<model>.json` (the
ExportedProgram, in the schema of `torch/_export/serde/schema.py`) beside `<root>/data/weights/*`,
`<root>/data/constants/*` and `<root>/data/sample_inputs/*.pt` (raw blobs and `torch.save`
pickles); before 2.8 it was `serialized_exported_program.json` beside `serialized_state_dict.pt`.
Planning needs no weight's value, so no member but the model's JSON is ever opened: nothing in an
archive is unpickled, executed or extracted to disk. What is read is capped: the directory by its
member count, counted before `zipfile` builds it; the model's JSON by its declared size, then by
the bytes it inflates to, streamed in bounded pieces for every method `zipfile` accepts (stored,
deflate, bzip2, lzma), then by an estimate of what decoding it would take. Every refusal is one
`PlanError` line.
"""

from __future__ import annotations

import bz2
import itertools
import json
import lzma
import re
import struct
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from ...support.errors import PlanError
from .input_limits import open_regular, quoted

# Weights make archives large, and are never read: only the size of the central directory counts.
ARCHIVE_BYTES_LIMIT = 1 << 44
# A real model's JSON takes 1-5 KB a node with its metadata: 128 MiB holds 25,000+ nodes, and a
# member inflating past it is a bomb (read streamed, never held past the cap).
JSON_BYTES_LIMIT = 128 << 20
# What decoding the JSON may take in Python objects (estimated before decoding, see
# `_decode_cost`): a list costs 56 bytes for the 3 of `[],`, so bytes alone do not bound it.
DECODE_BYTES_LIMIT = 1 << 30
# A model with a weight per member has hundreds or thousands of members; `zipfile` spends about
# 650 bytes on each, so 100,000 stay under 70 MB.
MEMBERS_LIMIT = 100_000
# The central directory is read whole to count its records: at most 1 KiB a member.
DIRECTORY_BYTES_LIMIT = MEMBERS_LIMIT * 1024
# The serialization schema's major version this reader follows (torch bumps it on a break).
SCHEMA_MAJOR = 8
# Members that are archives of their own; torch.export never writes one under these names.
ARCHIVE_SUFFIXES = (".zip", ".pt2", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".7z", ".jar", ".whl")

LEGACY_JSON = "serialized_exported_program.json"
_MODEL_JSON = re.compile(r"(?:[^/]+/)?models/([^/]+)\.json")
_CHUNK = 1 << 20  # the most one decompression step may give
_RAW_CHUNK = 1 << 16  # compressed bytes read at a time
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
            zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
# What a damaged or hostile zip can make `zipfile` raise while reading.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
               OverflowError, struct.error, NotImplementedError, RuntimeError, zlib.error,
               lzma.LZMAError)


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
                data = _read_member(handle, archive.getinfo(member), path)
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
    cost = _decode_cost(data)
    if cost > DECODE_BYTES_LIMIT:
        raise PlanError(f"{where}: decoding its {len(data):,} bytes of JSON would take about "
                        f"{cost:,} bytes, over the {DECODE_BYTES_LIMIT:,}-byte limit (not decoded)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanError(f"{where}: not UTF-8 JSON (invalid byte at offset {exc.start:,})") from None
    except MemoryError:
        raise PlanError(f"{where}: out of memory decoding {len(data):,} bytes of JSON") from None
    del data  # the text and the objects are what the decoder needs from here
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
    except ValueError:  # an integer past Python's digit limit (its message names a knob)
        raise PlanError(f"{where}: an integer of over {sys.get_int_max_str_digits():,} digits; "
                        f"a size, an offset or a count has at most 20") from None
    except MemoryError:
        raise PlanError(f"{where}: out of memory decoding {len(text):,} characters of JSON "
                        f"(under the {DECODE_BYTES_LIMIT:,}-byte estimate)") from None


def _decode_cost(data: bytes) -> int:
    """An upper estimate of the bytes `json.loads` spends on `data`: the text at up to 4 bytes
    a character, about 96 bytes per list or object and 32 per item (within 1.5x of what real
    programs take; `[],` repeated takes 21 bytes a byte of input)."""
    containers = data.count(b"[") + data.count(b"{")
    items = data.count(b",") + data.count(b":")
    return 4 * len(data) + 96 * containers + 32 * items


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no detail"


def _check_directory(handle, path: Path) -> None:
    """Refuse a central directory with too many members, a name with a NUL byte or a name given
    twice, before `zipfile` reads it into memory: its records are counted here, since the end
    record's count can lie, and `zipfile` would cut a name at its NUL and keep the last copy."""
    # zipfile's own parser of the end record (private, but the one that ZipFile then trusts).
    end = zipfile._EndRecData(handle)
    handle.seek(0)
    if end is None:
        return  # ZipFile raises BadZipFile for it, in the words of the caller
    entries, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
    if entries > MEMBERS_LIMIT or size > DIRECTORY_BYTES_LIMIT:
        raise PlanError(f"{path}: {entries:,} members in a {size:,}-byte directory is over the "
                        f"limit of {MEMBERS_LIMIT:,} members (not read)")
    # Where ZipFile will look for the directory (data may precede the archive).
    start = end[zipfile._ECD_LOCATION] - size
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
        start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
    if start < 0:
        return
    handle.seek(start)
    directory = handle.read(size)
    handle.seek(0)
    seen: set[str] = set()
    at = 0
    while at + 46 <= len(directory) and directory[at:at + 4] == b"PK\x01\x02":
        flags, = struct.unpack_from("<H", directory, at + 8)
        name_length, extra, comment = struct.unpack_from("<3H", directory, at + 28)
        raw = directory[at + 46:at + 46 + name_length]
        name = raw.decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
        if b"\x00" in raw:
            raise PlanError(f"{path}: member {quoted(name)} has a NUL byte in its name; "
                            f"torch.export never writes one")
        if name in seen:
            raise PlanError(f"{path}: member {quoted(name)} appears twice; tools differ on which "
                            f"copy they read, so the archive is ambiguous")
        seen.add(name)
        if len(seen) > MEMBERS_LIMIT:
            raise PlanError(f"{path}: over {MEMBERS_LIMIT:,} members in the directory (its end "
                            f"record says {entries:,}); over the limit (not read)")
        at += 46 + name_length + extra + comment


def _check_name(name: str, path: Path) -> None:
    """A PlanError for a member name that would escape a folder it were extracted to."""
    parts = re.split(r"[/\\]", name)
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
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


def _read_member(handle, info: zipfile.ZipInfo, path: Path) -> bytes:
    """The member's bytes, refused unread when its header declares more than `JSON_BYTES_LIMIT`,
    then inflated in pieces of at most `_CHUNK` bytes and refused as soon as they pass the limit
    or the declared size, so memory stays within the limit whatever the method. (zipfile's own
    reader hands bzip2 and lzma a whole read to inflate at once: 15 KB of bzip2 is 300 MiB.)"""
    member = info.filename
    if info.file_size > JSON_BYTES_LIMIT:
        raise PlanError(f"{path}: {member} holds {info.file_size:,} bytes, over the "
                        f"{JSON_BYTES_LIMIT:,}-byte limit for a model's JSON (not read)")
    if info.flag_bits & 0x1:
        raise PlanError(f"{path}: {member} is encrypted")
    if info.compress_type not in _METHODS:
        raise PlanError(f"{path}: {member} uses compression method {info.compress_type}, which "
                        f"torch.export never writes (it reads {', '.join(_METHODS.values())})")
    handle.seek(info.header_offset)
    header = handle.read(zipfile.sizeFileHeader)
    if len(header) != zipfile.sizeFileHeader or header[:4] != zipfile.stringFileHeader:
        raise zipfile.BadZipFile(f"bad local header for {member}")
    fields = struct.unpack(zipfile.structFileHeader, header)
    local_name = handle.read(fields[zipfile._FH_FILENAME_LENGTH])
    if local_name != info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437",
                                               errors="replace"):
        raise zipfile.BadZipFile(f"file name in directory and header differ for {member}")
    handle.seek(fields[zipfile._FH_EXTRA_FIELD_LENGTH], 1)
    out = bytearray()
    crc = 0
    limit = min(JSON_BYTES_LIMIT, info.file_size)
    for piece in _inflated(handle, info):
        out += piece
        crc = zlib.crc32(piece, crc)
        if len(out) > limit:
            if len(out) > JSON_BYTES_LIMIT:
                raise PlanError(f"{path}: {member} inflates past the {JSON_BYTES_LIMIT:,}-byte "
                                f"limit for a model's JSON (a zip bomb?); stopped reading")
            raise zipfile.BadZipFile(f"{member} inflates past the {info.file_size:,} bytes its "
                                     f"header declares")
    if len(out) != info.file_size or crc != info.CRC:
        raise zipfile.BadZipFile(f"bad CRC-32 or size for {member}")
    return bytes(out)


def _inflated(handle, info: zipfile.ZipInfo):
    """The member's data (the handle stands at its start) in pieces of at most `_CHUNK` bytes."""
    raw = _raw_chunks(handle, info.compress_size)
    if info.compress_type == zipfile.ZIP_STORED:
        yield from raw
        return
    if info.compress_type == zipfile.ZIP_DEFLATED:
        decompressor = zlib.decompressobj(-15)
    elif info.compress_type == zipfile.ZIP_BZIP2:
        decompressor = bz2.BZ2Decompressor()
    else:
        decompressor, rest = _lzma_decompressor(raw)
        raw = itertools.chain([rest], raw)
    zlib_like = info.compress_type == zipfile.ZIP_DEFLATED
    for data in raw:
        while not decompressor.eof:
            piece = decompressor.decompress(data, _CHUNK)
            yield piece
            # zlib hands back what it did not read; bz2 and lzma keep it and take b"" for more.
            data = decompressor.unconsumed_tail if zlib_like else b""
            if not data and (len(piece) < _CHUNK if zlib_like else decompressor.needs_input):
                break
    if not decompressor.eof:
        raise EOFError(f"compressed data of {info.filename} ends early")


def _raw_chunks(handle, size: int):
    """`size` bytes from `handle`, in pieces of at most `_RAW_CHUNK`."""
    while size > 0:
        chunk = handle.read(min(_RAW_CHUNK, size))
        if not chunk:
            raise EOFError("member data cut short")
        size -= len(chunk)
        yield chunk


def _lzma_decompressor(raw) -> tuple[lzma.LZMADecompressor, bytes]:
    """A raw LZMA1 decompressor set up from a zip member's header (2-byte version, 2-byte
    properties length, properties), read from the front of `raw`'s chunks, and the data that
    followed the header in the chunks read."""
    head = b""
    for chunk in raw:
        head += chunk
        if len(head) >= 4 and len(head) >= 4 + struct.unpack("<H", head[2:4])[0]:
            break
    if len(head) < 4:
        raise EOFError("lzma header cut short")
    size = 4 + struct.unpack("<H", head[2:4])[0]
    if len(head) < size:
        raise EOFError("lzma header cut short")
    options = lzma._decode_filter_properties(lzma.FILTER_LZMA1, head[4:size])
    # The dictionary is allocated whole (up to 4 GiB, as the header says); no match reaches
    # further back than the output, which stops at the limit, so it need not be larger.
    options["dict_size"] = max(4096, min(options["dict_size"], JSON_BYTES_LIMIT))
    decompressor = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[options])
    return decompressor, head[size:]


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
