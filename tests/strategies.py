"""Hypothesis strategies shared by the tests: random graphs to plan."""

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

