"""The snapshot pre-scan proves a pickle's text only when it decodes as the unpicklers read it
("utf-8", "surrogatepass"); other text is left to the reader, which names the error."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings, strategies as st

from slabscope.planner.formats.safety.pickle_prescan import _utf8_text, proves_plain


def _decodes(raw: bytes) -> bool:
    try:
        raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=12)
       | st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_text_is_proven_exactly_when_it_decodes(raw):
    data = np.frombuffer(b"x" + raw + b"y", dtype=np.uint8)
    assert _utf8_text(data, 1, 1 + len(raw)) == _decodes(raw)


def test_a_string_of_invalid_utf8_is_not_proven():
    # Found by the property test of the pre-scan: BINUNICODE8 of 9 bytes starting 0x8d.
    data = b"\x8d" + struct.pack("<Q", 9) + b"\x8d" + struct.pack("<Q", 0) + b"."
    assert not proves_plain(data, 1000)
    assert proves_plain(b"\x8c\x02\xc3\xa9.", 1000)  # "é" as SHORT_BINUNICODE
