"""The hover text for one buffer: what the slab bar and lifetime map show under the pointer."""

from __future__ import annotations

import planner
from planner.bitset import members

from app.views.byte_axis import format_bytes

LISTED_NAMES = 6  # longer lists of uses or conflicts end in "and N more"


def conflicting_buffers(session, name: str) -> list[str]:
    """Names of the buffers `name` may be live with under the session's conflict model."""
    graph = session.graph
    model = planner.conflict_model(graph, session.conflicts)
    return [graph.buffers[j].name for j in members(model.conflict_mask(graph.buffer_index[name]))]


def buffer_facts(session, name: str) -> list[tuple[str, str]]:
    """(label, value) pairs for buffer `name`: kind, bytes, reserved, offset, uses, conflicts."""
    buffer = session.graph.buffer(name)
    placement = session.plan.by_name.get(name) if session.plan is not None else None
    facts = [("kind", buffer.kind), ("bytes", f"{buffer.bytes:,} ({format_bytes(buffer.bytes)})")]
    if placement is not None:
        facts += [("reserved", f"{placement.reserved:,}"),
                  ("offset", f"{placement.offset:,}..{placement.end:,}")]
    facts += [("uses", _listed(buffer.uses)),
              ("conflicts", _listed(conflicting_buffers(session, name)))]
    return facts


def describe_buffer(session, name: str) -> str:
    """Buffer `name` and its facts, one a line (the tooltip)."""
    return "\n".join([name] + [f"{label}: {value}" for label, value in buffer_facts(session, name)])


def describe_buffer_line(session, name: str) -> str:
    """Buffer `name` and its facts on one line (the status line under a view)."""
    return "  ·  ".join([name] + [f"{label} {value}" for label, value in buffer_facts(session, name)])


def _listed(names) -> str:
    names = list(names)
    if not names:
        return "none"
    if len(names) > LISTED_NAMES:
        return ", ".join(names[:LISTED_NAMES]) + f" and {len(names) - LISTED_NAMES} more"
    return ", ".join(names)
