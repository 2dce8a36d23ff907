"""Zip bombs and directory tricks in `.pt2` archives, built here at a small scale with the limits
scaled down to match: every one refused in one line, with memory bounded by the limit."""

from __future__ import annotations

import json
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.formats.safety import pt2_archive

MLP = Path(__file__).parent / "data" / "pt2" / "mlp.pt2"
MODEL = "mlp/models/model.json"
METHODS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def _archive(target: Path, model: bytes | None = None, method: int = zipfile.ZIP_DEFLATED,
             extra: dict | None = None) -> Path:
    """A copy of mlp.pt2, its model JSON replaced by `model` and written with `method`."""
    with zipfile.ZipFile(MLP) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = model if model is not None and info.filename == MODEL else source.read(info)
            out.writestr(info.filename, data, compress_type=method)
        for name, data in (extra or {}).items():
            out.writestr(name, data, compress_type=method)
    return target


def _refused(path: Path, capsys, *fragments: str) -> str:
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err and captured.out == "", err
    for fragment in fragments:
        assert fragment in err, err
    return err


@pytest.mark.parametrize("method", METHODS)
def test_every_method_reads_the_fixture_as_before(tmp_path, method):
    copy = _archive(tmp_path / "copy.pt2", method=method)
    assert planner.load(copy).buffers == planner.load(MLP).buffers


@pytest.mark.parametrize("method", METHODS)
def test_a_bomb_is_stopped_at_the_limit_with_memory_bounded_by_it(tmp_path, capsys,
                                                                  monkeypatch, method):
    # 4 MiB of zeros is 45 bytes of bzip2: zipfile's reader inflates all of it in one call.
    bomb = _archive(tmp_path / "bomb.pt2", bytes(4 << 20), method)
    monkeypatch.setattr(pt2_archive, "JSON_BYTES_LIMIT", 256 << 10)
    monkeypatch.setattr(pt2_archive, "_CHUNK", 64 << 10)
    with zipfile.ZipFile(bomb) as opened:  # a header telling the truth is refused unread
        assert opened.getinfo(MODEL).file_size == 4 << 20
    _refused(bomb, capsys, "4,194,304 bytes, over the 262,144-byte limit", "(not read)")
    # A header that lies small: the stream stops at the limit, holding no more than it.
    data = bytearray(bomb.read_bytes())
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(MODEL.encode()))
    data[central + 24:central + 28] = (100_000).to_bytes(4, "little")
    bomb.write_bytes(bytes(data))
    monkeypatch.setattr(pt2_archive, "JSON_BYTES_LIMIT", 200_000)
    tracemalloc.start()
    try:
        with pytest.raises(planner.PlanError, match="damaged zip|inflates past"):
            planner.load(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak:,} bytes held to refuse a 4 MiB member"


def test_a_member_inflating_past_the_limit_is_refused_mid_stream(tmp_path, capsys, monkeypatch):
    bomb = _archive(tmp_path / "bomb.pt2", b"[]," * (300 << 10), zipfile.ZIP_BZIP2)
    monkeypatch.setattr(pt2_archive, "_CHUNK", 16 << 10)
    # Past the declared-size check, the streamed count refuses it as it passes the limit.
    original = pt2_archive._read_member

    def declared_small(handle, info, path):
        monkeypatch.setattr(pt2_archive, "JSON_BYTES_LIMIT", 100_000)
        info.file_size = 50_000
        return original(handle, info, path)

    monkeypatch.setattr(pt2_archive, "_read_member", declared_small)
    with pytest.raises(planner.PlanError, match="inflates past the 50,000 bytes its header"):
        planner.load(bomb)


def test_json_that_would_take_too_much_to_decode_is_refused_before_decoding(tmp_path, capsys,
                                                                            monkeypatch):
    # `[],` takes 21 bytes of Python objects a byte of input: 1 MiB of it about 20 MiB.
    lists = b'{"graph_module": [' + b"[]," * ((1 << 20) // 3) + b"[]]}"
    bomb = _archive(tmp_path / "lists.pt2", lists, zipfile.ZIP_BZIP2)
    monkeypatch.setattr(pt2_archive, "DECODE_BYTES_LIMIT", 16 << 20)
    monkeypatch.setattr(pt2_archive.json, "loads", _never)
    _refused(bomb, capsys, "would take about", "over the 16,777,216-byte limit (not decoded)")
    # The real program is far under the estimate's limit.
    with zipfile.ZipFile(MLP) as archive:
        real = archive.read(MODEL)
    assert pt2_archive._decode_cost(real) < 20 * len(real)


def _never(*args, **kwargs):
    raise AssertionError("decoded")


def test_running_out_of_memory_while_decoding_is_one_line(tmp_path, capsys, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pt2_archive.json, "loads", exhausted)
    _refused(_archive(tmp_path / "a.pt2"), capsys, "out of memory decoding")


def test_a_member_name_given_twice_is_refused(tmp_path, capsys):
    target = tmp_path / "twice.pt2"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate it writes
        _archive(target, extra={MODEL: json.dumps({"other": 1}).encode()})
    _refused(target, capsys, f"member '{MODEL}' appears twice")


def test_a_name_with_a_nul_byte_is_refused_before_zipfile_cuts_it(tmp_path, capsys):
    target = _archive(tmp_path / "nul.pt2", extra={"mlp/extraZevil.json": b"{}"})
    target.write_bytes(target.read_bytes().replace(b"extraZevil", b"extra\x00evil"))
    _refused(target, capsys, "NUL byte in its name")


def test_an_end_record_that_understates_its_members_is_counted_before_zipfile_reads_them(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(pt2_archive, "MEMBERS_LIMIT", 10)
    many = _archive(tmp_path / "many.pt2", extra={f"mlp/data/weights/w{i}": b"" for i in range(30)})
    data = bytearray(many.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = (5).to_bytes(2, "little") * 2  # 5 members here and in all
    many.write_bytes(bytes(data))
    built = []
    monkeypatch.setattr(zipfile.ZipFile, "_RealGetContents", lambda self: built.append(1))
    _refused(many, capsys, "over 10 members in the directory (its end record says 5)")
    assert not built


def test_memory_running_out_anywhere_is_one_line_naming_the_input(tmp_path, capsys, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(planner, "plan", exhausted)
    err = _refused(MLP, capsys, f"{MLP}: ran out of memory", "docs/input_limits.md")
    assert err.startswith("slabscope: ")
