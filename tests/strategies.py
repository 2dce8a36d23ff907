"""Hypothesis strategies shared by the tests: random graphs to plan."""

import struct

from hypothesis import strategies as st

from slabscope import planner


@st.composite
def small_graphs(draw, max_nodes=8, max_buffers=9):
    """Random DAGs (edges only from lower to higher index) with a few buffers each."""
    n = draw(st.integers(1, max_nodes))
    names = [f"n{i}" for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    buffers = [{"name": f"b{b}", "bytes": draw(st.integers(0, 3000)),
                "uses": draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))}
               for b in range(draw(st.integers(1, max_buffers)))]
    perm = draw(st.permutations(range(n)))
    return planner.graph_from_dict({
        "alignment": draw(st.sampled_from([1, 16, 256])),
        "nodes": [names[i] for i in perm],
        "edges": [[names[i], names[j]] for i, j in edges],
        "buffers": buffers,
    })



@st.composite
def interval_graphs(draw, max_buffers=14):
    """A chain of steps with buffers live over random [first, last] ranges (a serial trace)."""
    steps = draw(st.integers(1, 8))
    names = [f"s{i}" for i in range(steps)]
    buffers = []
    for b in range(draw(st.integers(1, max_buffers))):
        first = draw(st.integers(0, steps - 1))
        last = draw(st.integers(first, steps - 1))
        buffers.append({"name": f"b{b}", "bytes": draw(st.integers(1, 64)),
                        "uses": list(dict.fromkeys([names[first], names[last]]))})
    return planner.graph_from_dict({"alignment": 1, "nodes": names,
                                    "edges": [[a, b] for a, b in zip(names, names[1:])],
                                    "buffers": buffers, "schedule": names})


# Opcodes as Hypothesis draws them: every structural opcode, memo reads and writes at small,
# large and absurd indices, and lengths that lie.
_INDEX = st.one_of(st.integers(0, 8), st.just(500_000_000), st.integers(0, 2**32 - 1))
PICKLE_OPCODES = st.one_of(
    st.sampled_from([b"(", b"]", b"}", b")", b"a", b"e", b"s", b"u", b"t", b"\x85", b"\x86",
                     b"\x87", b"2", b"0", b"1", b"\x94", b"N", b"\x88", b"\x89", b"l", b"d",
                     b".", b"K\x07", b"\x8c\x01x", b"C\x02ab", b"G" + struct.pack(">d", 1.5),
                     # protocol 0 lines, as written and as only a hand could write them
                     b"I5\n", b"I010\n", b"I01\n", b"L12L\n", b"F1.5\n", b"F1_0\n", b"S'a'\n",
                     b"Vb\n", b"g0\n", b"p0\n", b"p1\n", b"\x95\x05" + bytes(7)]),
    _INDEX.map(lambda i: b"j" + struct.pack("<I", i)),
    _INDEX.map(lambda i: b"r" + struct.pack("<I", i)),
    st.integers(0, 255).map(lambda i: b"h" + bytes([i])),
    st.integers(0, 255).map(lambda i: b"q" + bytes([i])),
    st.integers(0, 2**64 - 1).map(lambda n: b"\x8d" + struct.pack("<Q", n)),
    st.integers(0, 300).map(lambda n: b"\x8a" + bytes([min(n, 255)]) + b"\x01" * n),
    st.integers(-(2**31), 2**31 - 1).map(lambda n: b"\x8b" + struct.pack("<i", n)),
    st.binary(max_size=4),
)
# A block of opcodes repeated: how memo bombs and deep nesting are made.
PICKLE_PROGRAMS = st.lists(st.tuples(st.lists(PICKLE_OPCODES, max_size=8), st.integers(1, 300)),
                           max_size=12)

# Plain data as a PyTorch snapshot holds it: what pickle readers must read alike.
PLAIN_DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False)
    | st.text(max_size=20) | st.binary(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=5),
    max_leaves=40)
