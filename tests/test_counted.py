"""Counts in words: one noun, singular or plural, as the panels and messages write them."""

from __future__ import annotations

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.support.text import counted


def test_counts_read_as_words():
    assert (counted(1, "buffer"), counted(0, "node"), counted(2048, "buffer")) == \
        ("1 buffer", "0 nodes", "2,048 buffers")


def test_a_one_buffer_graph_says_one_buffer(tmp_path, capsys):
    path = tmp_path / "one.json"
    path.write_text('{"nodes": ["a"], "buffers": [{"name": "x", "bytes": 8, "uses": ["a"]}]}')
    assert planner.load(path).buffers
    assert main(["plan", str(path)]) == 0
    assert "one: 1 buffer, 1 node, alignment" in capsys.readouterr().out
