"""The title line of an exported picture: which file, how it was planned, and how good the plan
is, so that a picture read on its own says what it shows."""

from __future__ import annotations

from slabscope.app.views.byte_axis import format_bytes


def export_title(session) -> str:
    """"file · algorithm · conflicts · slab · bound · gap" for the plan `session` shows."""
    graph, plan = session.graph, session.shown_plan
    name = session.path.name if session.path is not None else (graph.name if graph else "")
    if graph is None or plan is None:
        return f"{name} · no plan" if name else "no graph"
    parts = [name, plan.algorithm, f"{plan.conflict_model} conflicts",
             f"slab {format_bytes(plan.slab_bytes)}"]
    bound = session.lower_bound()
    if bound is not None:
        gap = plan.slab_bytes - bound.bytes
        share = gap / bound.bytes if bound.bytes else 0.0
        parts += [f"bound {format_bytes(bound.bytes)}", f"gap {format_bytes(gap)} ({share:.1%})"]
    if session.plan_stale:
        parts.append("out of date")
    return " · ".join(parts)
