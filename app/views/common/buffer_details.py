"""The hover text for one buffer: what the slab bar and lifetime map show under the pointer."""

from __future__ import annotations

from slabscope import planner
from slabscope.planner.model.bitset import members

from slabscope.app.views.common.byte_axis import format_bytes

LISTED_NAMES = 6  # longer lists of uses or conflicts end in "and N more"
STACK_LINES = 12  # the hover text lists this many frames of a snapshot's stack
STACK_INLINE = 2  # the one-line status shows this many


def conflicting_buffers(session, name: str) -> list[str]:
    """Names of the buffers `name` may be live with under the session's conflict model."""
    graph = session.graph
    model = planner.conflict_model(graph, session.conflicts)
    return [graph.buffers[j].name for j in members(model.conflict_mask(graph.buffer_index[name]))]


def buffer_facts(session, name: str) -> list[tuple[str, str]]:
    """(label, value) pairs for buffer `name`: kind, bytes, reserved, offset, uses, conflicts."""
    buffer = session.graph.buffer(name)
    plan = session.shown_plan  # the plan the views draw: search's best so far while it runs
    placement = plan.by_name.get(name) if plan is not None else None
    facts = [("kind", buffer.kind), ("bytes", f"{buffer.bytes:,} ({format_bytes(buffer.bytes)})")]
    if placement is not None:
        facts += [("reserved", f"{placement.reserved:,}"),
                  ("offset", f"{placement.offset:,}..{placement.end:,}")]
    facts += [("uses", _listed(buffer.uses)),
              ("conflicts", _listed(conflicting_buffers(session, name)))]
    return facts + allocator_facts(session.graph, name)


def allocator_facts(graph, name: str) -> list[tuple[str, str]]:
    """For a buffer read from a PyTorch snapshot: where the allocator put it, its stream, and
    whether it was allocated before recording began; nothing for other graphs."""
    trace = graph.allocator
    if trace is None or name not in trace.addresses:
        return []
    facts = [("PyTorch address", f"{trace.addresses[name]:#x}"),
             ("stream", str(trace.streams[name]))]
    if name in trace.before_recording:
        facts.append(("allocated", "before recording began"))
    return facts


def stack_frames(graph, name: str) -> tuple[str, ...]:
    """The stack that allocated buffer `name` of a PyTorch snapshot: Python frames (`file:line
    function`, innermost first), then its C++ frames folded into one entry; () otherwise."""
    return () if graph.allocator is None else graph.allocator.stacks.get(name, ())


def stack_files(graph, name: str) -> tuple[str, ...]:
    """The full paths of the files in buffer `name`'s stack (a PyTorch snapshot's), innermost
    first, each once; () otherwise."""
    trace = graph.allocator if graph is not None else None
    full = trace.full_stacks.get(name, ()) if trace is not None else ()
    paths = (entry.rsplit(":", 1)[0] for entry in full if not entry.startswith("… "))
    return tuple(dict.fromkeys(paths))


def describe_buffer(session, name: str) -> str:
    """Buffer `name` and its facts, one a line, then its stack if it has one (the tooltip)."""
    lines = [name] + [f"{label}: {value}" for label, value in buffer_facts(session, name)]
    frames = stack_frames(session.graph, name)
    files = stack_files(session.graph, name)
    if files:  # the stack below names files only: here are their full paths
        lines.append("files:")
        lines += [f"  {path}" for path in files[:STACK_LINES]]
    if frames:
        lines.append("stack:")
        lines += [f"  {frame}" for frame in frames[:STACK_LINES]]
        if len(frames) > STACK_LINES:
            lines.append(f"  and {len(frames) - STACK_LINES} more")
    return "\n".join(lines)


def describe_buffer_line(session, name: str) -> str:
    """Buffer `name` and its facts on one line, with its innermost frames (the status line)."""
    facts = buffer_facts(session, name)
    frames = stack_frames(session.graph, name)
    if frames:
        facts.append(("from", " < ".join(frames[:STACK_INLINE])
                      + (" < …" if len(frames) > STACK_INLINE else "")))
    return "  ·  ".join([name] + [f"{label} {value}" for label, value in facts])


def _listed(names) -> str:
    names = list(names)
    if not names:
        return "none"
    if len(names) > LISTED_NAMES:
        return ", ".join(names[:LISTED_NAMES]) + f" and {len(names) - LISTED_NAMES} more"
    return ", ".join(names)
